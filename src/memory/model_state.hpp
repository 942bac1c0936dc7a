// What a pipeline stage stores whatever the batch: its share of the weights,
// their gradients and the optimizer's state (docs/memory.md, "Weights,
// gradients, optimizer").
#pragma once

#include <cstdint>
#include <vector>

#include "memory/resolved_layout.hpp"
#include "smelt/config.hpp"
#include "smelt/count.hpp"
#include "smelt/memory.hpp"

namespace smelt::memory_detail {

struct ModelState {
  MemoryPart weights;
  MemoryPart gradients;
  MemoryPart optimizer;
};

// The stage's state. `first` and `last` say whether it holds the embedding
// and the head (with the final norm and the MTP modules).
ModelState model_state(const ModelConfig& config, const CostReport& cost, const ResolvedLayout& r,
                       const std::vector<std::int64_t>& layers, bool first, bool last);

// Parameter tensors of one stored layer (0-based), as torch.nn modules hold
// them: AdamW keeps a `step` counter per trainable tensor.
std::int64_t layer_tensors(const ModelConfig& config, std::int64_t layer);

}  // namespace smelt::memory_detail
