// Internal entry points of count: the count itself, and the rule that its
// totals fit in 64-bit integers, which validate(), count(), the config readers
// (accept.cpp) and the solver's exact budgets share.
#pragma once

#include <string>

#include "smelt/count.hpp"

namespace smelt::detail {

// Counts a config whose fields are in range; throws detail::overflow when a
// total leaves 64-bit integers.
CostReport count_unchecked(const ModelConfig& config, const CountOptions& options);

// The config_error message for an overflow while counting `config`.
std::string overflow_message(const ModelConfig& config, const char* what);

// Throws overflow_error (overflow_message) when a total of `config`, counted
// with the default options, leaves 64-bit integers. `config` has passed
// validate_fields (config/validate_fields.hpp).
void check_counts_fit(const ModelConfig& config);

}  // namespace smelt::detail
