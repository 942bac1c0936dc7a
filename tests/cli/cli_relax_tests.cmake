# smelt-match derive's relaxations (docs/solver.md section 8): each single
# relaxation solved, best first, as flags, in the table and in --json. The
# attention is pinned (10 heads, 1-2 KV heads, head_dim 32-128) so that the
# lines hold whatever the attention defaults.
set(RELAX_ARGS ${SMELT_EX}/smelt-baseline-12l.json --heads 10 --kv-heads 1:2 --head-dim 32:128)
# head_dim multiple of 4: 2 x 84 x 18 executed layers = 3024 bytes against 2 x 128 x 12 = 3072, -1.5625%.
smelt_cli_test(relax.table EXIT 3 ARGS derive ${RELAX_ARGS} --top 1
               STDOUT "OUTSIDE the 1% tolerance [^\n]*\n(  why: [^\n]*\n)+\nrelaxations, each solved alone \\(best first\\)\n  --align-head-dim 4 +reaches 1.562%  outside  H 1088, 264 experts, 10/2/84, expert width 272\n.*\n  drop --heads +reaches [0-9.]+%  (outside|within)  H [0-9]+, [0-9]+ experts, [0-9]+/[0-9]+/[0-9]+, expert width [0-9]+\n.*\n  drop --head-dim +reaches .*\n  drop --kv-heads +reaches .*\n  --attention-ratio 0.25:4 +reaches ")
smelt_cli_test(relax.json EXIT 3 ARGS derive --json ${RELAX_ARGS} --top 1
               STDOUT "^{\n  \"schema_version\": 3,\n  \"kind\": \"match\",.*\"max_head_dim\": 256,\n    \"attention_ratio\": \\[\n      0.5,\n      2.0\n    \\],.*\"relaxations\": true\n  },.*\"relaxations\": \\[\n    {\n      \"changes\": \\[\n        {\n          \"field\": \"--align-head-dim\",\n          \"value\": \"4\"\n        }\n      \\],\n      \"max_abs_mismatch_pct\": 1.5625,\n      \"within_tolerance\": false,\n      \"knobs\": {\n        \"hidden_size\": 1088,\n        \"num_experts\": 264,\n        \"num_heads\": 10,\n        \"num_kv_heads\": 2,\n        \"head_dim\": 84,\n        \"expert_width\": 272,\n        \"shared_width\": 0,\n        \"dense_width\": 0\n      },\n      \"error\": null\n    },.*\"field\": \"--heads\",\n          \"value\": \"default\"\n        }")
# Within the tolerance: none, in the table and in JSON.
smelt_cli_test(relax.within EXIT 0 ARGS derive ${SMELT_EX}/smelt-baseline-54b.json --top 2
               STDOUT "within the 1% tolerance \\([^\n]*\\)\n\nalternatives, distinct \\(splits: head splits of the same widths\\)\n")
smelt_cli_test(relax.within.json EXIT 0 ARGS derive --json ${SMELT_EX}/smelt-baseline-54b.json --top 1
               STDOUT "\"within_tolerance\": true,\n  \"why\": \\[\\],\n  \"relaxations\": \\[\\],\n  \"best\": {")
# Switched off: the why lines stay, no relaxation is solved.
smelt_cli_test(relax.off EXIT 3 ARGS derive ${RELAX_ARGS} --top 2 --no-relaxations
               STDOUT "\n  why: params_non_embedding: [^\n]*\n\nalternatives, distinct \\(splits: head splits of the same widths\\)\n")
smelt_cli_test(relax.off.json EXIT 3 ARGS derive --json ${RELAX_ARGS} --top 1 --no-relaxations
               STDOUT "\"relaxations\": false\n  },.*\"why\": \\[\n[^]]*\\],\n  \"relaxations\": \\[\\],\n  \"best\": {")
# Freeing the query heads of a space given --keep-heads is dropping that flag (adding --free-heads to it is a
# contradiction, exit 2); in JSON the change is the library field, free_heads = true.
smelt_cli_test(relax.keep_heads EXIT 3 ARGS derive ${SMELT_EX}/smelt-baseline-12l.json --keep-heads --top 1
               STDOUT "\n  drop --keep-heads +reaches [0-9.]+%  (outside|within)  H [0-9]+")
