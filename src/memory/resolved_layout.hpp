// A MemoryLayout checked against a config, its defaults resolved: the element
// sizes, the sequence, the stored layers of each pipeline stage and the sizes
// every term is divided by.
#pragma once

#include <cstdint>
#include <new>
#include <string_view>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/memory.hpp"
#include "util/checked.hpp"

namespace smelt {
// The memory model's refusal of what it does not model yet (a sandwich norm, a span's per-pass norm, gate, adapter,
// LoRA, truncated backprop or KV policy): config_error naming each field (memory.cpp).
void require_modelled(const ModelConfig& config);
}  // namespace smelt

namespace smelt::memory_detail {

struct ResolvedLayout {
  MemoryLayout layout;  // seq, context and the dtypes resolved
  std::int64_t param_bytes = 0;
  std::int64_t grad_bytes = 0;
  std::int64_t optimizer_bytes = 0;
  std::int64_t activation_bytes = 0;
  std::vector<std::vector<std::int64_t>> stage_layers;  // 0-based stored layers of each pipeline rank
  std::int64_t microbatches = 0;                        // resolved: at least pp when not given
  std::int64_t expert_dp = 1;                           // data-parallel ranks an expert's optimizer state spans
};

// The rules that tie the layout's parallel sizes to the config's heads, KV
// heads, FFN widths and experts (tp, ep, etp must divide them), added to `errors`.
void check_shards(const ModelConfig& config, const MemoryLayout& layout, detail::Violations& errors);

// The overflow of `quantity` (detail::overflow's) in a count of memory or time, named by the inputs that size it:
// the config's sizes for its parameters, else the layout's tokens (MemoryLayout::micro_batch and seq in training,
// batch and context in inference), as mentions the caller names its own way.
Violation overflow_violation(const ModelConfig& config, const MemoryLayout& layout, std::string_view quantity);

// A report (`what`: "memory report", "time report") that could not be allocated: it grows with the stages and the
// kinds of their layers, so only a layout of very many stages gets here; named by MemoryLayout::pp.
Violation out_of_memory_violation(const ModelConfig& config, const MemoryLayout& layout, std::string_view what);

// Runs `run` (the memory or the time report of the resolved layout `r`), an overflow named by the inputs that size
// it and an allocation failure by the layout: both the input's fault (config errors, exit code 2 in smelt-match).
template <class Run>
auto named_failures(const ModelConfig& config, const ResolvedLayout& r, std::string_view what, Run&& run) {
  try {
    return run();
  } catch (const detail::overflow& e) {
    throw overflow_error(overflow_violation(config, r.layout, e.quantity()));
  } catch (const std::bad_alloc&) {
    throw config_error(out_of_memory_violation(config, r.layout, what));
  }
}

// Checks every field of `layout` against its row and the config (config_error
// listing every field, value and rule at once) and resolves its defaults.
ResolvedLayout resolve_layout(const ModelConfig& config, const MemoryLayout& layout);

}  // namespace smelt::memory_detail
