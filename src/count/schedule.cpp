#include "smelt/schedule.hpp"

namespace smelt {

std::int64_t LayerSchedule::executed_layers() const noexcept {
  std::int64_t n = 0;  // a validated config: at most 65536 layers x 1024 passes
  for (const LayerBlock& b : blocks) n += b.layers() * b.passes;
  return n;
}

std::vector<LayerVisit> LayerSchedule::visits() const {
  std::vector<LayerVisit> out;
  out.reserve(static_cast<std::size_t>(executed_layers()));
  for (const LayerBlock& b : blocks)
    for (std::int64_t r = 0; r < b.passes; ++r)
      for (std::int64_t i = b.first; i <= b.last; ++i) out.push_back({i, r});
  return out;
}

LayerSchedule schedule(const ModelConfig& c) {
  LayerSchedule s;
  const std::int64_t n = c.num_layers;
  if (!c.loop.active()) {
    if (n > 0) s.blocks.push_back({0, n - 1, 1});
    return s;
  }
  const std::int64_t first = c.loop.first - 1;  // 0-based span
  const std::int64_t last = c.loop.last - 1;
  if (first > 0) s.blocks.push_back({0, first - 1, 1});
  s.blocks.push_back({first, last, c.loop.count});
  if (last + 1 < n) s.blocks.push_back({last + 1, n - 1, 1});
  return s;
}

}  // namespace smelt
