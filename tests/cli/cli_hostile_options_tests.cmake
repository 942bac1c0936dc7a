# Hostile hardware specs, option values and names through smelt-match (the findings of a hostile review): each
# once ended in exit 0 with a wrong figure, an option silently dropped or a raw name on the terminal. Each must end
# with exit 2 (bad input) or 4 (unreadable) and a message naming the value, or print the name escaped.
set(SMELT_HOSTILE_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data/hostile)

# An efficiency of 5e-324 (the smallest double) or 1e-300 lay in the old rule (0, 1]: `time` printed "inf s per
# token" and `derive --match time` matched NaN to NaN, "0.000% within the 1% tolerance", exit 0.
smelt_cli_test(hostile_options.denormal_efficiency EXIT 2
               ARGS time ${SMELT_EX}/tiny-moe.json --hardware ${SMELT_HOSTILE_DATA}/hw-denormal-efficiency.json
               STDOUT_EMPTY STDERR "hw-denormal-efficiency.json:\n  memory_efficiency = 5e-324: must be a fraction in \\[0.0001, 1\\]\n$")
smelt_cli_test(hostile_options.tiny_efficiency EXIT 2
               ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --hardware ${SMELT_HOSTILE_DATA}/hw-tiny-efficiency.json
                    --match time --micro-batch 16777216 --top 1 --no-relaxations
               STDOUT_EMPTY STDERR "hw-tiny-efficiency.json:\n  gemm_efficiency = 1e-300: must be a fraction in \\[0.0001, 1\\]\n$")

# derive and sweep check the time options whether or not a time is predicted, with the flag's name (they once
# exited 0 or 3 with "time per token: not shown: the Baseline: TimeOptions::imbalance = -5: ...").
foreach(command IN ITEMS derive sweep)
  smelt_cli_test(hostile_options.${command}_imbalance EXIT 2
                 ARGS ${command} ${SMELT_EX}/tiny-moe.json --hardware h100 --imbalance -5
                 STDOUT_EMPTY STDERR "error: --imbalance = -5: must be in \\[1, 1000000\\]: the most loaded expert over the mean\n$")
  smelt_cli_test(hostile_options.${command}_imbalance_nan EXIT 2 ARGS ${command} ${SMELT_EX}/tiny-moe.json --imbalance nan
                 STDOUT_EMPTY STDERR "error: --imbalance = nan: must be in \\[1, 1000000\\]")
  smelt_cli_test(hostile_options.${command}_decode EXIT 2
                 ARGS ${command} ${SMELT_EX}/tiny-moe.json --decode-batch 16777217 --decode-context 1073741825
                 STDOUT_EMPTY
                 STDERR "error: --decode-batch = 16777217: must be at most 16777216\n--decode-context = 1073741825: must be at most 1073741824\n$")
endforeach()

# A list's empty item is an error naming what was typed; "," alone once took the next argument as its value.
smelt_cli_test(hostile_options.match_comma EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --match , --top 3
               STDOUT_EMPTY STDERR "error: --match = \",\": has an empty item: separate the values by single commas\n$")
smelt_cli_test(hostile_options.match_empty_item EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --match flops,,kv
               STDOUT_EMPTY STDERR "error: --match = \"flops,,kv\": has an empty item")
smelt_cli_test(hostile_options.pp_layers_empty_item EXIT 2 ARGS memory ${SMELT_EX}/tiny-moe.json --pp 3 --pp-layers 1,,3
               STDOUT_EMPTY STDERR "error: --pp-layers = \"1,,3\": has an empty item")
smelt_cli_test(hostile_options.spans_empty_item EXIT 2 ARGS sweep ${SMELT_EX}/tiny-moe.json --spans 1,,0
               STDOUT_EMPTY STDERR "error: --spans = \"1,,0\": has an empty item")
# A value past 64 bits is named once, not also as an empty list ("--loops = []: must list at least one loop count").
smelt_cli_test(hostile_options.loops_past_64_bits EXIT 2 ARGS sweep ${SMELT_EX}/tiny-moe.json --loops 9223372036854775808
               STDOUT_EMPTY STDERR "error: --loops = \"9223372036854775808\": must be whole numbers separated by commas\n$")

# bench's modes are subcommands, each with only its own options: what belongs to another is unknown there, and
# what is given to bench before a subcommand is refused by name, never ignored (CalibrateOptions bounds the
# repetitions: each of the full grid takes about 2 s).
smelt_cli_test(hostile_options.calibrate_repetitions EXIT 2 ARGS bench calibrate --quick --repetitions 0
               STDOUT_EMPTY STDERR "error: --repetitions = 0: must be positive\n$")
smelt_cli_test(hostile_options.calibrate_repetitions_high EXIT 2 ARGS bench calibrate --quick --repetitions 1001
               STDOUT_EMPTY STDERR "error: --repetitions = 1001: must be at most 20\n$")
smelt_cli_test(hostile_options.calibrate_ignored EXIT 2 ARGS bench calibrate --quick --tokens 5 STDOUT_EMPTY
               STDERR "^smelt-match: error: bench calibrate: unknown option '--tokens'\n\\(run 'smelt-match bench calibrate --help' for usage\\)\n$")
