# The solver's per-kind budgets against count()'s report.
target_sources(smelt_tests PRIVATE unit/solve/exact_budget_test.cpp)
