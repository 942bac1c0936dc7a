# smelt-match bench through CTest, on the CPU reference (GPU runs are in scripts/gpu-check.sh).
smelt_cli_test(bench.cpu EXIT 0 ARGS bench ${SMELT_EX}/tiny-moe.json --backend cpu --repetitions 3
               STDOUT "tiny-moe on cpu .*8 tokens, context 8, 6 block visits\n.*all products +3.144 MFLOP +3.144 MFLOP \\(\\+0.000%\\).*weight GEMMs +3.088 MFLOP +3.088 MFLOP \\(\\+0.000%\\).*: correct\n")
smelt_cli_test(bench.cpu.json EXIT 0 ARGS bench ${SMELT_EX}/tiny-moe.json --backend cpu --tokens 32 --context 8 --moe-only --balanced --repetitions 2 --json
               STDOUT "^{\n  \"schema_version\": 1,\n  \"kind\": \"bench\",\n  \"results\": \\[.*\"backend\": \"cpu\",.*\"moe_only\": true,.*\"expert_tokens\": \\[\n *8,\n *8,.*\"load_imbalance\": 1.0,.*\"correct\": true")
smelt_cli_test(bench.vs EXIT 0 ARGS bench ${SMELT_EX}/tiny-moe.json --vs ${SMELT_EX}/tiny-moe.json --backend cpu --repetitions 2
               STDOUT "tiny-moe vs tiny-moe: time ratio [0-9.]+, analytic FLOP ratio 1.0000\n")
smelt_cli_test(bench.error.tokens EXIT 2 ARGS bench ${SMELT_EX}/tiny-moe.json --tokens 0 STDOUT_EMPTY
               STDERR "--tokens = 0: must be positive")
smelt_cli_test(bench.error.context EXIT 2 ARGS bench ${SMELT_EX}/tiny-moe.json --context 16 --backend cpu STDOUT_EMPTY
               STDERR "--context = 16: must be at most the config's context_length = 8")
smelt_cli_test(bench.error.cuda EXIT 5 ARGS bench ${SMELT_EX}/tiny-moe.json --backend cuda STDOUT_EMPTY
               STDERR "--backend = \"cuda\": unavailable: ")
smelt_cli_test(bench.error.mla EXIT 2 ARGS bench ${SMELT_EX}/deepseek-v3-mla.json --backend cpu STDOUT_EMPTY
               STDERR "attention.type = \"mla\": not supported by the benchmark yet")
smelt_cli_test(bench.error.memory EXIT 2 ARGS bench ${SMELT_EX}/smelt-baseline-12l.json --backend cpu STDOUT_EMPTY
               STDERR "the CPU reference needs about 32.2 GiB for the weights")
# 3,143,680 FLOPs per 8 tokens x 131072 sequences = 412 GFLOP: about 206 s at 2 GFLOP/s.
smelt_cli_test(bench.error.time EXIT 2 ARGS bench ${SMELT_EX}/tiny-moe.json --backend cpu --tokens 1048576 --context 8
               STDOUT_EMPTY STDERR "estimated CPU time 206 s exceeds 60 s \\(412.0 GFLOP at about 2 GFLOP/s\\): use fewer --tokens or --force")
