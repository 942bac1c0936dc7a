# Hostile option values and huge but valid configs through the CLI: each once
# crashed (SIGFPE), was undefined behaviour (caught by -fsanitize=undefined
# in the asan preset), allocated gigabytes or ran for minutes before its check.
# Each must end at once with exit code 2 and a message naming the value.
set(SMELT_LIMITS ${CMAKE_CURRENT_SOURCE_DIR}/data/limits)

# Option ranges, checked before any arithmetic on the value.
smelt_cli_test(limits.align_ffn EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --align-ffn 4611686018427387904
               STDOUT_EMPTY STDERR "--align-ffn = 4611686018427387904: must be at most 16777216\n")
smelt_cli_test(limits.align_hidden EXIT 2
               ARGS derive ${SMELT_EX}/tiny-moe.json --align-hidden 9223372036854775807 --hidden 2:100
               STDOUT_EMPTY STDERR "--align-hidden = 9223372036854775807: must be at most 16777216\n")
smelt_cli_test(limits.loops EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --loops 9223372036854775807
               STDOUT_EMPTY STDERR "--loops = 9223372036854775807: must be at most 1024\n")
smelt_cli_test(limits.depth EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --depth 9223372036854775807
               STDOUT_EMPTY STDERR "--depth = 9223372036854775807: must be between 1 and 65536\n")
smelt_cli_test(limits.span_nan EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --span nan%
               STDOUT_EMPTY STDERR "--span = \"nan%\": a fraction must lie in \\[0, 1\\]\n")
smelt_cli_test(limits.tolerance EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --tolerance 1e300
               STDOUT_EMPTY STDERR "--tolerance = 1e\\+300: must be at most 1000000\n")
smelt_cli_test(limits.sweep_loops EXIT 2 ARGS sweep ${SMELT_EX}/tiny-moe.json --loops 9223372036854775807
               STDOUT_EMPTY STDERR "--loops = 9223372036854775807: must be at most 1024\n")
smelt_cli_test(limits.sweep_spans EXIT 2 ARGS sweep ${SMELT_EX}/tiny-moe.json --spans nan
               STDOUT_EMPTY STDERR "--spans = nan: must be a fraction of the layers in \\[0, 1\\]")

# The search space is counted before it is listed, and counting stops above 2^20 geometries: heads 1..2^24 under
# the widest width ratio (2e6 head counts fit head_dim 32 at H 64; once listed pair by pair: quadratic, days), and
# a Baseline of 720720 heads with head_dim 2^24, whose own ratio widens the default range (once 503M geometries
# stored first: 75 s and 12.7 GB, or bad_alloc). Under the default ratio the same heads range is 30 geometries.
smelt_cli_test(limits.heads_range EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --heads 1:16777216
                                              --attention-ratio 0.000001:1000000
               STDOUT_EMPTY STDERR "search space too large: more than 1048576 attention geometries\n")
smelt_cli_test(limits.heads_range_default EXIT 0 ARGS derive ${SMELT_EX}/tiny-moe.json --heads 1:16777216
               STDOUT "configs counted of 240 in the space")
smelt_cli_test(limits.wide_heads EXIT 2 ARGS derive ${SMELT_LIMITS}/wide-heads.json
               STDOUT_EMPTY STDERR "search space too large: more than 1048576 attention geometries\n")
# 65536 layers looped 1024 times: 2^26 visits counted by multiplicity (once
# listed one by one: 1.2 GB and 40 s in a Debug build); 128 KV bytes a visit.
smelt_cli_test(limits.deep_loop EXIT 0 ARGS count ${SMELT_LIMITS}/deep-looped.json
               STDOUT "layers executed +67108864\n.*KV cache bytes/token +8.00 GiB\n")
smelt_cli_test(limits.deep_loop_bench EXIT 2 ARGS bench ${SMELT_LIMITS}/deep-looped.json --backend cpu --force
               STDOUT_EMPTY
               STDERR "the config executes 67108864 layers per token: the benchmark runs at most 1048576 block visits\n")
set_tests_properties(cli.limits.heads_range cli.limits.heads_range_default cli.limits.wide_heads cli.limits.deep_loop
                     cli.limits.deep_loop_bench
                     PROPERTIES TIMEOUT 20)

