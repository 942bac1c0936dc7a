# smelt-match through CTest: outputs, exit codes and error messages.
set(SMELT_EX ${PROJECT_SOURCE_DIR}/examples)
set(SMELT_BAD ${CMAKE_CURRENT_SOURCE_DIR}/data)

# smelt_cli_test(NAME EXIT <code> ARGS <args...> [STDOUT <regex>] [STDERR <regex>] [STDOUT_EMPTY])
function(smelt_cli_test name)
  cmake_parse_arguments(T "STDOUT_EMPTY" "EXIT;STDOUT;STDERR;STDOUT_FILE" "ARGS" ${ARGN})
  set(defs -DEXIT=${T_EXIT})
  if(DEFINED T_STDOUT)
    list(APPEND defs "-DSTDOUT=${T_STDOUT}")
  endif()
  if(DEFINED T_STDERR)
    list(APPEND defs "-DSTDERR=${T_STDERR}")
  endif()
  if(T_STDOUT_EMPTY)
    list(APPEND defs -DSTDOUT_EMPTY=1)
  endif()
  if(DEFINED T_STDOUT_FILE)
    list(APPEND defs "-DSTDOUT_FILE=${T_STDOUT_FILE}")
  endif()
  # "|" separates the arguments: a CMake list would not survive the command line.
  string(REPLACE ";" "|" command "$<TARGET_FILE:smelt-match>;${T_ARGS}")
  add_test(NAME cli.${name} COMMAND ${CMAKE_COMMAND} "-DCOMMAND=${command}" ${defs}
                                    -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect.cmake)
endfunction()

