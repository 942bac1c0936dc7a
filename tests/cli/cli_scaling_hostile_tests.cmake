# fit and frontier on hostile input: every case exits 2 (bad input) or 3 (no finite law) with a message
# naming the option, row or law, or succeeds within its bounds; never exit 1 or a signal.
# smelt_cli_test(), SMELT_DATA and SMELT_BAD are cli_tests.cmake's.

# Options are checked before any work: a billion resamples used to end in bad_alloc (exit 1).
smelt_cli_test(fit.hostile.bootstrap EXIT 2 STDOUT_EMPTY
               ARGS fit --bootstrap 1000000000 ${SMELT_DATA}/runs-chinchilla.csv
               STDERR "--bootstrap = 1000000000: must be between 0 and 100000\n")
smelt_cli_test(fit.hostile.threads EXIT 2 STDOUT_EMPTY ARGS fit --threads 5000 ${SMELT_DATA}/runs-chinchilla.csv
               STDERR "--threads = 5000: must be between 0 \\(every core\\) and 1024\n")

# Runs that pull A to infinity: the fit used to print A = inf and write "A": null with exit 0.
smelt_cli_test(fit.hostile.not_finite EXIT 3 STDOUT_EMPTY
               ARGS fit --out ${CMAKE_CURRENT_BINARY_DIR}/never-written.json ${SMELT_DATA}/runs-nonfinite.csv
               STDERR "6 runs: the best fit of the chinchilla law has A = inf: parameters must be finite numbers")
add_test(NAME cli.fit.hostile.not_finite.no_file
         COMMAND ${CMAKE_COMMAND} -E rm ${CMAKE_CURRENT_BINARY_DIR}/never-written.json)
set_tests_properties(cli.fit.hostile.not_finite.no_file PROPERTIES DEPENDS cli.fit.hostile.not_finite WILL_FAIL TRUE)

# D = C / (6 N) out of the doubles although C and N are fine: both rows named, with the values.
smelt_cli_test(fit.hostile.d_overflow EXIT 2 STDOUT_EMPTY ARGS fit ${SMELT_DATA}/runs-d-overflow.csv
               STDERR "runs-d-overflow.csv: row 2: D = C / \\(6 N\\) = inf \\(C = 1e308, N = 1e-10\\): must be a positive finite number of tokens\n.*runs-d-overflow.csv: row 3: D = C / \\(6 N\\) = 0 \\(C = 1e-300, N = 1e300\\)")

# 400 threads under a 1 GB address-space limit: the threads that cannot start used to end in
# std::terminate; the work now runs on those that did. (Not under the sanitizers, whose shadow
# memory does not fit such a limit.)
if(NOT SMELT_SANITIZE)
  add_test(NAME cli.fit.hostile.threads_memory_limit
           COMMAND ${CMAKE_COMMAND}
                   "-DCOMMAND=sh|-c|ulimit -v 1000000 && exec $<TARGET_FILE:smelt-match> fit --threads 400 ${SMELT_DATA}/runs-chinchilla.csv"
                   -DEXIT=0 "-DSTDOUT=\\(all\\) +1.8 +450 +2000 +0.35 +0.37 "
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/support/expect.cmake)
endif()

# frontier over two laws of 16,000 bootstrap samples each: 54 s when every sample copied both laws
# (O(n^2)), milliseconds now; the timeout catches a return of the quadratic.
set(big_laws ${CMAKE_CURRENT_BINARY_DIR}/big-laws)
foreach(law IN ITEMS ref:482.01 target:400)
  string(REPLACE ":" ";" law ${law})
  list(GET law 0 label)
  list(GET law 1 a)
  add_test(NAME cli.frontier.hostile.samples.setup.${label}
           COMMAND ${CMAKE_COMMAND} -DOUT=${big_laws}-${label}.json -DLABEL=${label} -DA=${a} -DSAMPLES=16000
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/big_law.cmake)
  set_tests_properties(cli.frontier.hostile.samples.setup.${label} PROPERTIES FIXTURES_SETUP big_laws)
endforeach()
# Every sample is its law, so the interval is the gain itself: 1 - (400 / 482.01)^(1 / 0.3478) = 41.5%.
smelt_cli_test(frontier.hostile.samples EXIT 0
               ARGS frontier --law ${big_laws}-ref.json --law ${big_laws}-target.json --budget 1e22
               STDOUT "target +chinchilla .* \\+41.50% \\[\\+41.50%, \\+41.50%\\]\n")
set_tests_properties(cli.frontier.hostile.samples PROPERTIES FIXTURES_REQUIRED big_laws TIMEOUT 10)

# A 100 kB label is cut in messages (a hostile label can be 200 MB).
string(REPEAT "x" 100000 long_label)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/long-label-law.json
     "{\"schema_version\": 1, \"laws\": [{\"form\": \"chinchilla\", \"label\": \"${long_label}\", \"params\": {\"E\": 1.8, \"A\": -1, \"B\": 2000, \"alpha\": 0.35, \"beta\": 0.37}}]}\n")
smelt_cli_test(frontier.hostile.long_label EXIT 2 STDOUT_EMPTY
               ARGS frontier --law ${CMAKE_CURRENT_BINARY_DIR}/long-label-law.json --budget 1e22
               STDERR "law 'x+\\.\\.\\.' \\(100000 bytes\\): A = -1: must be positive for a compute-optimal frontier\n$")
# The table cuts it too; --json keeps it whole.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/long-label-good-law.json
     "{\"schema_version\": 1, \"laws\": [{\"form\": \"chinchilla\", \"label\": \"${long_label}\", \"params\": {\"E\": 1.8, \"A\": 450, \"B\": 2000, \"alpha\": 0.35, \"beta\": 0.37}}]}\n")
smelt_cli_test(frontier.hostile.long_label.table EXIT 0
               ARGS frontier --law ${CMAKE_CURRENT_BINARY_DIR}/long-label-good-law.json --budget 1e22
               STDOUT "^reference: x+\\.\\.\\. \\(100000 bytes\\) \\(")
# fit names a group by its label, cut: 2 runs labelled with 100 kB are too few for a law.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/long-label-runs.csv "N,D,loss,arch\n1e8,1e10,2.5,${long_label}\n1e9,1e11,2.2,${long_label}\n")
smelt_cli_test(fit.hostile.long_label EXIT 2 STDOUT_EMPTY
               ARGS fit --group-by arch ${CMAKE_CURRENT_BINARY_DIR}/long-label-runs.csv
               STDERR "arch 'x+\\.\\.\\. \\(100000 bytes\\)': 2 runs: a chinchilla law needs at least 6\n$")
