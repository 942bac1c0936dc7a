# Writes a law file with many bootstrap samples: -DOUT=<file> -DLABEL=<label> -DA=<A> -DSAMPLES=<n>.
# Epoch AI's refit with A replaced; every sample is the point estimate.
set(sample "[1.8169, ${A}, 2085.43, 0.3478, 0.3658]")
math(EXPR rest "${SAMPLES} - 1")
string(REPEAT ",\n${sample}" ${rest} more)
file(WRITE ${OUT} "{\"schema_version\": 1, \"laws\": [{\"form\": \"chinchilla\", \"label\": \"${LABEL}\",
\"params\": {\"E\": 1.8169, \"A\": ${A}, \"B\": 2085.43, \"alpha\": 0.3478, \"beta\": 0.3658},
\"bootstrap\": [${sample}${more}]}]}\n")
