# What a newcomer meets first: the README's commands, the set-up and check
# scripts, and the CLI's answers to a typo.

# Every `smelt-match` line of README.md's Use block runs as written (readme_use.cmake).
add_test(NAME readme.use
  COMMAND ${CMAKE_COMMAND} -DREADME=${PROJECT_SOURCE_DIR}/README.md -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DBINARY=$<TARGET_FILE:smelt-match> -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/readme-use
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/readme_use.cmake)
set_tests_properties(readme.use PROPERTIES TIMEOUT 600)

# The scripts, with apt-get, dpkg-query, cmake and git stubbed (scripts/scripts_test.sh).
foreach(case setup_progress setup_failure format_without_git)
  add_test(NAME scripts.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/scripts_test.sh ${PROJECT_SOURCE_DIR} ${case})
endforeach()

# A typo names the nearest subcommand or long option (cli/suggest.cpp), exit 2, nothing on stdout.
smelt_cli_test(error.unknown_subcommand EXIT 2 ARGS cuont ${SMELT_EX}/tiny-moe.json STDOUT_EMPTY
               STDERR "^smelt-match: error: unknown subcommand 'cuont' \\(did you mean 'count'\\?\\)\n\\(run 'smelt-match --help' for usage\\)\n$")
smelt_cli_test(error.unknown_subcommand.far EXIT 2 ARGS xyz STDOUT_EMPTY
               STDERR "^smelt-match: error: unknown subcommand 'xyz': the subcommands are count, derive, sweep, bench, fit, frontier, memory, time, convert, export, anatomy\n")
# Named before the missing BASELINE that CLI11 would report instead.
smelt_cli_test(error.unknown_option EXIT 2 ARGS derive --jsn STDOUT_EMPTY
               STDERR "^smelt-match: error: derive: unknown option '--jsn' \\(did you mean '--json'\\?\\)\n\\(run 'smelt-match derive --help' for usage\\)\n$")
smelt_cli_test(error.unknown_option.value EXIT 2 ARGS count --contxt=8 ${SMELT_EX}/tiny-moe.json STDOUT_EMPTY
               STDERR "^smelt-match: error: count: unknown option '--contxt' \\(did you mean '--context'\\?\\)\n")
smelt_cli_test(error.unknown_option.far EXIT 2 ARGS fit --zzzzzzzz ${SMELT_DATA}/runs-chinchilla.csv STDOUT_EMPTY
               STDERR "^smelt-match: error: fit: unknown option '--zzzzzzzz'\n")
smelt_cli_test(error.unknown_option.short EXIT 2 ARGS count -q ${SMELT_EX}/tiny-moe.json STDOUT_EMPTY
               STDERR "^smelt-match: error: count: unknown option '-q'\n")

# --out says what it wrote where, on stderr, so that --json keeps stdout pure JSON.
set(NEWCOMER_OUT ${CMAKE_CURRENT_BINARY_DIR}/newcomer-out)
file(MAKE_DIRECTORY ${NEWCOMER_OUT})
smelt_cli_test(derive.out.says EXIT 0 ARGS derive --json ${SMELT_EX}/smelt-baseline-54b.json --out ${NEWCOMER_OUT}/derived.json
               STDOUT "^{\n  \"schema_version\": 3,.*}\n$"
               STDERR "^smelt-match: wrote the derived config 'smelt-baseline-54b-smelt' to [^\n]*newcomer-out/derived.json\n$")
smelt_cli_test(fit.out.says EXIT 0 ARGS fit --json ${SMELT_EX}/runs-dense-looped.csv --group-by arch --out ${NEWCOMER_OUT}/laws.json
               STDOUT "^{\n  \"schema_version\": 1,.*}\n$" STDERR "^smelt-match: wrote 2 laws to [^\n]*newcomer-out/laws.json\n$")
smelt_cli_test(convert.out.says EXIT 0 ARGS convert ${SMELT_EX}/hf/mixtral-8x7b.json --out ${NEWCOMER_OUT}/mixtral.json
               STDOUT_EMPTY STDERR "^smelt-match: wrote 'mixtral' as native JSON to [^\n]*newcomer-out/mixtral.json\n$")

# bench's FLOP table keeps its columns when counters are unavailable (the CPU
# backend never has them): "-" in the column, the reason below the table.
smelt_cli_test(bench.table.no_counters EXIT 0 ARGS bench ${SMELT_EX}/tiny-moe.json --backend cpu --repetitions 2
               STDOUT "\n  FLOPs            analytic              accounted  counters\n  all products  3.144 MFLOP  3.144 MFLOP \\(\\+0.000%\\)         -\n  weight GEMMs  3.088 MFLOP  3.088 MFLOP \\(\\+0.000%\\)         -\n  counters: unavailable: the CPU backend has no hardware counter reading\n  output vs reference: ")

# The CUDA stand-in headers (tests/kernels/emulated/cuda_stand_in/) in the unit tests, on every machine.
target_sources(smelt_tests PRIVATE kernels/emulated/cuda_stand_in_test.cpp)
