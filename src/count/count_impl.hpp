// Internal entry points of count: the count itself, and the rule that its
// totals fit in 64-bit integers, which validate(), count(), the config readers
// (accept.cpp) and the solver's exact budgets share.
#pragma once

#include <string>

#include "smelt/count.hpp"
#include "smelt/schedule.hpp"

namespace smelt::count_detail {

// Counts a config whose fields are in range; throws detail::overflow when a
// total leaves 64-bit integers.
CostReport count_unchecked(const ModelConfig& config, const CountOptions& options);

// What the looped spans store and run beside their layers (docs/counting.md,
// "Loop forms"): exit gates H -> 1 with a bias, stored once, 2 H FLOPs a token
// on every pass. Exact integers; fields in range, so the products fit.
struct LoopExtras {
  std::int64_t params = 0;
  std::int64_t matmul_flops_per_token = 0;
};
LoopExtras loop_extras(const ModelConfig& config);

// Tokens a layer of `block` caches over all its passes, `held` a visit's at
// the context, by its span's KV policy (config.hpp, KvPolicy).
std::int64_t kv_tokens_over_passes(const ModelConfig& config, const LayerBlock& block, std::int64_t held);

// The config_error message for an overflow while counting `config`.
std::string overflow_message(const ModelConfig& config, const char* what);

// Throws overflow_error (overflow_message) when a total of `config`, counted
// with the default options, leaves 64-bit integers. `config` has passed
// validate_fields (config/validate_fields.hpp).
void check_counts_fit(const ModelConfig& config);

}  // namespace smelt::count_detail
