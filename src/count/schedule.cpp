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
  std::int64_t next = 0;                 // 0-based: the first layer not yet scheduled
  for (const LoopConfig& l : c.loops) {  // disjoint and in layer order once validated
    if (!l.active()) continue;
    const std::int64_t first = l.first - 1;  // 0-based span
    const std::int64_t last = l.last - 1;
    if (first > next) s.blocks.push_back({next, first - 1, 1});
    s.blocks.push_back({first, last, l.count});
    next = last + 1;
  }
  if (next < c.num_layers) s.blocks.push_back({next, c.num_layers - 1, 1});
  return s;
}

}  // namespace smelt
