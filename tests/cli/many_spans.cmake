# Writes a config of 65,536 layers looped as 32,768 spans of two layers, each twice: -DOUT=<file>.
set(spans "")
foreach(i RANGE 0 32767)
  math(EXPR first "2 * ${i} + 1")
  math(EXPR last "2 * ${i} + 2")
  string(APPEND spans "{\"span\": \"${first}-${last}\", \"count\": 2},")
endforeach()
string(REGEX REPLACE ",$" "" spans "${spans}")
file(WRITE ${OUT} "{\"schema_version\": 1, \"vocab_size\": 100, \"num_layers\": 65536, \"hidden_size\": 8,
\"attention\": {\"num_heads\": 2, \"num_kv_heads\": 1, \"head_dim\": 4}, \"ffn\": {\"dense_width\": 16},
\"loops\": [${spans}]}\n")