# Every example config counts, as a table and as JSON.
file(GLOB example_configs ${SMELT_EX}/*.json ${SMELT_EX}/hf/*.json)
foreach(config IN LISTS example_configs)
  get_filename_component(stem ${config} NAME_WE)
  get_filename_component(dir ${config} DIRECTORY)
  get_filename_component(dir ${dir} NAME)
  smelt_cli_test(example.${dir}.${stem} EXIT 0 ARGS count ${config} STDOUT "params total")
  smelt_cli_test(example.${dir}.${stem}.json EXIT 0 ARGS count --json ${config} STDOUT "^{\n  \"schema_version\": 2,\n  \"kind\": \"count\",")
endforeach()

# Published figures, end to end.
smelt_cli_test(count.mixtral.json EXIT 0 ARGS count --json ${SMELT_EX}/mixtral-8x7b.json
               STDOUT "\"total\": 46702792704,.*\"active\": 12879925248,.*\"bytes_per_token\": 131072.0")
smelt_cli_test(count.tiny.table EXIT 0 ARGS count ${SMELT_EX}/tiny-moe.json
               STDOUT "params total +369.728 K\n.*forward FLOPs/token +520.960 kFLOP\n")
smelt_cli_test(count.side_by_side EXIT 0
               ARGS count ${SMELT_EX}/smelt-baseline-12l.json ${SMELT_EX}/smelt-looped-12l.json
               STDOUT "layers executed +12 +18 \\(\\+50.0%\\)")
smelt_cli_test(count.context EXIT 0 ARGS count --json --context 16 ${SMELT_EX}/tiny-moe.json
               STDOUT "\"context_length\": 16,")
smelt_cli_test(count.megatron EXIT 0 ARGS count --json --convention megatron ${SMELT_EX}/tiny-moe.json
               STDOUT "\"convention\": \"megatron\",.*\"terms_training\"")
# tiny-moe: layer 1 dense (first_dense 1), layers 2-3 MoE looped twice, layer 4 MoE once: three runs.
smelt_cli_test(count.layers EXIT 0 ARGS count --layers ${SMELT_EX}/tiny-moe.json
               STDOUT "\ntiny-moe\nlayers +kind +attn +visits +params +FLOPs/visit +KV B/visit\n +1 +dense +full +1 +36.992 K +74.880 kFLOP +128 B\n +2-3 +moe +full +2 +68.224 K +63.616 kFLOP +128 B\n +4 +moe +full +1 +68.224 K +63.616 kFLOP +128 B\n$")
smelt_cli_test(count.layers.every_layer EXIT 0 ARGS count --layers --every-layer ${SMELT_EX}/tiny-moe.json
               STDOUT "\nlayer +kind +attn +visits.*\n +1 +dense +full +1 .*\n +2 +moe +full +2 .*\n +3 +moe +full +2 .*\n +4 +moe +full +1 [^\n]*\n$")
# smelt-looped-12l: 12 MoE layers, full attention, layers 4-9 looped twice: before, inside and after the loop.
smelt_cli_test(count.runs.looped EXIT 0 ARGS count --json ${SMELT_EX}/smelt-looped-12l.json
               STDOUT "\"layer_runs\": \\[\n    {\n      \"first\": 1,\n      \"last\": 3,\n      \"step\": 1,\n      \"count\": 3,\n      \"kind\": \"moe\",\n      \"attention\": \"full\",\n      \"visits\": 1,.*\"first\": 4,\n      \"last\": 9,\n      \"step\": 1,\n      \"count\": 6,\n      \"kind\": \"moe\",\n      \"attention\": \"full\",\n      \"visits\": 2,.*\"first\": 10,\n      \"last\": 12,\n      \"step\": 1,\n      \"count\": 3,.*\"kv_bytes_per_visit\": 704.0\n    }\n  \\]\n}\n$")
# 65,536 layers alternating MoE and dense (moe.layers every 2, phase 0): two runs of every second layer, in a
# report of about 3.3 KB (51.6 MB with one object per layer); --every-layer writes the 65,536 objects too.
smelt_cli_test(count.runs.deep EXIT 0 ARGS count --layers ${SMELT_BAD}/qwen-65536-layers.json
               STDOUT "\n +layers +kind .*\n1-65535/2 +moe +full +1 +1.798 B +131.904 MFLOP +2.25 KiB\n2-65536/2 +dense +full +1 +18.584 M +56.038 MFLOP +2.25 KiB\n$")
smelt_cli_test(count.runs.deep_json EXIT 0 ARGS count --json ${SMELT_BAD}/qwen-65536-layers.json
               STDOUT "\"first\": 1,\n      \"last\": 65535,\n      \"step\": 2,\n      \"count\": 32768,\n      \"kind\": \"moe\",.*\"first\": 2,\n      \"last\": 65536,\n      \"step\": 2,\n      \"count\": 32768,\n      \"kind\": \"dense\",[^{}]*{[^{}]*}[^{}]*{[^{}]*}[^{}]*}\n  \\]\n}\n$")
set_tests_properties(cli.count.runs.deep cli.count.runs.deep_json PROPERTIES TIMEOUT 5)
smelt_cli_test(count.every_layer.json EXIT 0 ARGS count --json --every-layer ${SMELT_EX}/tiny-moe.json
               STDOUT "\"layer_runs\": \\[.*\n  \\],\n  \"layers\": \\[\n    {\n      \"layer\": 1,\n      \"kind\": \"dense\",.*\"layer\": 4,\n      \"kind\": \"moe\",\n      \"attention\": \"full\",\n      \"visits\": 1,")
smelt_cli_test(help.every_layer EXIT 0 ARGS count --help STDOUT "--every-layer")
smelt_cli_test(convert.roundtrip EXIT 0 ARGS convert ${SMELT_EX}/smelt-looped-12l.json
               STDOUT_FILE ${SMELT_EX}/smelt-looped-12l.json)
# Sparsity S = 1 - F/F0 with every expert active: 1 - 392,960 / 761,600 = 48.40% (tests/unit/count/sparsity_test.cpp).
smelt_cli_test(count.sparsity EXIT 0 ARGS count ${SMELT_EX}/tiny-moe.json
               STDOUT "sparsity S +48\\.40%\nsparsity reference: each config with every expert active\n$")
smelt_cli_test(count.sparsity_reference EXIT 0 ARGS count --sparsity-reference ${SMELT_EX}/tiny-moe.json ${SMELT_EX}/tiny-moe.json
               STDOUT "sparsity S +0\\.00%\nsparsity reference: tiny-moe\n$")
smelt_cli_test(count.runs_csv EXIT 0 ARGS count --runs-csv ${SMELT_EX}/tiny-moe.json
               STDOUT "^model,N,F,S\ntiny-moe,")
smelt_cli_test(error.sparsity_reference_missing EXIT 4 ARGS count --sparsity-reference /nonexistent/ref.json ${SMELT_EX}/tiny-moe.json
               STDOUT_EMPTY STDERR "while reading config '/nonexistent/ref.json': cannot open")
smelt_cli_test(error.json_and_runs_csv EXIT 2 ARGS count --json --runs-csv ${SMELT_EX}/tiny-moe.json
               STDOUT_EMPTY STDERR "--json, --runs-csv: choose one output format")
smelt_cli_test(help EXIT 0 ARGS count --help STDOUT "--convention")

# Bad input: exit code 2 (4 for unreadable files), the message, nothing on stdout.
smelt_cli_test(error.malformed EXIT 2 ARGS count ${SMELT_BAD}/malformed.json STDOUT_EMPTY
               STDERR "malformed.json:3:19: malformed JSON: syntax error while parsing object key")
smelt_cli_test(error.violations EXIT 2 ARGS count ${SMELT_BAD}/violations.json STDOUT_EMPTY
               STDERR "hidden_size: missing \\(required\\)\n.*hidden_sise: unknown key \\(did you mean \"hidden_size\"\\?\\)\n.*vocab_size = -3: must be positive\n.*attention.num_kv_heads = 4: must divide attention.num_heads = 6\n.*moe.top_k = 8: must be at most moe.num_experts = 4\n.*loop.span = \"3-9\": must satisfy 1 <= first <= last <= num_layers = 4")
smelt_cli_test(error.span_words EXIT 2 ARGS count ${SMELT_BAD}/loops/bad-span-words.json STDOUT_EMPTY
               STDERR "loops\\[1\\].injection = \"gated\": must be one of none, linear\n.*loops\\[1\\].kv_policy = \"sometimes\": must be one of per_visit, shared, active\n.*loops\\[0\\].count = 0: must be positive\n.*loops\\[1\\].span = \"2-5\": must satisfy 1 <= first <= last <= num_layers = 4")
smelt_cli_test(error.one_bad_of_two EXIT 2 ARGS count ${SMELT_EX}/tiny-moe.json ${SMELT_BAD}/violations.json
               STDOUT_EMPTY STDERR "vocab_size = -3")
smelt_cli_test(error.missing_file EXIT 4 ARGS count /nonexistent/config.json STDOUT_EMPTY
               STDERR "while reading config '/nonexistent/config.json': cannot open")
smelt_cli_test(error.context EXIT 2 ARGS count --context 0 ${SMELT_EX}/tiny-moe.json STDOUT_EMPTY
               STDERR "--context = 0: must be between 1 and 1073741824 tokens")
smelt_cli_test(error.convention EXIT 2 ARGS count --convention 6N ${SMELT_EX}/tiny-moe.json STDOUT_EMPTY
               STDERR "--convention = \"6N\": must be one of smelt, megatron")
smelt_cli_test(error.no_config EXIT 2 ARGS count STDOUT_EMPTY STDERR "CONFIG is required")
smelt_cli_test(error.unknown_model_type EXIT 2 ARGS count ${SMELT_BAD}/unknown_model_type.json STDOUT_EMPTY
               STDERR "model_type = \"gpt2\": not supported; supported: dbrx, ")

# sweep: the matched ablation grid; rows outside the tolerance are marked "no", not errors (exit code 0).
smelt_cli_test(sweep.table EXIT 0 ARGS sweep ${SMELT_EX}/smelt-baseline-12l.json
               STDOUT "kind +variant +span +loops +depth +executed +H +experts +heads/kv/hd +FLOPs +params +KV +max +within +depth/width +memory\nbaseline +- +none +1 +12 +12 +1280 +192 +10/2/128 +\\+0.000% +\\+0.000% +\\+0.000% +0.000% +yes +0.00937 +\\+0.000%\nloop +25% +5-7 +2 +12 +15 .*\nloop +50% +4-9 +2 +12 +18 +1152 +240 +12/3/56 .* no .*\ndepth +1.5x +none +1 +18 +18 .*\n[0-9]+ of 17 rows within the 1% tolerance\n")
smelt_cli_test(sweep.percent EXIT 0 ARGS sweep ${SMELT_EX}/tiny-moe.json --spans 50% --loops 3 --depths none
               STDOUT "\nloop +50% +2-3 +3 +4 +8 .*\n0 of 1 rows within")
smelt_cli_test(sweep.csv EXIT 0 ARGS sweep --csv --depths none ${SMELT_EX}/smelt-baseline-12l.json
               STDOUT "^kind,span_fraction,depth_multiplier,span,loops,depth,executed_layers,hidden_size,num_experts,num_heads,num_kv_heads,head_dim,flops_mismatch_pct,params_mismatch_pct,kv_mismatch_pct,max_abs_mismatch_pct,within_tolerance,depth_to_width,memory_bytes,memory_mismatch_pct,training_seconds_per_token,training_time_mismatch_pct\nbaseline,0,1,none,1,12,12,1280,192,10,2,128,0,0,0,0,yes,0.009375,[0-9]+,0,,\nloop,0.25,1,5-7,2,12,15,")
smelt_cli_test(sweep.json EXIT 0 ARGS sweep --json --spans 0 --depths 0.5 ${SMELT_EX}/smelt-baseline-12l.json
               STDOUT "^{\n  \"schema_version\": 1,\n  \"kind\": \"sweep\",\n  \"baseline\": \"smelt-baseline-12l\",.*\"rows\": \\[\n    {\n      \"kind\": \"baseline\",.*\"kind\": \"depth\",.*\"depth\": 6,")
smelt_cli_test(sweep.error.options EXIT 2 STDOUT_EMPTY
               ARGS sweep --spans 1.5,abc --loops 0 --depths 0 --hidden 7:3 ${SMELT_EX}/smelt-baseline-12l.json
               STDERR "--spans = \"abc\": must be fractions of the layers \\(0.25\\) or percentages \\(25%\\) separated by commas\n--spans = 1.5: must be a fraction of the layers in \\[0, 1\\] \\(0% to 100%\\)\n--loops = 0: must be at least 1\n--depths = 0: must be a depth multiplier > 0\n--hidden = 7:3: must be a positive value or a range LO:HI with LO <= HI")
smelt_cli_test(sweep.error.formats EXIT 2 STDOUT_EMPTY ARGS sweep --json --csv ${SMELT_EX}/smelt-baseline-12l.json
               STDERR "--json, --csv: choose one output format")

# fit and frontier: scaling laws (docs/scaling.md). runs-chinchilla.csv holds 30 noise-free runs of
# L = 1.8 + 450 / N^0.35 + 2000 / D^0.37; the law files are hand-written (law-ref.json: Epoch AI's refit of
# the Chinchilla data; law-target.json: the same with A = 400, whose gain is 1 - (400 / 482.01)^(1 / 0.3478)).
set(SMELT_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data)
smelt_cli_test(fit.table EXIT 0 ARGS fit ${SMELT_DATA}/runs-chinchilla.csv --group-by arch
               STDOUT "label +E +A +B +alpha +beta +objective +rmse +runs +starts +converged\ndense +1.8 +450 +2000 +0.35 +0.37 .* 30 +[0-9]+/4500 +yes\n")
smelt_cli_test(fit.json EXIT 0 ARGS fit --json ${SMELT_DATA}/runs-chinchilla.csv
               STDOUT "^{\n  \"schema_version\": 1,\n  \"kind\": \"laws\",\n  \"laws\": \\[\n    {\n      \"form\": \"chinchilla\",.*\"alpha\": 0\\.3(4999999|5000000)[0-9]*,\n        \"beta\": 0\\.3(6999999|7000000)[0-9]*\n.*\"converged\": true,")
smelt_cli_test(fit.error.options EXIT 2 STDOUT_EMPTY
               ARGS fit --form kaplan --delta 0 --bootstrap -1 ${SMELT_DATA}/runs-chinchilla.csv
               STDERR "--form = \"kaplan\": must be one of chinchilla, smelt\n--bootstrap = -1: must be between 0 and 100000\n--delta = 0: must be a positive number\n")
smelt_cli_test(fit.error.columns EXIT 2 STDOUT_EMPTY ARGS fit --form smelt ${SMELT_DATA}/runs-chinchilla.csv
               STDERR "missing column \"F\"")
smelt_cli_test(frontier.table EXIT 0
               ARGS frontier --law ${SMELT_DATA}/law-ref.json --law ${SMELT_DATA}/law-target.json --budget 1e20,1e22
               STDOUT "reference: dense \\(.*law-ref.json\\)\nbudget +law +form +size +tokens +TPP +loss +gain over dense\n1e\\+20 +dense +chinchilla +853.477 M params +19.528 B +22.88 \\[20.68, 22.92\\] +2.55310 +-\n +looped +chinchilla +657.186 M params +25.361 B +38.59 \\[33.14, 43.54\\] +2.48598 +\\+41.50% \\[\\+34.68%, \\+45.94%\\]\n1e\\+22 +dense .* 20.37 \\[17.61, 21.34\\] .*\n +looped .* +\\+41.50% \\[\\+39.19%, \\+45.71%\\]\n.*\nTPP: tokens per parameter, D\\* / N\\* \\(chinchilla\\) or D\\* / \\(F\\*/6\\) \\(smelt\\); \\[2.5%, 97.5%\\] over the law's bootstrap samples\n")
