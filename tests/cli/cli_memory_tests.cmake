# smelt-match memory: the report of tiny-moe (hand-computed in tests/unit/memory/memory_test.cpp), its JSON, and
# bad layouts: exit 2, every field, value and rule at once, nothing on stdout.
smelt_cli_test(memory.text EXIT 0 ARGS memory ${SMELT_EX}/tiny-moe.json --micro-batch 2 --seq 16
               STDOUT "tiny-moe: training memory per GPU, convention smelt\n.*activations +1.22 MiB.*transient +249.75 KiB  the backward's peak \\(loss_backward\\)\n  total +7.11 MiB")
smelt_cli_test(memory.json EXIT 0 ARGS memory ${SMELT_EX}/tiny-moe.json --micro-batch 2 --seq 16 --json
               STDOUT "\"kind\": \"memory\".*\"total\": 7454168,")
smelt_cli_test(memory.device EXIT 0 ARGS memory ${SMELT_EX}/tiny-moe.json --micro-batch 2 --seq 16
               --device-memory 7454168 STDOUT "= 100% of the device")
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

# The megatron convention on Mixtral 8x7B at 4096 tokens, one GPU (tests/python/test_memory_megatron.py checks 18
# more against a transcription of Megatron-LM's formula): weights + gradients + optimizer 46,702,792,704
# parameters x 18 = 840,650,268,672 bytes (stated below as its three parts: 2, 4 and 12 bytes per parameter),
# activations 4096 x 4096 x 34 x 32 + 8 x 4096 + 4096^2 + (4096 x 32000 + 4096^2) x 2 = 18,566,119,424, x 1.05.
smelt_cli_test(memory.megatron EXIT 0
               ARGS memory ${SMELT_EX}/hf/mixtral-8x7b.json --convention megatron --seq 4096 --json
               STDOUT "\"weights\": {\n      \"total\": 93405585408,.*\"gradients\": {\n      \"total\": 186811170816,.*\"optimizer\": {\n      \"total\": 560433512448,.*\"activations\": {\n      \"total\": 19494425395,")
smelt_cli_test(memory.megatron.refuses EXIT 2
               ARGS memory ${SMELT_EX}/hf/mixtral-8x7b.json --convention megatron --zero 1 --pp 2 --pp-layers 20,12
               STDOUT_EMPTY
               STDERR "--zero = 1: the megatron convention knows the distributed optimizer, not ZeRO\n.*--pp-layers = 20,12: the megatron convention splits the layers evenly \\(L / pp\\)")

# derive and sweep: every candidate's memory beside the Baseline's, a limit, memory matched.
smelt_cli_test(derive.memory EXIT 0 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json --top 1
               STDOUT "memory per GPU \\(layout\\) +902.34 GiB +939.69 GiB +\\+4.139%")
smelt_cli_test(derive.memory_limit EXIT 0 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json --top 1
               --memory-limit 920GiB
               STDOUT "memory per GPU \\(layout\\) +902.34 GiB +917.23 GiB +\\+1.651%.*memory limit 920.00 GiB per GPU: 20 candidates dropped, over it or not sharded by the layout")
smelt_cli_test(derive.memory_limit.none_fits EXIT 2 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json --memory-limit 1KiB
               STDOUT_EMPTY
               STDERR "--memory-limit = 1024 B: no candidate of the space fits in 1024 bytes per GPU: the smallest needs 30125580956 bytes")
smelt_cli_test(derive.memory_limit.bad_layout EXIT 2 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json --memory-limit h100
               --ep 5 STDOUT_EMPTY
               STDERR "--ep = 5: must divide moe.num_experts \\(336\\)\n--ep = 5: ep x etp \\(5\\) must divide tp x cp x dp \\(1\\)")
smelt_cli_test(derive.match_memory EXIT 0 ARGS derive ${SMELT_EX}/tiny-moe.json --match flops,params,kv,memory --top 1
               --micro-batch 2 --seq 16
               STDOUT "heads/KV heads/head_dim +4/2/16 +2/1/32.*memory per GPU \\(layout\\) +7.11 MiB +7.10 MiB +-0.165%.*over flops, params, kv, memory: within")
smelt_cli_test(derive.memory.json EXIT 0 ARGS derive ${SMELT_EX}/tiny-moe.json --json --top 1 --micro-batch 2 --seq 16
               STDOUT "\"memory_bytes\": {\n      \"baseline\": 7454168,")

