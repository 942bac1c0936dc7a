#include "solve/space.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "smelt/count.hpp"
#include "smelt/detail/bounds.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/schedule.hpp"
#include "solve/attention_space.hpp"
#include "solve/knob_range.hpp"
#include "solve/memory_budget.hpp"
#include "solve/time_budget.hpp"
#include "time/step_time.hpp"
#include "util/mention.hpp"
#include "util/option_bounds.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares
namespace {

using i64 = std::int64_t;
__extension__ typedef __int128 i128;  // products of counts, each up to 2^24 and more
// Knob values and alignments are bounded as the config fields they become
// (validate.cpp), so that no product formed from them overflows.
constexpr i64 kMaxSize = kMaxWidth;  // smelt/detail/bounds.hpp
constexpr i64 kMaxContexts = kMaxListedValues;
constexpr i64 kMaxGeometries = i64{1} << 20;      // listed, and each ranked by its KV cache (solve.cpp)
constexpr i64 kMaxLoopsEvaluated = i64{1} << 28;  // (geometry, width, H) the search may visit: its worst case

// Width scaled from the Baseline's in proportion to H, to the nearest multiple
// of `align` (halves round up), at least `align`.
i64 scaled_width(i64 width, i64 hidden, i64 base_hidden, i64 align) {
  if (width == 0) return 0;
  const i64 den = base_hidden * align;
  const i64 units = (2 * width * hidden + den) / (2 * den);
  return std::max<i64>(units, 1) * align;
}

// Every scalar's range first: the domains below multiply and divide by them.
void check_scalars(const SearchSpace& space, const MatchOptions& options, Violations& errors) {
  for (const char* name : {"align_hidden", "align_experts", "align_head_dim", "min_head_dim", "align_ffn"})
    check_integer(space, name, errors);
  check_integer(options, "top", errors);
  const auto& tolerance_row = option_row<MatchOptions>("tolerance_pct");
  const std::string tolerance = fmt::format("{}", options.tolerance_pct);
  if (!(options.tolerance_pct >= tolerance_row.lo))
    errors.add("MatchOptions::tolerance_pct", tolerance, fmt::format("must be a percentage >= {}", tolerance_row.lo));
  else if (options.tolerance_pct > tolerance_row.hi)
    errors.add("MatchOptions::tolerance_pct", tolerance, fmt::format("must be at most {}", tolerance_row.hi));
  if (options.match.empty())
    errors.add("MatchOptions::match", "\"\"", "must name at least one of flops, params, kv, memory, time");
  // Checked here, not only where a time is predicted: a bad option must not become a figure's note.
  time_detail::check_options(options.time_options, errors);
  const auto& limit_row = option_row<MatchOptions>("time_limit");
  if (!within(limit_row, options.time_limit))
    errors.add("MatchOptions::time_limit", fmt::format("{}", options.time_limit),
               fmt::format("must be a ratio in [{}, {}] (0: no limit)", limit_row.lo, limit_row.hi));
}

// MatchOptions::hardware's spec, read once; time matched or limited needs one.
void resolve_hardware(const MatchOptions& options, Plan& plan, Violations& errors) {
  if (options.hardware.empty()) {
    if (std::find(options.match.begin(), options.match.end(), Budget::time) != options.match.end())
      errors.add("MatchOptions::match", "\"time\"",
                 "needs a device to predict time on: set " + mention("MatchOptions::hardware"));
    if (options.time_limit > 0)
      errors.add("MatchOptions::time_limit", fmt::format("{}", options.time_limit),
                 "needs a device to predict time on: set " + mention("MatchOptions::hardware"));
    return;
  }
  try {
    plan.hardware = hardware_spec(options.hardware);
  } catch (const config_error& e) {
    // The unknown name is this option's; a spec file's own fields keep the file's names.
    for (Violation v : e.violations()) {
      if (v.field == "hardware") v.field = "MatchOptions::hardware";
      errors.add(std::move(v));
    }
  }
}

// The derived model's depth and loop. Returns the depth the other knobs are
// sized at: with a bad depth, the rest of the recipe is checked at the Baseline's.
i64 resolve_depth_and_loop(const ModelConfig& b, const LoopRecipe& recipe, Plan& plan, Violations& errors) {
  plan.depth = recipe.depth.value_or(b.num_layers);
  const auto& depth_row = option_row<LoopRecipe>("depth");
  const bool depth_ok = within(depth_row, static_cast<double>(plan.depth));
  const std::string shown = fmt::format("{}", plan.depth);
  if (!depth_ok)
    errors.add("LoopRecipe::depth", shown, fmt::format("must be between {} and {}", depth_row.lo, depth_row.hi));
  else if (plan.depth != b.num_layers && !b.moe.layers.empty())
    errors.add("LoopRecipe::depth", shown, "the Baseline lists its MoE layers explicitly, so its depth cannot change");
  const i64 depth = depth_ok ? plan.depth : b.num_layers;
  errors.collect([&] { plan.loop = resolve_loop(recipe, depth); });
  plan.keep_loops = recipe.span.kind == LoopSpan::Kind::keep;
  if (plan.keep_loops) {
    if (depth_ok && plan.depth != b.num_layers)
      errors.add("LoopRecipe::depth", shown,
                 fmt::format("must stay the Baseline's {} with LoopRecipe::span = \"keep\" (its spans name its "
                             "layers)",
                             b.num_layers));
    for (const LoopConfig& l : b.loops)
      if (l.active()) {
        plan.loop = l;
        break;
      }
  }
  return depth;
}

// Every candidate is counted once per context.
void resolve_contexts(const ModelConfig& b, const MatchOptions& options, Plan& plan, Violations& errors) {
  plan.contexts = options.contexts.empty() ? std::vector<i64>{b.context_length} : options.contexts;
  if (static_cast<i64>(plan.contexts.size()) > kMaxContexts)
    errors.add("MatchOptions::contexts", "",
               fmt::format("{} contexts listed: at most {}", plan.contexts.size(), kMaxContexts));
  const auto& row = option_row<MatchOptions>("contexts");
  for (const i64 t : plan.contexts)
    if (!within(row, static_cast<double>(t)))
      errors.add("MatchOptions::contexts", fmt::format("{}", t),
                 fmt::format("must be between {} and {}", row.lo, row.hi));
}

// A domain's range and the number of values it holds (0 after an error).
struct Domain {
  KnobRange range;
  i64 size = 0;
};

// A model that executes at least as many layers as the Baseline pays for them
// with a narrower H (default [H/4, H]); a shallower one widens ([H, 2H]).
Domain resolve_hidden(const ModelConfig& b, const SearchSpace& space, bool deeper, Violations& errors) {
  const KnobRange hidden =
      space.hidden.value_or(deeper ? KnobRange{std::max<i64>(1, b.hidden_size / 4), b.hidden_size}
                                   : KnobRange{b.hidden_size, std::min(2 * b.hidden_size, kMaxSize)});
  return {hidden,
          check_knob("SearchSpace::hidden", hidden, kMaxSize, space.align_hidden, "SearchSpace::align_hidden", errors)};
}

// The usable expert counts: multiples of align_experts, at least top_k.
KnobRange resolve_experts(const ModelConfig& b, const SearchSpace& space, Violations& errors) {
  if (!b.is_moe()) {
    if (space.experts) errors.add("SearchSpace::experts", "", "the Baseline has no routed experts to vary");
    return {0, 0};
  }
  const KnobRange asked = space.experts.value_or(KnobRange{b.moe.top_k, std::min(8 * b.moe.num_experts, kMaxExperts)});
  const i64 n =
      check_knob("SearchSpace::experts", asked, kMaxExperts, space.align_experts, "SearchSpace::align_experts", errors);
  const KnobRange experts{std::max(asked.lo, b.moe.top_k), asked.hi};
  if (n > 0 && count_multiples(experts.lo, experts.hi, space.align_experts) == 0)
    errors.add("SearchSpace::experts", range_text(asked),
               fmt::format("must allow at least top_k = {} experts", b.moe.top_k));
  return experts;
}

// The routed-expert widths with SearchSpace::ffn = searched (docs/solver.md):
// by default multiples of align_ffn in [W/8, 2W], W the Baseline's width:
// down to DeepSeek-style fine-grained experts, up to twice as wide for a model
// that pays for its extra width elsewhere. Otherwise one width (0): the
// width follows SearchSpace::ffn.
Domain resolve_expert_width(const ModelConfig& b, const SearchSpace& space, Violations& errors) {
  if (space.ffn != FfnScaling::searched) {
    if (space.expert_width)
      errors.add("SearchSpace::expert_width", range_text(*space.expert_width),
                 fmt::format("is searched only with {} (ffn is {})", mention("SearchSpace::ffn", "searched"),
                             to_string(space.ffn)));
    return {{0, 0}, 1};
  }
  if (!b.is_moe()) {
    errors.add("SearchSpace::ffn", "searched", "the Baseline has no routed experts whose width to search");
    return {{0, 0}, 0};
  }
  const i64 w = b.moe.expert_width;
  const KnobRange width = space.expert_width.value_or(KnobRange{std::max<i64>(1, w / 8), std::min(2 * w, kMaxSize)});
  return {width,
          check_knob("SearchSpace::expert_width", width, kMaxSize, space.align_ffn, "SearchSpace::align_ffn", errors)};
}

// The size of the space before any of it is listed: attention geometries are
// listed and ranked (memory and a sort), and the search visits at most every
// (geometry, width, hidden size), two counts each, when nothing stops it early.
void check_size(i64 geometries, i64 n_widths, i64 n_hidden, Violations& errors) {
  if (geometries > kMaxGeometries) {
    errors.add(fmt::format("search space too large: {} attention geometries (at most {})", geometries, kMaxGeometries));
  } else if (static_cast<i128>(geometries) * n_widths * n_hidden > kMaxLoopsEvaluated) {
    if (n_widths == 1)
      errors.add(fmt::format("search space too large: {} attention geometries x {} hidden sizes (at most {} pairs)",
                             geometries, n_hidden, kMaxLoopsEvaluated));
    else
      errors.add(
          fmt::format("search space too large: {} attention geometries x {} expert widths x {} hidden sizes (at most "
                      "{} triples)",
                      geometries, n_widths, n_hidden, kMaxLoopsEvaluated));
  }
}

// The attention geometries; the expert widths are a separate list, since the
// width moves neither the KV cache nor the search's KV ranking (solve.cpp).
void list_geometries(const ModelConfig& b, const SearchSpace& space, const Attention& a, Plan& plan,
                     Violations& errors) {
  plan.geometries = list_attention(b, space, a, plan.hidden, errors);
}

}  // namespace

