# smelt-match export: the three targets, the family option, refusals and --out.
smelt_cli_test(export.megatron.54b EXIT 0 ARGS export ${SMELT_EX}/smelt-baseline-54b.json --to megatron
               STDOUT "--num-layers 30\n--hidden-size 2304\n.*--kv-channels 96\n.*--moe-ffn-hidden-size 768\n")
smelt_cli_test(export.megatron.loop EXIT 0 ARGS export ${SMELT_EX}/smelt-looped-12l.json --to megatron
               STDOUT "# Megatron-LM has no shared-weight layer loop: .* Run layers 4-9 \\(1-based\\) 2 times")
smelt_cli_test(export.hf.loop EXIT 0 ARGS export ${SMELT_EX}/smelt-looped-12l.json --to hf
               STDOUT "\"model_type\": \"mixtral\",.*\"loop\": {\n    \"first_layer\": 4,\n    \"last_layer\": 9,")
smelt_cli_test(export.hf.own_family EXIT 0 ARGS export ${SMELT_EX}/hf/qwen3-30b-a3b.json --to hf
               STDOUT "\"model_type\": \"qwen3_moe\"")
smelt_cli_test(export.hf.family EXIT 0 ARGS export ${SMELT_EX}/smelt-baseline-54b.json --to hf --family qwen2_moe
               STDOUT "\"model_type\": \"qwen2_moe\"")
smelt_cli_test(export.hf.bad_family EXIT 2 ARGS export ${SMELT_EX}/smelt-baseline-54b.json --to hf --family qwen
               STDERR "--family = \"qwen\": must be one of dbrx, ")
smelt_cli_test(export.hf.mla_in_mixtral EXIT 2
               ARGS export ${SMELT_EX}/deepseek-v3-mla.json --to hf --family mixtral
               STDERR "attention.type = \"mla\": the Hugging Face mixtral schema cannot express it")
smelt_cli_test(export.megatron.family EXIT 2 ARGS export ${SMELT_EX}/smelt-baseline-54b.json --to megatron
               --family mixtral STDERR "--family = \"mixtral\": applies to a Hugging Face export only \\(--to hf\\)")
smelt_cli_test(export.megatron.chunked EXIT 2 ARGS export ${SMELT_EX}/hf/llama4-scout.json --to megatron
               STDERR "Megatron-LM cannot express chunked attention")
smelt_cli_test(export.bad_target EXIT 2 ARGS export ${SMELT_EX}/smelt-baseline-54b.json --to torch
               STDERR "--to: torch not in {hf,megatron,executorch}")
smelt_cli_test(export.executorch_round_trip EXIT 0 ARGS export ${SMELT_EX}/executorch/llama3.2-1b-block-repeat.json
               --to executorch STDOUT "\"start\": 10,\n      \"end\": 14,\n      \"count\": 3")
smelt_cli_test(export.executorch_family EXIT 2 ARGS export ${SMELT_EX}/smelt-baseline-54b.json --to executorch
               --family llama STDERR "applies to a Hugging Face export only")
smelt_cli_test(export.missing_config EXIT 4 ARGS export ${SMELT_EX}/no-such.json --to hf
               STDERR "while reading config '.*no-such.json'")
smelt_cli_test(export.bad_config EXIT 2 ARGS export ${SMELT_BAD}/violations.json --to hf
               STDERR "while reading config '.*violations.json':\n  ")
smelt_cli_test(export.out_missing_dir EXIT 4
               ARGS export ${SMELT_EX}/smelt-baseline-54b.json --to hf --out ${CMAKE_CURRENT_BINARY_DIR}/no/dir/x.json
               STDOUT_EMPTY)
smelt_cli_test(export.out_full EXIT 4 STDOUT_EMPTY
               ARGS export ${SMELT_EX}/smelt-baseline-54b.json --to megatron --out /dev/full
               STDERR "cannot write '/dev/full': No space left on device\n$")
