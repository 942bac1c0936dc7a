# Writes the hostile inputs of cli_hostile_tests.cmake into DIR at test time:
# the big and deep ones are too large to keep in the repository.
# -DDIR=<output directory> -DEXAMPLE=<a valid native config>
file(MAKE_DIRECTORY ${DIR} ${DIR}/a-directory)
string(REPEAT "[" 100000 open)
string(REPEAT "]" 100000 close)
set(deep "${open}${close}")

file(WRITE ${DIR}/number.json "{\"schema_version\": 1,\n \"vocab_size\": 1e309}\n")
file(WRITE ${DIR}/number-hf.json "{\"model_type\": \"mixtral\", \"hidden_size\": -1e400}\n")
file(WRITE ${DIR}/number-runs.json "[{\"N\": 1e9, \"D\": 2e10, \"loss\": 1e999}]\n")
file(WRITE ${DIR}/number-law.json
     "{\"form\": \"chinchilla\", \"params\": {\"E\": 1.8, \"A\": 1e309, \"B\": 2000, \"alpha\": 0.3, \"beta\": 0.3}}\n")

file(WRITE ${DIR}/deep.json "{\"schema_version\":1,\"vocab_size\":${deep}}\n")
file(WRITE ${DIR}/deep-hf.json "{\"model_type\":\"mixtral\",\"hidden_size\":${deep}}\n")
file(WRITE ${DIR}/deep-runs.json "[{\"N\":${deep},\"D\":1e9,\"loss\":3}]\n")
file(WRITE ${DIR}/deep-law.json "{\"schema_version\":1,\"laws\":${deep}}\n")

# A value and a name of 1 MiB: echoed cut, tabulated cut.
string(REPEAT "y" 1048576 long)
file(READ ${EXAMPLE} example)
string(REPLACE "\"hidden_size\": 64" "\"hidden_size\": \"${long}\"" long_value "${example}")
file(WRITE ${DIR}/long-value.json "${long_value}")
string(REPLACE "\"name\": \"tiny-moe\"" "\"name\": \"${long}\"" long_name "${example}")
file(WRITE ${DIR}/long-name.json "${long_name}")
# A key of 1 MiB (unknown keys are named, and matched against the known ones).
string(REPLACE "\"vocab_size\"" "\"${long}\": 1, \"vocab_size\"" long_key "${example}")
file(WRITE ${DIR}/long-key.json "${long_key}")

# One value over the 4194304-value limit: the root object, its "schema_version",
# the array "x" and 4194302 elements in it are 4194305 values.
string(REPEAT "0," 4194301 zeros)
file(WRITE ${DIR}/many.json "{\"schema_version\":1,\"x\":[${zeros}0]}\n")

# 4,000,000 bad words in attention.pattern and as many in a loop's lora_targets (24 MB each): the first 100
# are listed, the rest only counted, so that reading takes about a second, not half a minute.
string(REPEAT "\"bad\"," 3999999 words)
string(REPLACE "\"pattern\": [\n      \"full\"\n    ]" "\"pattern\": [${words}\"bad\"]" many_words "${example}")
file(WRITE ${DIR}/many-words.json "${many_words}")
string(REPLACE "\"residual_scale\": 0.5" "\"residual_scale\": 0.5, \"lora_rank\": 4, \"lora_targets\": [${words}\"bad\"]"
       many_targets "${example}")
file(WRITE ${DIR}/many-targets.json "${many_targets}")

# The header's field and 4194304 more: one CSV field over the same limit.
string(REPEAT "1\n" 4194304 ones)
file(WRITE ${DIR}/many.csv "N\n${ones}")

# One byte over the 64 MiB input limit.
string(REPEAT " " 1048576 mib)
string(REPEAT "${mib}" 64 big)
file(WRITE ${DIR}/big.json "${big} ")
