// Internal entry points shared by validate() and count().
#pragma once

#include "smelt/count.hpp"

namespace smelt::detail {

// Counts a config whose fields are in range; throws detail::overflow when a
// total leaves 64-bit integers.
CostReport count_unchecked(const ModelConfig& config, const CountOptions& options);

// validate() without the overflow check.
void validate_fields(const ModelConfig& config);

// The config_error message for an overflow while counting `config`.
std::string overflow_message(const ModelConfig& config, const char* what);

}  // namespace smelt::detail
