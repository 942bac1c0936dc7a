#include "smelt/schedule.hpp"

#include <algorithm>

namespace smelt {

LayerSchedule schedule(const ModelConfig& c) {
  LayerSchedule s;
  const bool looped = c.loop.active();
  const std::int64_t first = looped ? c.loop.first - 1 : c.num_layers;  // 0-based span
  const std::int64_t last = looped ? c.loop.last - 1 : c.num_layers;
  s.visits.reserve(static_cast<std::size_t>(c.num_layers + (looped ? (last - first + 1) * (c.loop.count - 1) : 0)));
  for (std::int64_t i = 0; i < std::min(first, c.num_layers); ++i) s.visits.push_back({i, 0});
  if (looped)
    for (std::int64_t r = 0; r < c.loop.count; ++r)
      for (std::int64_t i = first; i <= last; ++i) s.visits.push_back({i, r});
  for (std::int64_t i = looped ? last + 1 : c.num_layers; i < c.num_layers; ++i) s.visits.push_back({i, 0});
  return s;
}

}  // namespace smelt
