# The solver's per-kind budgets against count()'s report.
target_sources(smelt_tests PRIVATE unit/solve/exact_budget_test.cpp)
# The solver's pruning against brute force, the KV cache per element, the visit limit.
target_sources(smelt_tests PRIVATE unit/solve/solve_prune_test.cpp)
