# The error tree: structured violations, library messages in API names, the
# CLI's one flag table and exit-code mapping.
add_executable(smelt_errors_tests unit/util/library_names_test.cpp cli/exit_codes_test.cpp
                                  ${PROJECT_SOURCE_DIR}/cli/flag_names.cpp)
target_include_directories(smelt_errors_tests PRIVATE support ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/cli)
target_link_libraries(smelt_errors_tests PRIVATE smelt_test_main smelt::smelt smelt_util_internal ${SMELT_FMT} smelt_warnings)
target_compile_definitions(smelt_errors_tests PRIVATE SMELT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_compile_options(smelt_errors_tests PRIVATE $<$<CXX_COMPILER_ID:GNU,Clang>:-Wno-missing-field-initializers>)
smelt_optimise_tests(smelt_errors_tests)
smelt_unity_tests(smelt_errors_tests)
smelt_add_catch_tests(smelt_errors_tests)

# No string literal in the library names a flag (the unit tests above trigger the
# messages; this catches one no test triggers yet).
add_test(NAME errors.no_flag_literals COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/unit/util/no_flag_literals.sh
                                              ${PROJECT_SOURCE_DIR})

# The CLI shows the library's field names as flags: option errors, the reasons a
# result misses the tolerance (in the table and in --json), and list items.
smelt_cli_test(errors.flags.derive EXIT 2 STDOUT_EMPTY
               ARGS derive ${PROJECT_SOURCE_DIR}/examples/smelt-baseline-12l.json --align-head-dim 0 --min-head-dim 0
                    --top 0 --tolerance -1 --depth 0 --residual-scale 0
               STDERR "^smelt-match: error: --align-head-dim = 0: must be positive\n--min-head-dim = 0: must be positive\n--top = 0: must be positive\n--tolerance = -1: must be a percentage >= 0\n--depth = 0: must be between 1 and 65536\n--residual-scale = 0: must be a positive finite number\n$")
# In the attention box the solver searched before its shape rules, all three budgets miss, each with its reason.
set(smelt_old_box --keep-heads --kv-heads 1:2 --head-dim 32:128)
smelt_cli_test(errors.flags.why EXIT 3 ARGS derive ${PROJECT_SOURCE_DIR}/examples/smelt-baseline-12l.json ${smelt_old_box}
               STDERR "hidden size here \\(--align-hidden\\)\n"
               STDOUT "\nrelaxations, each solved alone \\(best first\\)\n  --align-head-dim 4  ")
smelt_cli_test(errors.flags.why_json EXIT 3 ARGS derive --json ${PROJECT_SOURCE_DIR}/examples/smelt-baseline-12l.json
               ${smelt_old_box}
               STDOUT "\"why\": \\[\n    \"kv_bytes_per_token: [^\n]*\n    \"flops_per_token: [^\n]*\\(--align-hidden\\)\",.*\"relaxations\": \\[\n    {\n      \"changes\": \\[\n        {\n          \"field\": \"--align-head-dim\",\n          \"value\": \"4\"")
smelt_cli_test(errors.list.context EXIT 2 STDOUT_EMPTY
               ARGS derive ${PROJECT_SOURCE_DIR}/examples/smelt-baseline-12l.json --context 4096,abc
               STDERR "^smelt-match: error: --context = \"abc\": must be token counts separated by commas\n$")
smelt_cli_test(errors.list.spaces EXIT 0
               ARGS sweep ${PROJECT_SOURCE_DIR}/examples/smelt-baseline-12l.json --spans "0.25, 50%" --loops 2
                    --depths " none" --csv
               STDOUT "^kind,[^\n]*\nloop,0.25,1,5-7,2,[^\n]*\nloop,0.5,1,4-9,2,[^\n]*\n$")

# The option structs' field tables against --help and docs/cli.md: the subcommands as smelt-match builds them.
add_executable(smelt_option_table_tests cli/option_table_test.cpp)
target_include_directories(smelt_option_table_tests PRIVATE support ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/cli)
target_link_libraries(smelt_option_table_tests PRIVATE smelt_test_main smelt_cli smelt::smelt ${SMELT_FMT} smelt_warnings)
target_compile_definitions(smelt_option_table_tests PRIVATE SMELT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
smelt_optimise_tests(smelt_option_table_tests)
smelt_add_catch_tests(smelt_option_table_tests)