Plan make_plan(const CheckedConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
               const MatchOptions& options) {
  const ModelConfig& b = baseline.get();  // validated once, when it was checked
  Violations errors;
  Plan plan;
  plan.baseline = baseline;
  plan.space = space;
  plan.options = options;

  check_scalars(space, options, errors);
  resolve_hardware(options, plan, errors);
  const i64 depth = resolve_depth_and_loop(b, recipe, plan, errors);
  resolve_contexts(b, options, plan, errors);
  // Depth and loops are in range here: the products fit.
  const auto executed = [](i64 layers, const LoopConfig& l) {
    return layers + (l.active() ? (l.last - l.first + 1) * (l.count - 1) : 0);
  };
  const bool deeper = plan.keep_loops || executed(depth, plan.loop) >= schedule(b).executed_layers();
  const Domain hidden = resolve_hidden(b, space, deeper, errors);
  const KnobRange experts = resolve_experts(b, space, errors);
  // The smallest and largest listed hidden sizes bound the attention widths.
  const i64 h_min =
      hidden.size > 0 ? (hidden.range.lo + space.align_hidden - 1) / space.align_hidden * space.align_hidden : 0;
  const i64 h_max = hidden.size > 0 ? hidden.range.hi / space.align_hidden * space.align_hidden : 0;
  const Attention attention = resolve_attention(b, space, h_min, h_max, kMaxGeometries, errors);
  const Domain width = resolve_expert_width(b, space, errors);
  if (errors.empty()) check_size(attention.geometries, width.size, hidden.size, errors);
  errors.throw_if_any();

  plan.hidden = list_multiples(hidden.range.lo, hidden.range.hi, space.align_hidden);
  plan.experts = b.is_moe() ? list_multiples(experts.lo, experts.hi, space.align_experts) : std::vector<i64>{0};
  if (memory_in_search(options) || time_in_search(options)) {
    // The expert counts the layout's expert parallelism splits: still a progression.
    std::erase_if(plan.experts, [&](i64 e) { return !ep_divides(options, e); });
    if (plan.experts.empty())
      errors.add("MemoryLayout::ep", std::to_string(options.memory_layout.ep),
                 fmt::format("must divide some expert count of the space (multiples of {} in [{}, {}])",
                             space.align_experts, experts.lo, experts.hi));
    errors.throw_if_any();
  }
  list_geometries(b, space, attention, plan, errors);
  errors.throw_if_any();
  plan.widths = space.ffn == FfnScaling::searched ? list_multiples(width.range.lo, width.range.hi, space.align_ffn)
                                                  : std::vector<i64>{0};
  // The knobs are positive and bounded; what can still break is the template
  // itself at another depth (a pattern longer than the layers, dense-first
  // layers beyond them).
  try {
    const ModelConfig first =
        make_candidate(plan, plan.hidden.front(), plan.experts.front(), plan.geometries.front(), plan.widths.front());
    validate(first);
    plan.kinds = layer_kinds(first);
  } catch (const config_error& e) {
    for (const auto& v : e.violations())
      errors.add("LoopRecipe::depth", fmt::format("{}", plan.depth), "the derived config breaks a rule: " + v.text());
    errors.throw_if_any();
  }
  return plan;
}

