# smelt-match time: tiny-moe at 2 x 16 tokens on the shipped H100 spec (tests/unit/time/time_test.cpp has its
# ops by hand), its JSON, and bad input: exit 2 naming the field, value and rule, nothing on stdout.
smelt_cli_test(time.text EXIT 0 ARGS time ${SMELT_EX}/tiny-moe.json --hardware h100 --micro-batch 2 --seq 16
               STDOUT "tiny-moe on h100 \\(NVIDIA H100 SXM5, 80 GB HBM3, uncalibrated: data sheet and defaults\\)\n.*training step: .* per token .*\n  bound: .*\n  terms: .*decode \\(batch 1 at context 8\\)")
# One attention core: 20,480 bytes over 3.35e12 x 0.85 B/s plus 5 us = 5.0071920...e-06 s.
smelt_cli_test(time.json EXIT 0 ARGS time ${SMELT_EX}/tiny-moe.json --hardware H100 --micro-batch 2 --seq 16 --json
               STDOUT "\"kind\": \"time\".*\"name\": \"attention_core\",\n        \"kind\": \"attention\",\n        \"layer\": 1,\n        \"visit\": 1,\n        \"backward\": false,\n        \"flops\": 69632.0,\n        \"bytes\": 20480.0,\n        \"seconds\": 5.00719[0-9]*e-06,\n        \"bound\": \"overhead\"")
smelt_cli_test(time.unknown_hardware EXIT 2 ARGS time ${SMELT_EX}/tiny-moe.json --hardware h10 STDOUT_EMPTY
               STDERR "hardware = \"h10\": is neither a known device \\(a100-80, b200, h100, h200, mi300x\\) nor a spec file: did you mean \"h100\"\\?")
smelt_cli_test(time.bad_options EXIT 2 ARGS time ${SMELT_EX}/tiny-moe.json --hardware h100 --imbalance 0.5 --tp 3
               STDOUT_EMPTY
               STDERR "--imbalance = 0.5: must be in \\[1, 1000000\\]: the most loaded expert over the mean\n--tp = 3: must divide attention.num_heads \\(4\\)")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/time-spec-missing.json "{\"schema\": \"smelt-hardware/1\", \"name\": \"x\"}")
smelt_cli_test(time.bad_spec EXIT 2 ARGS time ${SMELT_EX}/tiny-moe.json
               --hardware ${CMAKE_CURRENT_BINARY_DIR}/time-spec-missing.json STDOUT_EMPTY
               STDERR "time-spec-missing.json:\n  backend: missing \\(required\\)\n  peak_flops_bf16: missing \\(required\\)")
# count --time: the same report, one per config (a JSON list), the count's --context as the sequence.
smelt_cli_test(count.time.json EXIT 0 ARGS count ${SMELT_EX}/tiny-moe.json --time --hardware h100 --micro-batch 2
               --context 16 --json
               STDOUT "^\\[\n{\n  \"schema_version\": 2,\n  \"kind\": \"time\",.*\"micro_batch\": 2,\n    \"seq\": 16,.*\"bytes\": 20480.0,")
smelt_cli_test(count.time.alone EXIT 2 ARGS count ${SMELT_EX}/tiny-moe.json --time STDOUT_EMPTY
               STDERR "--time, --hardware = --time: go together")
# derive and sweep with --hardware: every candidate's predicted time per token beside the Baseline's, a limit, time
# matched, and bad input (exit 2 naming the flag, the value and the rule).
smelt_cli_test(derive.time EXIT 0 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json --top 1 --hardware h200
               STDOUT "training time/token \\(h200\\) +153 us +165 us +\\+8.016%\ndecode time/token \\(h200\\) +3.07 ms +4.12 ms +\\+33.951%")
smelt_cli_test(derive.time_limit EXIT 3 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json --top 1 --hardware h200
               --time-limit 1 --no-relaxations
               STDOUT "training time/token \\(h200\\) +153 us +152 us +-0.125%.*time limit 1x the Baseline's training time per token on h200: [0-9]+ candidates dropped")
smelt_cli_test(derive.match_time EXIT 0 ARGS derive ${SMELT_EX}/tiny-moe.json --match flops,params,kv,time --top 1
               --hardware h100 --micro-batch 2 --seq 16
               STDOUT "over flops, params, kv, time: within")
smelt_cli_test(derive.time.json EXIT 0 ARGS derive ${SMELT_EX}/tiny-moe.json --json --top 1 --hardware h100
               --micro-batch 2 --seq 16
               STDOUT "\"time\": {\n    \"hardware\": \"h100\",\n    \"limit_ratio\": 0.0,.*\"training_seconds_per_token\": {\n      \"baseline\": 3.772[0-9]+e-05,\n      \"candidate\": 3.772[0-9]+e-05,")
smelt_cli_test(derive.time.needs_hardware EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --match flops,time
               --time-limit 1.2 STDOUT_EMPTY
               STDERR "--match = \"time\": needs a device to predict time on: set --hardware\n.*--time-limit = 1.2: needs a device to predict time on: set --hardware")
