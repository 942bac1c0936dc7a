#include "solver_options.hpp"

#include <fmt/format.h>

#include "lists.hpp"
#include "smelt/error.hpp"
#include "smelt/violations.hpp"

namespace smelt::cli {
namespace {

// "V" or "LO:HI" as a Range (KnobRange, RatioRange); the library checks the
// values' ranges. `noun` says what V is in the message ("a value", "a ratio").
template <class Range>
std::optional<Range> parse_range(std::string_view option, std::string_view noun, const std::string& text,
                                 detail::Violations& errors) {
  Range r;
  const auto colon = text.find(':');
  const bool ok = colon == std::string::npos ? parse_number(std::string_view(text), r.lo) && (r.hi = r.lo, true)
                                             : parse_number(std::string_view(text).substr(0, colon), r.lo) &&
                                                   parse_number(std::string_view(text).substr(colon + 1), r.hi);
  if (!ok) {
    errors.add(fmt::format("{} = \"{}\": must be {} or a range LO:HI", option, text, noun));
    return std::nullopt;
  }
  return r;
}

// A knob's range; empty text leaves the knob to its default domain.
std::optional<KnobRange> parse_knob(std::string_view option, const std::string& text, detail::Violations& errors) {
  if (text.empty()) return std::nullopt;
  return parse_range<KnobRange>(option, "a value", text, errors);
}

}  // namespace

void add_solver_options(CLI::App* sub, SolverArgs& a, bool recipe) {
  if (recipe) {
    sub->add_option("--span", a.span, "Looped layers: middle-half, full, a fraction (0.25 or 25%), or 1-based \"4-9\"")
        ->capture_default_str();
    sub->add_option("--loops", a.loops, "Passes through the span, 1 to 1024")->capture_default_str();
    a.residual_scale_option =
        sub->add_option("--residual-scale", a.residual_scale, "Scale on looped residual updates (default 1/loops)");
    a.depth_option =
        sub->add_option("--depth", a.depth, "Layers of the derived model, 1 to 65536 (default: the Baseline's)");
  }
  sub->add_option("--hidden", a.hidden,
                  "Hidden size: a value or LO:HI (default: multiples of --align-hidden in [H/4, H])");
  sub->add_option("--experts", a.experts,
                  "Routed experts: a value or LO:HI (default: multiples of --align-experts in [top_k, 8E])");
  sub->add_option("--head-dim", a.head_dim,
                  "Head size: a value or LO:HI (default: multiples of --align-head-dim in [--min-head-dim, "
                  "--max-head-dim])");
  sub->add_option("--kv-heads", a.kv_heads,
                  "KV heads: a value or LO:HI, divisors of the query heads (default: any divisor)");
  sub->add_option("--heads", a.heads,
                  "Query heads: a value or LO:HI (default: free, every count whose width fits --attention-ratio)");
  sub->add_flag("--free-heads", a.free_heads, "Let the query heads move (the default; kept for older scripts)");
  sub->add_flag("--keep-heads", a.keep_heads, "Keep the Baseline's query heads");
  sub->add_option("--max-head-dim", a.max_head_dim,
                  "Largest default head size, --min-head-dim to 2^24 (FlashAttention's limit)")
      ->capture_default_str();
  sub->add_option("--attention-ratio", a.attention_ratio,
                  "Query heads x head_dim over H: a ratio or LO:HI, 0.000001 to 1000000 (the default widens to "
                  "the Baseline's own)")
      ->capture_default_str();
  sub->add_option("--align-hidden", a.align_hidden, "Hidden sizes are multiples of this, 1 to 2^24")
      ->capture_default_str();
  sub->add_option("--align-experts", a.align_experts, "Expert counts are multiples of this, 1 to 2^20")
      ->capture_default_str();
  sub->add_option("--align-head-dim", a.align_head_dim, "Head sizes are multiples of this, 1 to 2^24")
      ->capture_default_str();
  sub->add_option("--min-head-dim", a.min_head_dim, "Smallest head size, 1 to 2^24")->capture_default_str();
  sub->add_option("--align-ffn", a.align_ffn, "FFN widths round to multiples of this, 1 to 2^24")
      ->capture_default_str();
  sub->add_option("--ffn", a.ffn, "FFN widths: proportional to H, fixed, or searched (see --expert-width)")
      ->capture_default_str();
  sub->add_option("--expert-width", a.expert_width,
                  "Routed expert width with --ffn searched: a value or LO:HI (default: multiples of --align-ffn in "
                  "[W/8, 2W])");
  sub->add_option("--match", a.match, "Budgets to match, comma-separated: flops,params,kv")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_flag("--flops-with-head", a.flops_with_head, "Include the LM head in the FLOPs budget");
  sub->add_option("--context", a.context,
                  "Context length(s) to match at, comma-separated, at most 64 (default: the Baseline's)")
      ->delimiter(',');
  sub->add_option("--tolerance", a.tolerance, "Largest acceptable mismatch in percent, 0 to 1e6; above it, exit code 3")
      ->capture_default_str();
  sub->add_option("--top", a.top, "Candidates to report: the best and TOP - 1 alternatives")->capture_default_str();
}

std::vector<std::string> budget_words(const std::vector<Budget>& budgets) {
  std::vector<std::string> out;
  for (const Budget b : budgets) out.emplace_back(to_string(b));
  return out;
}

SolverSetup make_setup(const SolverArgs& a) {
  detail::Violations errors;
  SolverSetup s;
  errors.collect([&] { s.recipe.span = parse_loop_span(a.span, "--span"); });
  s.recipe.loops = a.loops;
  if (a.residual_scale_option && a.residual_scale_option->count() > 0) s.recipe.residual_scale = a.residual_scale;
  if (a.depth_option && a.depth_option->count() > 0) s.recipe.depth = a.depth;
  s.space.hidden = parse_knob("--hidden", a.hidden, errors);
  s.space.experts = parse_knob("--experts", a.experts, errors);
  s.space.head_dim = parse_knob("--head-dim", a.head_dim, errors);
  s.space.kv_heads = parse_knob("--kv-heads", a.kv_heads, errors);
  s.space.heads = parse_knob("--heads", a.heads, errors);
  s.space.expert_width = parse_knob("--expert-width", a.expert_width, errors);
  if (a.free_heads && a.keep_heads)
    errors.add(
        "--keep-heads: contradicts --free-heads (keep the Baseline's query heads, or let them move: the "
        "default)");
  s.space.free_heads = !a.keep_heads;
  s.space.max_head_dim = a.max_head_dim;
  if (const auto ratio = parse_range<RatioRange>("--attention-ratio", "a ratio", a.attention_ratio, errors))
    s.space.attention_ratio = *ratio;
  s.space.align_hidden = a.align_hidden;
  s.space.align_experts = a.align_experts;
  s.space.align_head_dim = a.align_head_dim;
  s.space.min_head_dim = a.min_head_dim;
  s.space.align_ffn = a.align_ffn;
  try {
    s.space.ffn = parse_ffn_scaling(a.ffn, "--ffn");
  } catch (const config_error& e) {
    errors.merge(e);
  }
  s.options.match.clear();
  for (const auto& word : list_items(a.match)) {
    try {
      const Budget b = parse_budget(word, "--match");
      if (std::find(s.options.match.begin(), s.options.match.end(), b) == s.options.match.end())
        s.options.match.push_back(b);
    } catch (const config_error& e) {
      errors.merge(e);
    }
  }
  s.options.flops_with_head = a.flops_with_head;
  for (const auto& word : list_items(a.context)) {
    std::int64_t t = 0;
    if (parse_number(std::string_view(word), t))
      s.options.contexts.push_back(t);
    else
      errors.add(fmt::format("--context = \"{}\": must be token counts separated by commas", word));
  }
  s.options.tolerance_pct = a.tolerance;
  s.options.top = a.top;
  errors.throw_if_any();
  return s;
}

std::string match_list(const MatchResult& r) {
  std::string out;
  for (const Budget b : r.options.match) out += (out.empty() ? "" : ", ") + std::string(to_string(b));
  return out;
}

}  // namespace smelt::cli