smelt_cli_test(frontier.json EXIT 0
               ARGS frontier --json --law ${SMELT_DATA}/law-ref.json --law ${SMELT_DATA}/law-target.json --budget 1e22
               STDOUT "^{\n  \"schema_version\": 1,\n  \"kind\": \"frontier\",\n  \"reference\": \"dense\",\n  \"sparsity\": 0.0,.*\"compute\": 1e\\+22,.*\"name\": \"looped\",.*\"loss\": 2.11127849[0-9]*,\n          \"tpp\": 34.3576373[0-9]*,\n          \"tpp_interval\": \\[\n            28.3945533[0-9]*,\n            38.4145824[0-9]*\n          \\],\n          \"gain\": 0.41504983229[0-9]*,\n          \"gain_interval\": \\[\n")
smelt_cli_test(frontier.sparsity EXIT 0
               ARGS frontier --law ${SMELT_DATA}/law-ref.json --law ${SMELT_DATA}/law-smelt.json --budget 1e22 --sparsity 0.85
               STDOUT "smelt laws at sparsity 0.85\n.*\n +sparse +smelt +41.602 GFLOP/token +240.376 B +34.67 +2.11079 +\\+42.04%\n")
smelt_cli_test(frontier.error.no_law EXIT 2 STDOUT_EMPTY ARGS frontier --budget 1e20 STDERR "--law is required")
smelt_cli_test(frontier.error.budget EXIT 2 STDOUT_EMPTY
               ARGS frontier --law ${SMELT_DATA}/law-ref.json --budget 1e20,-1e20,abc,0 --sparsity 1
               STDERR "--budget = -1e\\+20: must be a positive number of FLOPs\n--budget = \"abc\": must be FLOPs separated by commas \\(1e20,1e21\\)\n--budget = 0: must be a positive number of FLOPs\n--sparsity = 1: must be in .0, 1\\)")  # (no bracket: an unmatched one breaks CMake lists)
