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
               STDOUT "^\\[\n{\n  \"schema_version\": 1,\n  \"kind\": \"time\",.*\"micro_batch\": 2,\n    \"seq\": 16,.*\"bytes\": 20480.0,")
smelt_cli_test(count.time.alone EXIT 2 ARGS count ${SMELT_EX}/tiny-moe.json --time STDOUT_EMPTY
               STDERR "--time, --hardware = --time: go together")
