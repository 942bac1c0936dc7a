# smelt-match memory: the report of tiny-moe (hand-computed in tests/unit/memory/memory_test.cpp), its JSON, and
# bad layouts: exit 2, every field, value and rule at once, nothing on stdout.
smelt_cli_test(memory.text EXIT 0 ARGS memory ${SMELT_EX}/tiny-moe.json --micro-batch 2 --seq 16
               STDOUT "tiny-moe: training memory per GPU, convention smelt\n.*activations +1.22 MiB.*total +6.86 MiB")
smelt_cli_test(memory.json EXIT 0 ARGS memory ${SMELT_EX}/tiny-moe.json --micro-batch 2 --seq 16 --json
               STDOUT "\"kind\": \"memory\".*\"total\": 7198428,")
smelt_cli_test(memory.device EXIT 0 ARGS memory ${SMELT_EX}/tiny-moe.json --micro-batch 2 --seq 16
               --device-memory 7198428 STDOUT "= 100% of the device")
smelt_cli_test(memory.bad_layout EXIT 2
               ARGS memory ${SMELT_EX}/tiny-moe.json --tp 3 --ep 3 --cp 5 --zero 1 --distributed-optimizer
               STDOUT_EMPTY
               STDERR "--tp = 3: must divide attention.num_heads \\(4\\)\n.*--ep = 3: must divide moe.num_experts \\(8\\)\n.*--cp = 5: must divide the sequence length \\(8\\)\n.*choose ZeRO or the distributed optimizer, not both")
smelt_cli_test(memory.bounds EXIT 2 ARGS memory ${SMELT_EX}/tiny-moe.json --micro-batch 1099511627776 --tp 0
               --pp 2 --pp-layers 4,0
               STDOUT_EMPTY
               STDERR "--micro-batch = 1099511627776: must be at most 16777216\n.*--tp = 0: must be positive\n.*--pp-layers = 4,0: every stage must hold at least 1 layer")
smelt_cli_test(memory.device_word EXIT 2 ARGS memory ${SMELT_EX}/tiny-moe.json --device-memory h300 STDOUT_EMPTY
               STDERR "--device-memory = \"h300\": must be bytes with an optional unit")
