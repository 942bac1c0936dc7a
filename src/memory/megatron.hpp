// The megatron convention: Megatron-LM's theoretical memory report
// (megatron/training/theoretical_memory_usage.py, in the expert-parallel form
// of its pull request #4687), transcribed as a formula (docs/memory.md).
#pragma once

#include "memory/resolved_layout.hpp"
#include "smelt/config.hpp"
#include "smelt/memory.hpp"

namespace smelt::memory_detail {

// The first pipeline stage, which the formula takes as the most loaded: its
// weights, gradients and optimizer state (Megatron's one "weight and
// optimizer" figure, split by bytes per parameter) and its activations, each
// of Megatron's two floats rounded to the byte.
StageMemory megatron_stage(const ModelConfig& config, const ResolvedLayout& r);

}  // namespace smelt::memory_detail