std::int64_t Plan::space_size() const {
  std::int64_t n = 0;
  for (const Geometry& g : geometries) {
    const IndexSpan span = hidden_span(*this, g);
    n += static_cast<std::int64_t>(span.hi - span.lo);
  }
  return n * static_cast<std::int64_t>(experts.size()) * static_cast<std::int64_t>(widths.size());
}

ModelConfig make_candidate(const Plan& plan, i64 hidden, i64 experts, const Geometry& g, i64 width) {
  ModelConfig c = plan.baseline;
  c.num_layers = plan.depth;
  if (!plan.keep_loops) {  // the recipe's loop replaces the Baseline's spans; keep leaves them
    c.loops.clear();
    if (plan.loop.active()) c.loops.push_back(plan.loop);
  }
  set_knobs(plan, hidden, experts, g, width, c);
  return c;
}

void set_knobs(const Plan& plan, i64 hidden, i64 experts, const Geometry& g, i64 width, ModelConfig& c) {
  const ModelConfig& b = plan.baseline;
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
  } else if (plan.space.ffn == FfnScaling::searched) {
    // Shared-expert and dense widths keep their ratio to the routed width.
    const i64 a = plan.space.align_ffn;
    c.moe.expert_width = width;
    c.moe.shared_width = scaled_width(b.moe.shared_width, width, b.moe.expert_width, a);
    c.ffn.dense_width = scaled_width(b.ffn.dense_width, width, b.moe.expert_width, a);
  }
}

bool tie_break_less(const Plan& plan, i64 h1, i64 e1, const Geometry& g1, i64 w1, i64 h2, i64 e2, const Geometry& g2,
                    i64 w2) {
  const auto& a = plan.baseline.attention;
  const auto key = [&](i64 h, i64 e, const Geometry& g, i64 w) {
    return std::make_tuple(h, -e, std::llabs(g.heads - a.num_heads), std::llabs(g.kv_heads - a.num_kv_heads),
                           std::llabs(g.head_dim - a.head_dim), g.heads, g.kv_heads, g.head_dim, w);
  };
  return key(h1, e1, g1, w1) < key(h2, e2, g2, w2);
}

}  // namespace smelt::solve_detail

namespace smelt {

Knobs knobs_of(const ModelConfig& c) {
  return {c.hidden_size,        c.moe.num_experts,  c.attention.num_heads, c.attention.num_kv_heads,
          c.attention.head_dim, c.moe.expert_width, c.moe.shared_width,    c.ffn.dense_width};
}

}  // namespace smelt
