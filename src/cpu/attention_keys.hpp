// Which keys a query sees in the benchmark's attention (bench_reference.hpp):
// private to the bench module, shared by the reference forward and the step.
#pragma once

#include <algorithm>
#include <cstdint>

#include "smelt/config.hpp"

namespace smelt::cpu {

// First key query i (0-based in its sequence) may see; it sees keys lo..i.
inline std::int64_t first_key(const AttentionConfig& a, LayerAttention kind, std::int64_t i) {
  switch (kind) {
    case LayerAttention::full:
      return 0;
    case LayerAttention::sliding:
      return std::max<std::int64_t>(0, i - a.window + 1);
    case LayerAttention::chunked:
      return i - i % a.chunk;
  }
  return 0;
}

}  // namespace smelt::cpu