# Sizes past 64 bits: refused under every convention (exit 2), naming the flags that size the quantity, never a
# wrapped total (the megatron convention's floats are checked before rounding). derive refuses the Baseline's
# memory rather than compare a negative total with the limit.
smelt_cli_test(memory.megatron.overflow EXIT 2
               ARGS memory ${SMELT_EX}/tiny-moe.json --convention megatron --micro-batch 16777216 --seq 67108864
               STDOUT_EMPTY
               STDERR "--micro-batch = 16777216, --seq = 67108864: activation bytes overflow 64-bit integers\n$")
smelt_cli_test(memory.megatron.overflow.deepseek EXIT 2
               ARGS memory ${SMELT_EX}/hf/deepseek-v3.json --convention megatron --micro-batch 1024 --seq 1073741824
               --json STDOUT_EMPTY
               STDERR "--micro-batch = 1024, --seq = 1073741824: activation bytes overflow 64-bit integers\n$")
smelt_cli_test(derive.megatron.overflow EXIT 2
               ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --convention megatron --micro-batch 16777216
               --seq 67108864 --memory-limit 1B
               STDOUT_EMPTY
               STDERR "--micro-batch = 16777216, --seq = 67108864: activation bytes overflow 64-bit integers")
smelt_cli_test(memory.overflow.training EXIT 2
               ARGS memory ${SMELT_EX}/hf/deepseek-v3.json --micro-batch 16777216 --seq 1073741824 STDOUT_EMPTY
               STDERR "--micro-batch = 16777216, --seq = 1073741824: activation [a-z]+ overflow 64-bit integers\n$")
smelt_cli_test(memory.overflow.inference EXIT 2
               ARGS memory ${SMELT_EX}/hf/deepseek-v3.json --inference --batch 16777216 --context 1073741824
               STDOUT_EMPTY
               STDERR "--batch = 16777216, --context = 1073741824: KV cache bytes overflow 64-bit integers\n$")
# The expert grid names the size that breaks it: etp alone, or ep and etp together.
smelt_cli_test(memory.etp_grid EXIT 2 ARGS memory ${SMELT_EX}/tiny-moe.json --etp 2 STDOUT_EMPTY
               STDERR "--etp = 2: ep x etp \\(2\\) must divide tp x cp x dp \\(1\\)")
smelt_cli_test(memory.ep_etp_grid EXIT 2 ARGS memory ${SMELT_EX}/tiny-moe.json --ep 2 --etp 2 --dp 2 STDOUT_EMPTY
               STDERR "--ep = 2, --etp = 2: ep x etp \\(4\\) must divide tp x cp x dp \\(2\\)")

# Hostile depths (tests/data/hostile): 4,096 layers looped 1,024 times (a 571-byte file) are one run of visits, and
# 65,536 one-layer stages cost their stages, not stages x visits: reports in well under a second (Release).
set(SMELT_MEMORY_HOSTILE ${CMAKE_CURRENT_SOURCE_DIR}/data/hostile)
smelt_cli_test(memory.hostile.4M_visits EXIT 0
               ARGS memory ${SMELT_MEMORY_HOSTILE}/memory-4M-visits.json --micro-batch 2 --seq 16
               STDOUT "  4194304 layer visits in 1 run\\(s\\), 1 micro-batch chunk\\(s\\) in flight, [^\n]+\n    layers 1-4096, visits 1-1024 \\(4194304 visits\\): dense, full attention, 154.50 KiB each\n")
smelt_cli_test(memory.hostile.4M_visits.json EXIT 0
               ARGS memory ${SMELT_MEMORY_HOSTILE}/memory-4M-visits.json --micro-batch 2 --seq 16 --json
               STDOUT "\"layer_visits\": 4194304,\n    \"visit_runs\": \\[\n      {\n        \"first_layer\": 1,\n        \"last_layer\": 4096,\n        \"step\": 1,\n        \"first_visit\": 1,\n        \"last_visit\": 1024,\n        \"count\": 4194304,")
smelt_cli_test(memory.hostile.65536_stages EXIT 0 ARGS memory ${SMELT_MEMORY_HOSTILE}/dense-65536.json --pp 65536
               STDOUT "most loaded rank: pipeline stage 1 of 65536 \\(layers 1-1\\)\n.*per stage: 65536 stages, from [^\n]+ \\(--json lists each\\)\n")
smelt_cli_test(time.hostile.65536_stages EXIT 0
               ARGS time ${SMELT_MEMORY_HOSTILE}/dense-65536.json --hardware h100 --pp 65536
               STDOUT "pp 65536, .*training step: ")
set_tests_properties(cli.memory.hostile.4M_visits cli.memory.hostile.4M_visits.json cli.memory.hostile.65536_stages
                     cli.time.hostile.65536_stages PROPERTIES TIMEOUT 60)
