# smelt-match count --convention torchtitan and flop-counter, table and JSON
# (docs/counting.md sections 13.4 and 13.5). smelt_cli_test() is cli_tests.cmake's.

# torchtitan's published figure for Qwen3-30B-A3B at seq 8192: 37,578,559,488 training FLOPs per token.
smelt_cli_test(count.torchtitan.qwen3 EXIT 0
               ARGS count --json --convention torchtitan --context 8192 ${SMELT_EX}/hf/qwen3-30b-a3b.json
               STDOUT "\"convention\": \"torchtitan\",.*\"flops_per_token\": {\n    \"forward\": 12526186496.0,\n    \"training\": 37578559488.0,\n    \"params\": 3041867776,\n    \"terms_training\": {\n      \"parameters\": 18251206656.0,\n      \"attention\": 19327352832.0")
smelt_cli_test(count.torchtitan.table EXIT 0 ARGS count --convention torchtitan --context 8192
               ${SMELT_EX}/hf/qwen3-30b-a3b.json STDOUT "torchtitan training FLOPs/token +37.579 GFLOP\n")
# The tiny MoE: smelt's 520,960 plus the full T x T attention of 6 visits, 6 * 2 * 2 * 64 * (8 - 4.5) = 5,376.
smelt_cli_test(count.flop_counter.json EXIT 0 ARGS count --json --convention flop-counter ${SMELT_EX}/tiny-moe.json
               STDOUT "\"convention\": \"flop-counter\",.*\"forward\": 526336.0,\n    \"forward_per_sequence\": 4210688.0,")
smelt_cli_test(count.flop_counter.table EXIT 0 ARGS count --convention flop-counter ${SMELT_EX}/tiny-moe.json
               STDOUT "flop-counter attention T x T +12.288 kFLOP\n.*flop-counter forward FLOPs/token +526.336 kFLOP\n")
smelt_cli_test(error.convention.unknown EXIT 2 ARGS count --convention titan ${SMELT_EX}/tiny-moe.json STDOUT_EMPTY
               STDERR "--convention = \"titan\": must be one of smelt, megatron, torchtitan, flop-counter")
smelt_cli_test(help.convention EXIT 0 ARGS count --help STDOUT "torchtitan or flop-counter")
