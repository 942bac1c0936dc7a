# smelt-match derive through CTest (smelt_cli_test comes from cli_tests.cmake).
set(OUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/cli-out)
file(MAKE_DIRECTORY ${OUT_DIR})

smelt_cli_test(derive.54b EXIT 0 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json
               STDOUT "hidden size +2304 +1920 *\n.*routed experts +336 +488 *\n.*heads/KV heads/head_dim +24/6/96 +24/6/64.*within the 1% tolerance")
smelt_cli_test(derive.54b.json EXIT 0 ARGS derive --json --top 2 ${SMELT_EX}/smelt-baseline-54b.json
               STDOUT "^{\n  \"schema_version\": 3,\n  \"kind\": \"match\",.*\"within_tolerance\": true,.*\"best\": {.*\"hidden_size\": 1920,.*\"kv_bytes_per_token\": {\n *\"baseline\": 69120.0,\n *\"candidate\": 69120.0,\n *\"mismatch_pct\": 0.0.*\"alternatives\": \\[")
smelt_cli_test(derive.out EXIT 0 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json --out ${OUT_DIR}/derived-54b.json
               STDOUT "max \\|mismatch\\| 0.534%")
# The written config counts, and feeds back in: derive from it with no loop returns it unchanged.
smelt_cli_test(derive.out.count EXIT 0 ARGS count ${OUT_DIR}/derived-54b.json STDOUT "layers executed +45\n")
set_tests_properties(cli.derive.out.count PROPERTIES DEPENDS cli.derive.out)
# KV target per executed layer 2 x 128 x 12/18 = 170.67; KV heads any divisor of the query heads and head_dim a
# multiple of 8 reach 168 (3 x 56: 168 x 18 = 3,024 against 256 x 12 = 3,072, -1.5625%) or 176 (+3.125%). The answer
# 1152 / 12 x 56 queries (width 672 = 0.58 H, inside [0.5, 2]) / 3 x 56 KV; no product lands within 1%.
smelt_cli_test(derive.infeasible EXIT 3 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json
               STDOUT "hidden size +1280 +1152\n.*heads/KV heads/head_dim +10/2/128 +12/3/56\n.*OUTSIDE the 1% tolerance"
               STDERR "no candidate within 1% \\(best 1.562%\\)\n  kv_bytes_per_token: -1.56% misses the 1% tolerance \\(the largest mismatch\\): KV cache moves in steps of 14.1% here \\(head_dim multiple of 8 with 3 KV heads\\)")
# Distinct candidates (docs/solver.md section 6). The answer's widths 12 x 56 = 672 and 3 x 56 = 168 split with
# any head_dim d that divides gcd(672, 168) = 168, a multiple of 8 in [32, 256]: 56 (12/3) and 168 (4/1), 2 splits.
# The next candidate, H 768 with 536 experts, 9/1/168: widths 1512 and 168, again d = 56 (27/3) or 168 (9/1).
smelt_cli_test(derive.distinct EXIT 3 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --no-relaxations
               STDOUT "\n2 head splits of the same widths \\(attention width 672, KV width 168\\): 12/3/56, 4/1/168\n.*\nalternatives, distinct \\(splits: head splits of the same widths\\)\n  #       H  experts    heads/kv/hd  splits      FLOPs     params         KV       max\n  2     768      536        9/1/168       2    -0.851%    -0.003%    -1.562%    1.562%\n  3    1088      264        5/1/168       2 ")
smelt_cli_test(derive.distinct.json EXIT 3 ARGS derive --json --top 2 ${SMELT_EX}/smelt-baseline-12l.json --no-relaxations
               STDOUT "\"best\": {\n    \"name\": \"smelt-baseline-12l-smelt\",.*\"dense_width\": 0\n    },\n    \"equivalent_head_splits\": 2,\n    \"head_splits\": \\[\n      {\n        \"num_heads\": 12,\n        \"num_kv_heads\": 3,\n        \"head_dim\": 56\n      },\n      {\n        \"num_heads\": 4,\n        \"num_kv_heads\": 1,\n        \"head_dim\": 168\n      }\n    \\],\n    \"budgets\": {.*\"alternatives\": \\[\n    {\n      \"name\": \"smelt-baseline-12l-smelt-alt1\",.*\"hidden_size\": 768,.*\"equivalent_head_splits\": 2,")
smelt_cli_test(derive.tolerance EXIT 0 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --tolerance 4 STDOUT "within the 4% tolerance")
smelt_cli_test(derive.paper_align EXIT 3 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --align-hidden 32 --top 1
               STDOUT "hidden size +1280 +992 *\n")
smelt_cli_test(derive.contexts EXIT 0 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json --context 4096,32768 --tolerance 5
               STDOUT "FLOPs/token \\(non-embedding\\) @4096.*FLOPs/token \\(non-embedding\\) @32768")
smelt_cli_test(derive.hf EXIT 3 ARGS derive ${SMELT_EX}/hf/mixtral-8x7b.json --top 1 STDOUT "layers executed +32 +48")

smelt_cli_test(derive.error.align EXIT 2 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --align-hidden 0 --loops 0
               STDOUT_EMPTY STDERR "--align-hidden = 0: must be positive\n--loops = 0: must be at least 1")
smelt_cli_test(derive.error.pinned EXIT 2 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --hidden 1000
               STDOUT_EMPTY STDERR "--hidden = 1000: must be a multiple of --align-hidden = 64")
smelt_cli_test(derive.error.range EXIT 2 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --experts 8:x
               STDOUT_EMPTY STDERR "--experts = \"8:x\": must be a value or a range LO:HI")
smelt_cli_test(derive.error.span EXIT 2 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --span 10-14
               STDOUT_EMPTY STDERR "--span = \"10-14\": must satisfy 1 <= first <= last <= 12 \\(the layers\\)")
smelt_cli_test(derive.error.match EXIT 2 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --match flops,latency
               STDOUT_EMPTY STDERR "--match = \"latency\": must be one of flops, params, kv, memory")