# bench bounds the activations of its plan (4512 bytes a token for tiny-moe,
# docs/bench.md) and the number of runs.
smelt_cli_test(limits.bench_tokens EXIT 2 ARGS bench ${SMELT_EX}/tiny-moe.json --backend cpu --tokens 1000000000
               STDOUT_EMPTY
               STDERR "the CPU reference needs up to about 4202.1 GiB for the activations of --tokens = 1000000000 \\(and 0.0 GiB for the weights\\); more than 8 GiB: use fewer --tokens or --force\n")
smelt_cli_test(limits.bench_runs EXIT 2 ARGS bench ${SMELT_EX}/tiny-moe.json --backend cpu --warmup 1001
               --repetitions 1000000000 STDOUT_EMPTY
               STDERR "--warmup = 1001: must be at most 1000\n.*--repetitions = 1000000000: must be at most 1000\n")
# Past the bounds (--force) an allocation that fails is still exit code 2, not
# "internal error" (exit 1). The address space is capped so that it fails at
# once; not under ASan, which reserves terabytes of it.
if(NOT SMELT_SANITIZE)
  foreach(case IN ITEMS "tokens|${SMELT_EX}/tiny-moe.json|--tokens|1000000000"
                        "weights|${SMELT_EX}/smelt-baseline-12l.json")
    string(REPLACE "|" ";" case "${case}")
    list(POP_FRONT case name)
    list(JOIN case " " args)
    add_test(NAME cli.limits.bench_force_${name}
             COMMAND ${CMAKE_COMMAND}
                     "-DCOMMAND=/bin/sh|-c|ulimit -v 800000 && exec $<TARGET_FILE:smelt-match> bench ${args} --backend cpu --force"
                     -DEXIT=2 -DSTDOUT_EMPTY=1 "-DSTDERR=out of memory: the cpu backend could not allocate what "
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect.cmake)
    # 8 s in Release on 2 idle cores (docs/development.md): a wide margin for a busy machine.
    set_tests_properties(cli.limits.bench_force_${name} PROPERTIES TIMEOUT 240)
  endforeach()
  # The measured step the same (it once ended in "internal error: std::bad_alloc", exit 1): 2^24 tokens of
  # tiny-moe's 64 wide hidden state alone are 4 GiB. 2 s of CPU in the debug build before the allocation fails.
  add_test(NAME cli.limits.bench_force_step
           COMMAND ${CMAKE_COMMAND}
                   "-DCOMMAND=/bin/sh|-c|ulimit -v 800000 && exec $<TARGET_FILE:smelt-match> bench step ${SMELT_EX}/tiny-moe.json --tokens 16777216 --force"
                   -DEXIT=2 -DSTDOUT_EMPTY=1
                   "-DSTDERR=^smelt-match: error: out of memory: the cpu backend could not allocate what tiny-moe needs for a training step at --tokens = 16777216 \\(about [0-9.]+ GiB: the parameters with their gradients and AdamW moments, and the activations\\): use fewer --tokens or a smaller config\n$"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect.cmake)
  set_tests_properties(cli.limits.bench_force_step PROPERTIES TIMEOUT 240)
endif()

# 32,768 spans over 65,536 layers: each layer finds its span by a search, not a scan of the spans (a scan took
# 30 s in the debug build, more under the sanitizers, where the search takes 5.6 s on a loaded machine: the limit
# leaves 5 times that); 65,536 x 2 = 131,072 visits.
set(many_spans ${CMAKE_CURRENT_BINARY_DIR}/many-spans.json)
add_test(NAME cli.limits.many_spans.setup COMMAND ${CMAKE_COMMAND} -DOUT=${many_spans}
         -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/many_spans.cmake)
set_tests_properties(cli.limits.many_spans.setup PROPERTIES FIXTURES_SETUP many_spans)
smelt_cli_test(limits.many_spans EXIT 0 ARGS count ${many_spans} STDOUT "layers executed +131072\n")
set_tests_properties(cli.limits.many_spans PROPERTIES FIXTURES_REQUIRED many_spans TIMEOUT 30)
