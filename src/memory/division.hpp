// Division rounded up: a shard of `a` things over `b` ranks holds at most this many.
#pragma once

#include <cstdint>

namespace smelt::memory_detail {

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace smelt::memory_detail
