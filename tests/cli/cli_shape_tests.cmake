# The attention shape rules through the CLI (docs/solver.md section 4): --keep-heads, --max-head-dim and
# --attention-ratio, every bad value named with its flag, value and rule, all at once, exit code 2.
set(SMELT_12L ${PROJECT_SOURCE_DIR}/examples/smelt-baseline-12l.json)
smelt_cli_test(shape.ratio_and_cap EXIT 2 STDOUT_EMPTY ARGS derive ${SMELT_12L} --attention-ratio 2:0.5 --max-head-dim 16
               STDERR "^smelt-match: error: --max-head-dim = 16: must be at least --min-head-dim = 32\n--attention-ratio = 2:0.5: must be a ratio or a range LO:HI with LO <= HI\n$")
smelt_cli_test(shape.ratio_zero EXIT 2 STDOUT_EMPTY ARGS derive ${SMELT_12L} --attention-ratio 0:2 --max-head-dim 0
               STDERR "^smelt-match: error: --max-head-dim = 0: must be positive\n--attention-ratio = 0:2: LO must be positive: it bounds query heads x head_dim over H\n$")
smelt_cli_test(shape.ratio_nan EXIT 2 STDOUT_EMPTY ARGS derive ${SMELT_12L} --attention-ratio nan --max-head-dim 16777217
               STDERR "^smelt-match: error: --max-head-dim = 16777217: must be at most 16777216\n--attention-ratio = nan: LO and HI must be finite ratios\n$")
smelt_cli_test(shape.ratio_range EXIT 2 STDOUT_EMPTY ARGS derive ${SMELT_12L} --attention-ratio 0.5:1e7
               STDERR "^smelt-match: error: --attention-ratio = 0.5:10000000: LO and HI must lie between 0.000001 and 1000000\n$")
smelt_cli_test(shape.ratio_text EXIT 2 STDOUT_EMPTY ARGS derive ${SMELT_12L} --attention-ratio 1:x
               STDERR "^smelt-match: error: --attention-ratio = \"1:x\": must be a ratio or a range LO:HI\n$")
# head_dim above 256 pinned with a rule that forbids it, and query heads pinned while kept: both at once.
smelt_cli_test(shape.pinned_contradictions EXIT 2 STDOUT_EMPTY ARGS derive ${SMELT_12L} --head-dim 512 --keep-heads --heads 12
               STDERR "^smelt-match: error: --head-dim = 512: must be at most --max-head-dim = 256 \\(FlashAttention's largest head size\\)\n--heads = 12: contradicts --keep-heads, which keeps the Baseline's 10 query heads\n$")
smelt_cli_test(shape.keep_and_free EXIT 2 STDOUT_EMPTY ARGS derive ${SMELT_12L} --keep-heads --free-heads
               STDERR "^smelt-match: error: --keep-heads: contradicts --free-heads \\(keep the Baseline's query heads, or let them move: the default\\)\n$")
# An empty space says which constraints emptied it: 2 x 32..64 = 64..128 queries never reach half of the smallest
# default H (1280 / 4 = 320); 10 x 100..124 (steps of 4) is never a multiple of 64 at a ratio of exactly 1.
smelt_cli_test(shape.empty_by_width EXIT 2 STDOUT_EMPTY ARGS derive ${SMELT_12L} --heads 2 --head-dim 32:64
               STDERR "^smelt-match: error: --attention-ratio = 0.5:2: no attention geometry fits: query heads 2 \\(--heads\\) x head_dim 32:64 \\(--head-dim\\) never give a width between 0.5 x 320 and 2 x 1280 \\(the ratio's ends at the ends of --hidden\\)\n$")
smelt_cli_test(shape.empty_by_alignment EXIT 2 STDOUT_EMPTY
               ARGS derive ${SMELT_12L} --attention-ratio 1 --heads 10 --head-dim 100:124 --align-head-dim 4
               STDERR "^smelt-match: error: --attention-ratio = 1: no attention geometry fits: the widths query heads x head_dim that the ranges allow lie within \\[1, 1\\] x H of no hidden size of --hidden \\(multiples of --align-hidden = 64 from 320 to 1280\\)\n$")
smelt_cli_test(shape.kv_no_divisor EXIT 2 STDOUT_EMPTY ARGS derive ${SMELT_12L} --kv-heads 3 --keep-heads
               STDERR "^smelt-match: error: --kv-heads = 3: contains no divisor of the query heads \\(10\\)\n$")
# A ratio of exactly 1: every candidate's query heads x head_dim equals its H (960 = 12 x 80 = 6 x 160 = 24 x 40).
# The widths 960 and 160 split four ways (head_dim 32, 40, 80, 160: docs/solver.md section 6), listed once.
smelt_cli_test(shape.ratio_one EXIT 3 ARGS derive ${SMELT_12L} --attention-ratio 1 --top 3
               STDOUT "hidden size +1280 +960\n.*heads/KV heads/head_dim +10/2/128 +12/2/80\n.*\n4 head splits of the same widths \\(attention width 960, KV width 160\\): 12/2/80, 6/1/160, 24/4/40, 30/5/32\n.*\n  2     960      360        10/2/96       5 .*\n  3    1088      240        8/1/136       1 ")
# --keep-heads: the Baseline's 10 query heads, KV heads any divisor of 10 (1, 2, 5, 10).
smelt_cli_test(shape.keep_heads EXIT 3 ARGS derive ${SMELT_12L} --keep-heads --top 1
               STDOUT "heads/KV heads/head_dim +10/2/128 +10/2/88\n")