# The family is read from standard input too (it cannot be read twice).
smelt_hostile_test(export.stdin STDIN ${SMELT_EX}/hf/qwen3-30b-a3b.json EXIT 0 ARGS export - --to hf
                   STDOUT "\"model_type\": \"qwen3_moe\"")
# --out says what it wrote, and the file it wrote reads back with the same count.
set(SMELT_EXPORT_OUT ${CMAKE_CURRENT_BINARY_DIR}/export-out)
file(MAKE_DIRECTORY ${SMELT_EXPORT_OUT})
smelt_cli_test(export.out.says EXIT 0 STDOUT_EMPTY
               ARGS export ${SMELT_EX}/smelt-looped-12l.json --to hf --out ${SMELT_EXPORT_OUT}/looped.json
               STDERR "^smelt-match: wrote 'smelt-looped-12l' as a Hugging Face config.json to [^\n]*looped.json\n$")
set_tests_properties(cli.export.out.says PROPERTIES FIXTURES_SETUP export_out)
smelt_cli_test(export.out.reads EXIT 0 ARGS count ${SMELT_EXPORT_OUT}/looped.json
               STDOUT "smelt-looped-12l\nlayers executed +18\n")
set_tests_properties(cli.export.out.reads PROPERTIES FIXTURES_REQUIRED export_out)
# 65536 layers, every other one MoE: the Qwen schema lists the 32768 dense layers, and neither writing nor reading
# them back may search the list once per layer (that took 10 s in Release, several times that under the
# sanitizers; one pass takes well under a second in Release and 3.7 s under them on a loaded machine, so the limit
# leaves a busy machine 8 times the linear time and still fails the quadratic one).
smelt_cli_test(export.hf.deep_list EXIT 0 ARGS export ${SMELT_BAD}/qwen-65536-layers.json --to hf
               STDOUT "\"model_type\": \"qwen3_moe\",.*\"mlp_only_layers\": \\[\n    1,\n    3,\n")
set_tests_properties(cli.export.hf.deep_list PROPERTIES TIMEOUT 30)
# A name holding a newline, CR, NUL, quotes, shell metacharacters, a backslash and the line separators U+2028 and
# U+0085 (tests/data/export/hostile-name*.json): Megatron's file keeps it in one comment, as an ASCII JSON literal
# (the file is exactly the expected bytes, so no "--num-layers 999" line can be in it), and the config.json keeps
# it a JSON string in ASCII. Native and Hugging Face inputs (_name_or_path), both targets.
set(SMELT_EXPORT_DATA ${SMELT_BAD}/export)
smelt_cli_test(export.hostile_name.megatron EXIT 0 ARGS export ${SMELT_EXPORT_DATA}/hostile-name.json --to megatron
               STDOUT_FILE ${SMELT_EXPORT_DATA}/hostile-name.megatron.txt)
smelt_cli_test(export.hostile_name.megatron_hf EXIT 0
               ARGS export ${SMELT_EXPORT_DATA}/hostile-name-hf.json --to megatron
               STDOUT "^# Megatron-LM arguments for \"evil\\\\n--num-layers 999\\\\r\\\\n# \\\\u0000 \\\\\"quoted\\\\\" 'single' \\$\\(touch /tmp/pwned\\) `id`; a\\|b & c > d < e \\\\\\\\ \\\\u2028 \\\\u0085 end\" \\(the physical model: 4 stored layers\\)\n# [^\n]*\n# [^\n]*\n--num-layers 4\n")
foreach(input hostile-name hostile-name-hf)
  smelt_cli_test(export.${input}.hf EXIT 0 ARGS export ${SMELT_EXPORT_DATA}/${input}.json --to hf
                 STDOUT "\n  \"_name_or_path\": \"evil\\\\n--num-layers 999\\\\r\\\\n# \\\\u0000 \\\\\"quoted\\\\\" 'single' \\$\\(touch /tmp/pwned\\) `id`; a\\|b & c > d < e \\\\\\\\ \\\\u2028 \\\\u0085 end\",\n")
endforeach()