smelt_cli_test(derive.time.bad EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --hardware h2000 --time-limit -1
               --imbalance 0.5 STDOUT_EMPTY
               STDERR "--time-limit = -1: must be a ratio in \\[0, 1000000\\] \\(0: no limit\\)\n.*--hardware = \"h2000\": is neither a known device \\(a100-80, b200, h100, h200, mi300x\\) nor a spec file: did you mean \"h200\"\\?")
smelt_cli_test(derive.time_limit.none_fits EXIT 2 ARGS derive ${SMELT_EX}/tiny-moe.json --hardware h100
               --time-limit 0.01 STDOUT_EMPTY
               STDERR "--time-limit = 0.01: no candidate of the space trains within 0.01 x the Baseline's time per token on h100: the fastest takes [0-9.]+ x")
smelt_cli_test(sweep.time EXIT 0 ARGS sweep ${SMELT_EX}/smelt-baseline-12l.json --spans 0.5 --loops 2 --depths none
               --hardware h100
               STDOUT "memory +time\nloop +50% +4-9 .* [+-][0-9.]+% +[+-][0-9.]+%\n")
# bench calibrate: the CPU backend measured on the quick grid, written whole to --out and read back by time as a
# spec file; a calibration for another backend, or with a config, exits 2.
smelt_cli_test(bench.calibrate EXIT 0 ARGS bench calibrate --quick --repetitions 1
               STDOUT "^{\n  \"schema_version\": 1,\n  \"kind\": \"calibration\",\n  \"backend\": \"cpu\",.*\"gemm\": {\n    \"m\": \\[\n      8,\n      64\n    \\],"
               STDERR "calibrated .*: 8 GEMM shapes, .*/s at best")
smelt_cli_test(bench.calibrate.cuda EXIT 2 ARGS bench calibrate --backend cuda STDOUT_EMPTY
               STDERR "bench calibrate: unknown option '--backend'")
smelt_cli_test(bench.calibrate.config EXIT 2 ARGS bench calibrate ${SMELT_EX}/tiny-moe.json STDOUT_EMPTY
               STDERR "^smelt-match: error: The following argument was not expected: [^\n]*tiny-moe.json\n\\(run 'smelt-match bench calibrate --help' for usage\\)\n$")
smelt_cli_test(bench.no_config EXIT 2 ARGS bench STDOUT_EMPTY
               STDERR "CONFIG: required \\(or the subcommand step or calibrate\\)")
smelt_cli_test(bench.step.no_config EXIT 2 ARGS bench step STDOUT_EMPTY STDERR "^smelt-match: error: CONFIG: required\n$")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/time-calibration-cpu.json "{\"schema_version\": 1, \"kind\": \"calibration\", \"backend\": \"cpu\", \"device\": \"t\", \"dtype\": \"fp32\", \"threads\": 1, \"memory_bandwidth\": 1e10, \"op_overhead\": 1e-7, \"gemm\": {\"m\": [8], \"n\": [8], \"k\": [8], \"flops_per_second\": [1e10]}}")
smelt_cli_test(time.calibration.backend EXIT 2 ARGS time ${SMELT_EX}/tiny-moe.json --hardware h100
               --calibration ${CMAKE_CURRENT_BINARY_DIR}/time-calibration-cpu.json STDOUT_EMPTY
               STDERR "time-calibration-cpu.json:\n  backend = \"cpu\": must be the backend of the hardware spec h100 \\(\"cuda\"\\): a calibration measures one backend")
# bench step: a measured training step beside the time model's prediction, under the keys count --time uses; the
# pair's measured and predicted ratios with --vs; bad input exits 2 naming the flag or field and the rule.
smelt_cli_test(bench.step.json EXIT 0 ARGS bench step ${SMELT_EX}/tiny-moe.json --tokens 16 --context 8
               --hardware h100 --repetitions 1 --json
               STDOUT "\"kind\": \"bench_step\",.*\"tokens\": 16,\n      \"context\": 8,\n      \"sequences\": 2,\n      \"layer_visits\": 6,\n      \"parameters\": 369728,\n      \"measured\": {\n        \"forward_seconds_per_token\": [0-9.e-]+,\n        \"training_seconds_per_token\": [0-9.e-]+,\n        \"decode_seconds_per_token\": [0-9.e-]+\n      },\n      \"predicted\": {\n        \"forward_seconds_per_token\": [0-9.e-]+,")
smelt_cli_test(bench.step.vs EXIT 0 ARGS bench step ${SMELT_EX}/tiny-moe.json --vs ${SMELT_EX}/tiny-moe.json
               --repetitions 1
               STDOUT "tiny-moe training step on cpu .*predicted: - \\(give --hardware.*tiny-moe vs tiny-moe: measured training-time ratio [0-9.]+, analytic FLOP ratio 1.0000\n")
smelt_cli_test(bench.step.hardware_alone EXIT 2 ARGS bench ${SMELT_EX}/tiny-moe.json --hardware h100 STDOUT_EMPTY
               STDERR "bench: unknown option '--hardware'")
smelt_cli_test(bench.step.moe_only EXIT 2 ARGS bench step ${SMELT_EX}/tiny-moe.json --moe-only STDOUT_EMPTY
               STDERR "bench step: unknown option '--moe-only'")
smelt_cli_test(bench.step.calibrate EXIT 2 ARGS bench calibrate step STDOUT_EMPTY
               STDERR "^smelt-match: error: The following argument was not expected: step\n")
