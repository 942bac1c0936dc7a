#include "solve/space.hpp"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include <fmt/format.h>

#include "smelt/error.hpp"
#include "util/bounds.hpp"

namespace smelt::detail {
namespace {

using i64 = std::int64_t;
__extension__ typedef __int128 i128;  // products of counts, each up to 2^24 and more
// Knob values and alignments are bounded as the config fields they become
// (validate.cpp), so that no product formed from them overflows.
constexpr i64 kMaxSize = kMaxWidth;  // util/bounds.hpp
constexpr i64 kMaxDepth = kMaxLayers;
constexpr i64 kMaxContexts = kMaxListedValues;
constexpr double kMaxTolerancePct = 1e6;             // tolerance x 1e6 must fit an integer (solve_result.cpp)
constexpr i64 kMaxGeometries = i64{1} << 20;         // the search ranks every geometry, keeping its budgets
constexpr i64 kMaxLoopsEvaluated = i64{50'000'000};  // geometries x hidden sizes the search may visit

std::string range_text(const KnobRange& r) {
  return r.lo == r.hi ? fmt::format("{}", r.lo) : fmt::format("{}:{}", r.lo, r.hi);
}

// Multiples of `align` in [lo, hi], lo >= 1: counted, not listed.
i64 count_multiples(i64 lo, i64 hi, i64 align) { return lo > hi ? 0 : hi / align - (lo - 1) / align; }

std::vector<i64> list_multiples(i64 lo, i64 hi, i64 align) {
  std::vector<i64> out;
  if (lo > hi) return out;
  out.reserve(static_cast<std::size_t>(count_multiples(lo, hi, align)));
  for (i64 v = (lo + align - 1) / align * align; v <= hi; v += align) out.push_back(v);
  return out;
}

// Checks a knob's range against [1, max] and counts its multiples of `align`
// (0 with an error, or when the alignment is bad: reported with the alignment).
// Violations name `option`. Nothing is allocated: the space is sized first.
i64 check_knob(const std::string& option, const KnobRange& r, i64 max, i64 align, const std::string& align_option,
               std::vector<std::string>& errors) {
  if (r.lo < 1 || r.hi < r.lo) {
    errors.push_back(
        fmt::format("{} = {}: must be a positive value or a range LO:HI with LO <= HI", option, range_text(r)));
    return 0;
  }
  if (r.hi > max) {
    errors.push_back(fmt::format("{} = {}: must be at most {}", option, range_text(r), max));
    return 0;
  }
  if (align < 1 || align > max) return 0;  // an alignment is bounded as the knob it aligns
  const i64 n = count_multiples(r.lo, r.hi, align);
  if (n == 0)
    errors.push_back(
        r.lo == r.hi
            ? fmt::format("{} = {}: must be a multiple of {} = {}", option, r.lo, align_option, align)
            : fmt::format("{} = {}: contains no multiple of {} = {}", option, range_text(r), align_option, align));
  return n;
}

void check_in(const char* option, i64 value, i64 max, std::vector<std::string>& errors) {
  if (value < 1)
    errors.push_back(fmt::format("{} = {}: must be positive", option, value));
  else if (value > max)
    errors.push_back(fmt::format("{} = {}: must be at most {}", option, value, max));
}

// (query heads, KV heads) pairs with KV heads dividing the query heads, both in
// their ranges (lo >= 1). Counting and listing go KV head by KV head, over the
// multiples of each: O(KV range + pairs), never a trial division of every pair.
i64 count_head_pairs(const KnobRange& q, const KnobRange& kv) {
  i64 n = 0;
  for (i64 k = kv.lo; k <= std::min(kv.hi, q.hi); ++k) n += count_multiples(q.lo, q.hi, k);
  return n;
}

std::vector<std::pair<i64, i64>> list_head_pairs(const KnobRange& q, const KnobRange& kv) {
  std::vector<std::pair<i64, i64>> out;
  out.reserve(static_cast<std::size_t>(count_head_pairs(q, kv)));
  for (i64 k = kv.lo; k <= std::min(kv.hi, q.hi); ++k)
    for (i64 m = (q.lo + k - 1) / k * k; m <= q.hi; m += k) out.emplace_back(m, k);
  std::sort(out.begin(), out.end());  // by query heads, then KV heads, as the search has always listed them
  return out;
}

// Width scaled from the Baseline's in proportion to H, to the nearest multiple
// of `align` (halves round up), at least `align`.
i64 scaled_width(i64 width, i64 hidden, i64 base_hidden, i64 align) {
  if (width == 0) return 0;
  const i64 den = base_hidden * align;
  const i64 units = (2 * width * hidden + den) / (2 * den);
  return std::max<i64>(units, 1) * align;
}

}  // namespace

Plan make_plan(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
               const MatchOptions& options) {
  validate(baseline);
  std::vector<std::string> errors;
  Plan plan;
  plan.baseline = baseline;
  plan.space = space;
  plan.options = options;
  const ModelConfig& b = baseline;

  // Every scalar's range first: the domains below multiply and divide by them.
  check_in("--align-hidden", space.align_hidden, kMaxSize, errors);
  check_in("--align-experts", space.align_experts, kMaxExperts, errors);
  check_in("--align-head-dim", space.align_head_dim, kMaxSize, errors);
  check_in("--min-head-dim", space.min_head_dim, kMaxSize, errors);
  check_in("--align-ffn", space.align_ffn, kMaxSize, errors);
  if (options.top < 1) errors.push_back(fmt::format("--top = {}: must be positive", options.top));
  if (!(options.tolerance_pct >= 0))
    errors.push_back(fmt::format("--tolerance = {}: must be a percentage >= 0", options.tolerance_pct));
  else if (options.tolerance_pct > kMaxTolerancePct)
    errors.push_back(fmt::format("--tolerance = {}: must be at most {}", options.tolerance_pct, kMaxTolerancePct));
  if (options.match.empty()) errors.push_back("--match = \"\": must name at least one of flops, params, kv");

  plan.depth = recipe.depth.value_or(b.num_layers);
  const bool depth_ok = plan.depth >= 1 && plan.depth <= kMaxDepth;
  if (!depth_ok)
    errors.push_back(fmt::format("--depth = {}: must be between 1 and {}", plan.depth, kMaxDepth));
  else if (plan.depth != b.num_layers && !b.moe.layers.empty())
    errors.push_back(fmt::format(
        "--depth = {}: the Baseline lists its MoE layers explicitly, so its depth cannot change", plan.depth));
  // With a bad depth, check the rest of the recipe (and size the defaults
  // below) at the Baseline's.
  const i64 depth = depth_ok ? plan.depth : b.num_layers;
  try {
    plan.loop = resolve_loop(recipe, depth);
  } catch (const config_error& e) {
    errors.insert(errors.end(), e.violations().begin(), e.violations().end());
  }

  plan.contexts = options.contexts.empty() ? std::vector<i64>{b.context_length} : options.contexts;
  // Every candidate is counted once per context.
  if (static_cast<i64>(plan.contexts.size()) > kMaxContexts)
    errors.push_back(fmt::format("--context: {} contexts listed: at most {}", plan.contexts.size(), kMaxContexts));
  for (const i64 t : plan.contexts)
    if (t < 1 || t > kMaxContext)
      errors.push_back(fmt::format("--context = {}: must be between 1 and {}", t, kMaxContext));

  // A model that executes at least as many layers as the Baseline pays for them
  // with a narrower H (default [H/4, H]); a shallower one widens ([H, 2H]).
  // Depth and loops are in range here: the products fit.
  const auto executed = [](i64 layers, const LoopConfig& l) {
    return layers + (l.active() ? (l.last - l.first + 1) * (l.count - 1) : 0);
  };
  const bool deeper = executed(depth, plan.loop) >= executed(b.num_layers, b.loop);
  const KnobRange hidden =
      space.hidden.value_or(deeper ? KnobRange{std::max<i64>(1, b.hidden_size / 4), b.hidden_size}
                                   : KnobRange{b.hidden_size, std::min(2 * b.hidden_size, kMaxSize)});
  const i64 n_hidden = check_knob("--hidden", hidden, kMaxSize, space.align_hidden, "--align-hidden", errors);

  KnobRange experts{0, 0};  // the usable range, multiples of align_experts
  if (b.is_moe()) {
    const KnobRange asked =
        space.experts.value_or(KnobRange{b.moe.top_k, std::min(8 * b.moe.num_experts, kMaxExperts)});
    const i64 n = check_knob("--experts", asked, kMaxExperts, space.align_experts, "--align-experts", errors);
    experts = {std::max(asked.lo, b.moe.top_k), asked.hi};
    if (n > 0 && count_multiples(experts.lo, experts.hi, space.align_experts) == 0)
      errors.push_back(
          fmt::format("--experts = {}: must allow at least top_k = {} experts", range_text(asked), b.moe.top_k));
  } else if (space.experts) {
    errors.push_back("--experts: the Baseline has no routed experts to vary");
  }

  i64 geometries = 1;  // MLA: the Baseline's attention as it is
  KnobRange head_dim, kv_heads, heads;
  if (b.attention.type == AttentionType::mla) {
    if (space.head_dim || space.kv_heads || space.heads || space.free_heads)
      errors.push_back(
          "--head-dim, --kv-heads, --heads, --free-heads: not supported for an MLA Baseline (its "
          "attention is kept as it is)");
  } else {
    const i64 h = b.attention.num_heads;
    heads = space.heads.value_or(space.free_heads ? KnobRange{std::max<i64>(1, h / 2), std::min(2 * h, kMaxSize)}
                                                  : KnobRange{h, h});
    // Defaults follow the recipe's direction: a model that executes more layers
    // than the Baseline must shrink its per-layer KV cache, so head_dim and KV
    // heads may only shrink; otherwise (fewer executed layers) they may grow 2x.
    const i64 grow = deeper ? 1 : 2;
    const i64 min_head_dim = std::clamp<i64>(space.min_head_dim, 1, kMaxSize);
    head_dim = space.head_dim.value_or(
        KnobRange{min_head_dim, std::clamp(grow * b.attention.head_dim, min_head_dim, kMaxSize)});
    kv_heads = space.kv_heads.value_or(KnobRange{1, std::min(grow * b.attention.num_kv_heads, kMaxSize)});
    const i64 n_dims = check_knob("--head-dim", head_dim, kMaxSize, space.align_head_dim, "--align-head-dim", errors);
    const i64 n_usable =
        n_dims > 0 ? count_multiples(std::max(head_dim.lo, min_head_dim), head_dim.hi, space.align_head_dim) : 0;
    if (n_dims > 0 && n_usable == 0)
      errors.push_back(fmt::format("--head-dim = {}: must allow a head_dim of at least --min-head-dim = {}",
                                   range_text(head_dim), space.min_head_dim));
    head_dim.lo = std::max(head_dim.lo, min_head_dim);
    const i64 n_heads = check_knob("--heads", heads, kMaxSize, 1, "1", errors);
    const i64 before = static_cast<i64>(errors.size());
    if (space.kv_heads) (void)check_knob("--kv-heads", kv_heads, kMaxSize, 1, "1", errors);
    const bool kv_ok = static_cast<i64>(errors.size()) == before;
    const i64 pairs = n_heads > 0 && kv_ok ? count_head_pairs(heads, kv_heads) : 0;
    if (space.kv_heads && pairs == 0 && n_heads > 0 && kv_ok && n_usable > 0)
      errors.push_back(fmt::format("--kv-heads = {}: contains no divisor of the query heads ({})",
                                   range_text(*space.kv_heads), range_text(heads)));
    geometries = pairs * n_usable;  // at most 2^24 x 17 pairs x 2^24 head sizes: fits
  }
  // The size of the space before any of it is listed.
  if (errors.empty() && geometries > kMaxGeometries)
    errors.push_back(
        fmt::format("search space too large: {} attention geometries (at most {})", geometries, kMaxGeometries));
  else if (errors.empty() && static_cast<i128>(geometries) * n_hidden > kMaxLoopsEvaluated)
    errors.push_back(fmt::format("search space too large: {} attention geometries x {} hidden sizes (at most {} pairs)",
                                 geometries, n_hidden, kMaxLoopsEvaluated));
  if (!errors.empty()) throw config_error(std::move(errors));

  plan.hidden = list_multiples(hidden.lo, hidden.hi, space.align_hidden);
  plan.experts = b.is_moe() ? list_multiples(experts.lo, experts.hi, space.align_experts) : std::vector<i64>{0};
  if (b.attention.type == AttentionType::mla) {
    plan.geometries = {{b.attention.num_heads, b.attention.num_kv_heads, b.attention.head_dim}};
  } else {
    const std::vector<i64> head_dims = list_multiples(head_dim.lo, head_dim.hi, space.align_head_dim);
    plan.geometries.reserve(static_cast<std::size_t>(geometries));
    for (const auto& [q, kv] : list_head_pairs(heads, kv_heads))
      for (const i64 d : head_dims) plan.geometries.push_back({q, kv, d});
  }
  // The knobs are positive and bounded; what can still break is the template
  // itself at another depth (a pattern longer than the layers, dense-first
  // layers beyond them).
  try {
    validate(make_candidate(plan, plan.hidden.front(), plan.experts.front(), plan.geometries.front()));
  } catch (const config_error& e) {
    std::vector<std::string> lines;
    for (const auto& v : e.violations())
      lines.push_back(fmt::format("--depth = {}: the derived config breaks a rule: {}", plan.depth, v));
    throw config_error(std::move(lines));
  }
  return plan;
}

ModelConfig make_candidate(const Plan& plan, i64 hidden, i64 experts, const Geometry& g) {
  const ModelConfig& b = plan.baseline;
  ModelConfig c = b;
  c.num_layers = plan.depth;
  c.hidden_size = hidden;
  c.attention.num_heads = g.heads;
  if (b.attention.type == AttentionType::gqa) {
    c.attention.num_kv_heads = g.kv_heads;
    c.attention.head_dim = g.head_dim;
  }
  if (b.is_moe()) c.moe.num_experts = experts;
  if (plan.space.ffn == FfnScaling::proportional) {
    const i64 a = plan.space.align_ffn;
    c.moe.expert_width = scaled_width(b.moe.expert_width, hidden, b.hidden_size, a);
    c.moe.shared_width = scaled_width(b.moe.shared_width, hidden, b.hidden_size, a);
    c.ffn.dense_width = scaled_width(b.ffn.dense_width, hidden, b.hidden_size, a);
  }
  c.loop = plan.loop;
  return c;
}

Knobs knobs_of(const ModelConfig& c) {
  return {c.hidden_size,        c.moe.num_experts,  c.attention.num_heads, c.attention.num_kv_heads,
          c.attention.head_dim, c.moe.expert_width, c.moe.shared_width,    c.ffn.dense_width};
}

bool tie_break_less(const Plan& plan, i64 h1, i64 e1, const Geometry& g1, i64 h2, i64 e2, const Geometry& g2) {
  const auto& a = plan.baseline.attention;
  const auto key = [&](i64 h, i64 e, const Geometry& g) {
    return std::make_tuple(h, -e, std::llabs(g.heads - a.num_heads), std::llabs(g.kv_heads - a.num_kv_heads),
                           std::llabs(g.head_dim - a.head_dim), g.heads, g.kv_heads, g.head_dim);
  };
  return key(h1, e1, g1) < key(h2, e2, g2);
}

}  // namespace smelt::detail
