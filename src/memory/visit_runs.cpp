// stage_visit_runs(): a stage's visits block by block, each block's share cut
// where the flags change and then into runs of one kind.
#include "memory/visit_runs.hpp"

#include <algorithm>
#include <cstddef>

#include "count/arithmetic_runs.hpp"

namespace smelt::memory_detail {
namespace {

constexpr std::size_t kKinds = 6;  // MoE or dense x three attention kinds

std::size_t kind_of(const ModelConfig& c, std::int64_t layer) {
  return (c.is_moe_layer(layer) ? 3 : 0) + static_cast<std::size_t>(c.attention_at(layer));
}

// The first block that holds a layer at or after `lo`: blocks cover the layers in order.
std::vector<LayerBlock>::const_iterator first_block(const LayerSchedule& s, std::int64_t lo) {
  return std::lower_bound(s.blocks.begin(), s.blocks.end(), lo,
                          [](const LayerBlock& b, std::int64_t layer) { return b.last < layer; });
}

struct Cutter {
  const ModelConfig& c;
  std::vector<StageVisitRun>& out;

  // Layers a..z of a block whose share of the stage starts at layer `from` and visit `base` (0-based), on the
  // passes p..q, with the same flags: cut into runs of one kind.
  void add(std::int64_t a, std::int64_t z, std::int64_t p, std::int64_t q, std::int64_t from, std::int64_t width,
           std::int64_t base, bool recomputed, bool no_grad) const {
    if (a > z || p > q) return;
    std::vector<std::size_t> group(static_cast<std::size_t>(z - a + 1));
    for (std::int64_t i = a; i <= z; ++i) group[static_cast<std::size_t>(i - a)] = kind_of(c, i);
    for (const count_detail::IndexRun& r :
         count_detail::arithmetic_runs(group, kKinds, count_detail::layer_periods(c, z - a + 1))) {
      StageVisitRun run;
      run.first = a + r.first;
      run.last = a + r.last;
      run.step = r.step;
      run.first_pass = p;
      run.last_pass = q;
      run.first_ordinal = base + p * width + (run.first - from);
      run.last_ordinal = base + q * width + (run.last - from);
      run.moe = r.group >= 3;
      run.attention = static_cast<LayerAttention>(r.group % 3);
      run.recomputed = recomputed;
      run.no_grad = no_grad;
      out.push_back(run);
    }
  }
};

}  // namespace

std::int64_t stage_visits(const LayerSchedule& s, std::int64_t lo, std::int64_t hi) {
  std::int64_t n = 0;  // a validated config: at most 65536 layers x 1024 passes
  for (auto b = first_block(s, lo); b != s.blocks.end() && b->first <= hi; ++b)
    n += (std::min(b->last, hi) - std::max(b->first, lo) + 1) * b->passes;
  return n;
}

std::vector<StageVisitRun> stage_visit_runs(const ModelConfig& c, const LayerSchedule& s, std::int64_t lo,
                                            std::int64_t hi, const StageVisitOptions& o) {
  std::vector<StageVisitRun> out;
  const Cutter cut{c, out};
  std::int64_t base = 0;  // the stage's visits before this block's
  for (auto b = first_block(s, lo); b != s.blocks.end() && b->first <= hi; ++b) {
    const std::int64_t a = std::max(b->first, lo), z = std::min(b->last, hi), width = z - a + 1;
    // Truncated backprop: the passes before the span's last backprop_passes run without gradients.
    std::int64_t trained_from = 0;
    if (o.truncated_backprop)
      if (const LoopConfig* span = c.loop_of(b->first); span != nullptr && span->backprop_passes > 0)
        trained_from = std::clamp<std::int64_t>(span->count - span->backprop_passes, 0, b->passes);
    for (const bool no_grad : {true, false}) {
      const std::int64_t p = no_grad ? 0 : trained_from, q = no_grad ? trained_from - 1 : b->passes - 1;
      if (p > q) continue;
      // Full recompute: the stage's first o.recomputed visits. Of these passes' visits, `covered` are.
      const std::int64_t start = base + p * width, visits = (q - p + 1) * width;
      const std::int64_t covered = std::clamp<std::int64_t>(o.recomputed - std::min(o.recomputed, start), 0, visits);
      if (covered == visits || covered == 0) {
        cut.add(a, z, p, q, a, width, base, covered > 0, no_grad);
        continue;
      }
      // Whole passes recomputed, then part of one pass, then the rest.
      const std::int64_t whole = covered / width, part = covered % width;
      cut.add(a, z, p, p + whole - 1, a, width, base, true, no_grad);
      cut.add(a, a + part - 1, p + whole, p + whole, a, width, base, true, no_grad);
      cut.add(a + part, z, p + whole, p + whole, a, width, base, false, no_grad);
      cut.add(a, z, p + whole + 1, q, a, width, base, false, no_grad);
    }
    base += width * b->passes;
  }
  std::sort(out.begin(), out.end(),
            [](const StageVisitRun& x, const StageVisitRun& y) { return x.first_ordinal < y.first_ordinal; });
  return out;
}

}  // namespace smelt::memory_detail
