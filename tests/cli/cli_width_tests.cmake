# --ffn searched and --expert-width: the knob through the CLI, its
# contradictions named with the CLI's flags, all at once, exit code 2.
set(SMELT_PAPER_200M ${PROJECT_SOURCE_DIR}/examples/paper/paper-200m-e8-kv2x128.json)
smelt_cli_test(width.pinned_without_searched EXIT 2
               ARGS derive ${SMELT_PAPER_200M} --expert-width 256 --align-hidden 0
               STDOUT_EMPTY STDERR "--align-hidden = 0: must be positive\n--expert-width = 256: is searched only with --ffn = searched \\(ffn is proportional\\)\n")
smelt_cli_test(width.empty_range EXIT 2 ARGS derive ${SMELT_PAPER_200M} --ffn searched --expert-width 305:318
               STDOUT_EMPTY STDERR "--expert-width = 305:318: contains no multiple of --align-ffn = 16\n")
smelt_cli_test(width.bad_text EXIT 2 ARGS derive ${SMELT_PAPER_200M} --ffn searched --expert-width 64:x
               STDOUT_EMPTY STDERR "--expert-width = \"64:x\": must be a value or a range LO:HI\n")
# The paper's 200M E8 cell with its alignment freedom: 0.781%, KV 1 x 172 against 2 x 128 x 12/18 = 170.67
# (tests/unit/solve/attention_space_test.cpp); in the attention box searched before the shape rules, 4.404% at
# width 192 (tests/unit/solve/expert_width_test.cpp).
smelt_cli_test(width.paper_200m_e8 EXIT 0
               ARGS derive ${SMELT_PAPER_200M} --align-hidden 8 --align-experts 8 --align-head-dim 4 --ffn searched
               STDOUT "expert width                           320            384\n.*max \\|mismatch\\| 0.781%")
smelt_cli_test(width.paper_200m_e8_old_box EXIT 3
               ARGS derive ${SMELT_PAPER_200M} --align-hidden 8 --align-experts 8 --align-head-dim 4 --ffn searched
                    --keep-heads --kv-heads 1:2 --head-dim 32:128
               STDOUT "expert width                           320            192\n.*max \\|mismatch\\| 4.404%")
# The alternatives table gains an expert-width column only where the width was searched.
smelt_cli_test(width.alternatives_column EXIT 0
               ARGS derive ${SMELT_PAPER_200M} --align-hidden 8 --align-experts 8 --align-head-dim 4 --ffn searched --top 2
               STDOUT "max  expert width\n  2    1056       48       10/1/172       1    \\+0.296%    \\+0.039%    \\+0.781%    0.781%            64\n")