smelt_cli_test(frontier.error.below_e EXIT 2 STDOUT_EMPTY
               ARGS frontier --law ${SMELT_DATA}/law-ref.json --law ${SMELT_DATA}/law-low-e.json --budget 1e22,1e26
               STDERR "law-low-e.json: gain of law 'low-e' over law 'dense' at compute 1e\\+26: the reference cannot reach the target's frontier loss: loss = 1.79906: at or below the law's irreducible loss E = 1.8169\n$")
smelt_cli_test(frontier.error.law_file EXIT 2 STDOUT_EMPTY
               ARGS frontier --law ${SMELT_DATA}/runs-chinchilla.csv --budget 1e20
               STDERR "while reading laws '.*runs-chinchilla.csv':\n  .*runs-chinchilla.csv:1:1: malformed JSON")

# Epoch AI's extraction of the Chinchilla runs, read under our column names (only where ../shared is beside us).
set(EPOCH_CSV ${PROJECT_SOURCE_DIR}/../shared/data/chinchilla/svg_extracted_data.csv)
if(EXISTS ${EPOCH_CSV})
  smelt_cli_test(fit.epoch.rename EXIT 0 ARGS fit ${EPOCH_CSV} --rename "Model Size=N" --rename "Training FLOP=C"
                 STDOUT "\\(all\\) +1.89[0-9]+ +49[0-9.]+ .* 245 ")
