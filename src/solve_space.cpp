#include "solve_space.hpp"

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include <fmt/format.h>

#include "smelt/error.hpp"

namespace smelt::detail {
namespace {

using i64 = std::int64_t;
constexpr i64 kMaxSize = i64{1} << 24;
constexpr i64 kMaxLoopsEvaluated = i64{50'000'000};  // geometries x hidden sizes the search may visit

std::string range_text(const KnobRange& r) {
  return r.lo == r.hi ? fmt::format("{}", r.lo) : fmt::format("{}:{}", r.lo, r.hi);
}

// Multiples of `align` in [lo, hi]; violations name `option`.
std::vector<i64> multiples(const std::string& option, const KnobRange& r, i64 align, const std::string& align_option,
                           std::vector<std::string>& errors) {
  std::vector<i64> out;
  if (r.lo < 1 || r.hi < r.lo) {
    errors.push_back(
        fmt::format("{} = {}: must be a positive value or a range LO:HI with LO <= HI", option, range_text(r)));
    return out;
  }
  if (r.hi > kMaxSize) {
    errors.push_back(fmt::format("{} = {}: must be at most {}", option, range_text(r), kMaxSize));
    return out;
  }
  if (align < 1) return out;  // reported with the alignment
  for (i64 v = (r.lo + align - 1) / align * align; v <= r.hi; v += align) out.push_back(v);
  if (out.empty())
    errors.push_back(
        r.lo == r.hi
            ? fmt::format("{} = {}: must be a multiple of {} = {}", option, r.lo, align_option, align)
            : fmt::format("{} = {}: contains no multiple of {} = {}", option, range_text(r), align_option, align));
  return out;
}

void check_positive(const char* option, i64 value, std::vector<std::string>& errors) {
  if (value < 1) errors.push_back(fmt::format("{} = {}: must be positive", option, value));
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

  check_positive("--align-hidden", space.align_hidden, errors);
  check_positive("--align-experts", space.align_experts, errors);
  check_positive("--align-head-dim", space.align_head_dim, errors);
  check_positive("--min-head-dim", space.min_head_dim, errors);
  check_positive("--align-ffn", space.align_ffn, errors);
  check_positive("--top", options.top, errors);
  if (!(options.tolerance_pct >= 0))
    errors.push_back(fmt::format("--tolerance = {}: must be a percentage >= 0", options.tolerance_pct));
  if (options.match.empty()) errors.push_back("--match = \"\": must name at least one of flops, params, kv");

  plan.depth = recipe.depth.value_or(b.num_layers);
  if (plan.depth < 1 || plan.depth > (i64{1} << 16))
    errors.push_back(fmt::format("--depth = {}: must be between 1 and 65536", plan.depth));
  else if (plan.depth != b.num_layers && !b.moe.layers.empty())
    errors.push_back(fmt::format(
        "--depth = {}: the Baseline lists its MoE layers explicitly, so its depth cannot change", plan.depth));
  try {
    // With a bad depth, still check the rest of the recipe against the Baseline's.
    plan.loop = resolve_loop(recipe, plan.depth >= 1 && plan.depth <= (i64{1} << 16) ? plan.depth : b.num_layers);
  } catch (const config_error& e) {
    errors.insert(errors.end(), e.violations().begin(), e.violations().end());
  }

  plan.contexts = options.contexts.empty() ? std::vector<i64>{b.context_length} : options.contexts;
  for (const i64 t : plan.contexts)
    if (t < 1 || t > (i64{1} << 30))
      errors.push_back(fmt::format("--context = {}: must be between 1 and 1073741824", t));

  // A model that executes at least as many layers as the Baseline pays for them
  // with a narrower H (default [H/4, H]); a shallower one widens ([H, 2H]).
  const auto executed = [](i64 layers, const LoopConfig& l) {
    return layers + (l.active() ? (l.last - l.first + 1) * (l.count - 1) : 0);
  };
  const bool deeper = executed(plan.depth, plan.loop) >= executed(b.num_layers, b.loop);
  const KnobRange hidden = space.hidden.value_or(deeper ? KnobRange{std::max<i64>(1, b.hidden_size / 4), b.hidden_size}
                                                        : KnobRange{b.hidden_size, 2 * b.hidden_size});
  plan.hidden = multiples("--hidden", hidden, space.align_hidden, "--align-hidden", errors);

  if (b.is_moe()) {
    const KnobRange experts = space.experts.value_or(KnobRange{b.moe.top_k, 8 * b.moe.num_experts});
    plan.experts = multiples("--experts", experts, space.align_experts, "--align-experts", errors);
    const bool had_multiples = !plan.experts.empty();
    std::erase_if(plan.experts, [&](i64 e) { return e < b.moe.top_k; });
    if (plan.experts.empty() && had_multiples)
      errors.push_back(
          fmt::format("--experts = {}: must allow at least top_k = {} experts", range_text(experts), b.moe.top_k));
  } else {
    if (space.experts) errors.push_back("--experts: the Baseline has no routed experts to vary");
    plan.experts = {0};
  }

  if (b.attention.type == AttentionType::mla) {
    if (space.head_dim || space.kv_heads || space.heads || space.free_heads)
      errors.push_back(
          "--head-dim, --kv-heads, --heads, --free-heads: not supported for an MLA Baseline (its "
          "attention is kept as it is)");
    plan.geometries = {{b.attention.num_heads, b.attention.num_kv_heads, b.attention.head_dim}};
  } else {
    const i64 h = b.attention.num_heads;
    const KnobRange heads =
        space.heads.value_or(space.free_heads ? KnobRange{std::max<i64>(1, h / 2), 2 * h} : KnobRange{h, h});
    // Defaults follow the recipe's direction: a model that executes more layers
    // than the Baseline must shrink its per-layer KV cache, so head_dim and KV
    // heads may only shrink; otherwise (fewer executed layers) they may grow 2x.
    const i64 grow = deeper ? 1 : 2;
    const KnobRange head_dim = space.head_dim.value_or(
        KnobRange{space.min_head_dim, std::max(grow * b.attention.head_dim, space.min_head_dim)});
    const KnobRange kv_heads = space.kv_heads.value_or(KnobRange{1, grow * b.attention.num_kv_heads});
    std::vector<i64> head_dims = multiples("--head-dim", head_dim, space.align_head_dim, "--align-head-dim", errors);
    std::erase_if(head_dims, [&](i64 d) { return d < space.min_head_dim; });
    if (head_dims.empty() && head_dim.lo >= 1 && head_dim.hi >= head_dim.lo && space.align_head_dim >= 1)
      errors.push_back(fmt::format("--head-dim = {}: must allow a head_dim of at least --min-head-dim = {}",
                                   range_text(head_dim), space.min_head_dim));
    const std::vector<i64> head_counts = multiples("--heads", heads, 1, "1", errors);
    for (const i64 q : head_counts)
      for (i64 kv = 1; kv <= q; ++kv) {
        if (q % kv != 0) continue;
        if (kv < kv_heads.lo || kv > kv_heads.hi) continue;
        for (const i64 d : head_dims) plan.geometries.push_back({q, kv, d});
      }
    if (space.kv_heads && plan.geometries.empty() && !head_counts.empty() && !head_dims.empty())
      errors.push_back(fmt::format("--kv-heads = {}: contains no divisor of the query heads ({})",
                                   range_text(*space.kv_heads), range_text(heads)));
  }
  if (errors.empty() &&
      static_cast<i64>(plan.geometries.size()) * static_cast<i64>(plan.hidden.size()) > kMaxLoopsEvaluated)
    errors.push_back(fmt::format("search space too large: {} attention geometries x {} hidden sizes (at most {} pairs)",
                                 plan.geometries.size(), plan.hidden.size(), kMaxLoopsEvaluated));
  if (!errors.empty()) throw config_error(std::move(errors));
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