smelt_cli_test(hostile_options.calibrate_given_before EXIT 2 ARGS bench --moe-only --seed 3 calibrate --quick
               STDOUT_EMPTY
               STDERR "^smelt-match: error: --moe-only: 'bench calibrate' has no such option \\(see 'bench calibrate --help'\\)\n--seed: 'bench calibrate' has no such option [^\n]*\n$")
smelt_cli_test(hostile_options.step_given_before EXIT 2 ARGS bench --tokens 64 ${SMELT_EX}/tiny-moe.json step
               STDOUT_EMPTY
               STDERR "^smelt-match: error: CONFIG = .*tiny-moe.json: give it after 'bench step'\n--tokens: give it after 'bench step'\n$")
smelt_cli_test(hostile_options.bench_out EXIT 2 ARGS bench ${SMELT_EX}/tiny-moe.json --out never-written.json
               STDOUT_EMPTY STDERR "error: bench: unknown option '--out'")
# A command line CMake cannot hold as a list (an empty argument, a pipe): run by bash, SCRIPT with no "|" (the
# separator of expect.cmake's command). smelt_shell_test(NAME EXIT code SCRIPT text [STDOUT re] [STDERR re])
function(smelt_shell_test name)
  cmake_parse_arguments(T "STDOUT_EMPTY" "EXIT;SCRIPT;STDOUT;STDERR" "" ${ARGN})
  set(defs -DEXIT=${T_EXIT})
  foreach(stream STDOUT STDERR)
    if(DEFINED T_${stream})
      list(APPEND defs "-D${stream}=${T_${stream}}")
    endif()
  endforeach()
  if(T_STDOUT_EMPTY)
    list(APPEND defs -DSTDOUT_EMPTY=1)
  endif()
  add_test(NAME cli.${name} COMMAND ${CMAKE_COMMAND} "-DCOMMAND=bash|-c|${T_SCRIPT}" ${defs}
                                    -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect.cmake)
endfunction()

foreach(command IN ITEMS "export --to hf" convert derive)
  string(REGEX REPLACE " .*" "" name ${command})
  smelt_shell_test(hostile_options.${name}_out_blank EXIT 2 STDOUT_EMPTY
                   SCRIPT "$<TARGET_FILE:smelt-match> ${command} ${SMELT_EX}/tiny-moe.json --out ''"
                   STDERR "^smelt-match: error: --out = \"\": must name a file\n$")
endforeach()

# --hardware reads any file that exists as CONFIG does: a directory is exit 4, a pipe is read (it was "neither a
# known device nor a spec file").
smelt_cli_test(hostile_options.hardware_directory EXIT 4 ARGS time ${SMELT_EX}/tiny-moe.json --hardware ${SMELT_HOSTILE_DATA}
               STDOUT_EMPTY STDERR "error: cannot read '[^']*/data/hostile': Is a directory\n$")
smelt_shell_test(hostile_options.hardware_pipe EXIT 0
                 SCRIPT "$<TARGET_FILE:smelt-match> time ${SMELT_EX}/tiny-moe.json --hardware <(cat ${PROJECT_SOURCE_DIR}/data/hardware/h100.json)"
                 STDOUT "^tiny-moe on h100 \\(NVIDIA H100")

# Names with a newline and escape sequences are printed escaped in text output, and cut as every name is (the
# files keep them whole): the 62 bytes of name-escapes.json's name are 71 escaped.
set(escaped "tiny\\\\x0asmelt-match: wrote the derived config to /etc/passwd")
set(cut "${escaped}\\\\x1b\\.\\.\\. \\(62 bytes\\)")
smelt_cli_test(hostile_options.name_count EXIT 0 ARGS count ${SMELT_HOSTILE_DATA}/name-escapes.json
               STDOUT "^ +${escaped}\\.\\.\\.\n")
smelt_cli_test(hostile_options.name_memory EXIT 0 ARGS memory ${SMELT_HOSTILE_DATA}/name-escapes.json
               STDOUT "^${cut}: training memory per GPU")
smelt_cli_test(hostile_options.name_time EXIT 0
               ARGS time ${SMELT_HOSTILE_DATA}/name-escapes.json --hardware ${SMELT_HOSTILE_DATA}/hw-name-escapes.json
               STDOUT "^${cut} on h100\\\\x0aFAKE LINE: training step: 0 s per token\\\\x1b\\[2J \\(desc\\\\x0d\\\\x1b\\[31mred, [^\n]*\n.*\nassumes h100\\\\x0aFAKE LINE")
smelt_cli_test(hostile_options.name_derive EXIT 0 ARGS derive ${SMELT_HOSTILE_DATA}/name-escapes.json --tolerance 50
               STDOUT "^${cut} -> ${escaped}\\\\x1b\\.\\.\\. \\(68 bytes\\): ")
set(convert_out ${CMAKE_CURRENT_BINARY_DIR}/hostile-options-convert.json)
smelt_cli_test(hostile_options.name_convert_out EXIT 0
               ARGS convert ${SMELT_HOSTILE_DATA}/name-escapes.json --out ${convert_out}
               STDOUT_EMPTY STDERR "^smelt-match: wrote '${cut}' as native JSON to [^\n]*\n$")