endif()
smelt_cli_test(fit.error.rename EXIT 2 ARGS fit ${SMELT_BAD}/runs-chinchilla.csv --rename "Size" STDOUT_EMPTY
               STDERR "--rename = \"Size\": must be OLD=NEW")
# A layer's anatomy (docs/anatomy.md): tiny-moe's layer 2, MoE; its experts' gate 64 x 32 = 2,048 elements, 8 of them.
smelt_cli_test(anatomy.text EXIT 0 ARGS anatomy --layer 2 ${SMELT_EX}/tiny-moe.json
               STDOUT "^tiny-moe, layer 2 of 4 \\(MoE\\)\n.*ffn.experts.\\*.gate_proj.weight +experts +2048 +8 +yes\n.*experts +64 +64 +2\n.*attention core: query-key width 64, value width 64, KV cache 64 elements a token\n$")
smelt_cli_test(anatomy.json EXIT 0 ARGS anatomy --json ${SMELT_EX}/tiny-moe.json
               STDOUT "^{\n  \"layer\": 1,\n  \"moe\": false,\n  \"tensors\": \\[\n    {\n      \"name\": \"attn_norm.weight\",")
smelt_cli_test(anatomy.layer_past_the_last EXIT 2 ARGS anatomy --layer 5 ${SMELT_EX}/tiny-moe.json
               STDOUT_EMPTY STDERR "^smelt-match: error: --layer = 5: must be a stored layer, 1 to 4\n$")
smelt_cli_test(anatomy.layer_zero EXIT 2 ARGS anatomy --layer 0 ${SMELT_EX}/tiny-moe.json
               STDOUT_EMPTY STDERR "^smelt-match: error: --layer = 0: must be a stored layer, 1 to 4\n$")
