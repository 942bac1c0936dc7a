#include "solve/attention_space.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "smelt/detail/bounds.hpp"
#include "solve/knob_range.hpp"
#include "util/mention.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares
namespace {

using i64 = std::int64_t;
constexpr i64 kMaxAttentionSize = kMaxWidth;
// Ratios are rounded to 9 decimals; in [1e-6, 1e6] the numerator stays below
// 2^50 and is never rounded to 0.
constexpr double kMinRatio = 1e-6;
constexpr double kMaxRatio = 1e6;
constexpr i64 kRatioDen = 1'000'000'000;

// i128 (solve/fraction.hpp) holds products of widths (2^48) and ratio terms (2^50).
i128 ceil_div(i128 a, i128 b) { return (a + b - 1) / b; }  // a >= 0, b > 0
i64 clamp_size(i128 v) { return static_cast<i64>(std::clamp<i128>(v, 0, kMaxAttentionSize + 1)); }
bool less(const Fraction& a, const Fraction& b) { return compare(a, b) < 0; }
double value_of(const Fraction& r) { return static_cast<double>(r.num) / static_cast<double>(r.den); }

// "V" when both ends print alike (nan included), "LO:HI" otherwise.
std::string ratio_text(const RatioRange& r) {
  const std::string lo = fmt::format("{}", r.lo);
  const std::string hi = fmt::format("{}", r.hi);
  return lo == hi ? lo : lo + ":" + hi;
}

void check_scalars(const SearchSpace& space, Violations& errors) {
  errors.range("SearchSpace::max_head_dim", space.max_head_dim, 1, kMaxAttentionSize);
  // Compared only when both are in range (min_head_dim is checked with the alignments).
  if (space.max_head_dim >= 1 && space.min_head_dim >= 1 && space.min_head_dim <= kMaxAttentionSize &&
      space.max_head_dim < space.min_head_dim)
    errors.add("SearchSpace::max_head_dim", fmt::format("{}", space.max_head_dim),
               fmt::format("must be at least {}",
                           mention("SearchSpace::min_head_dim", fmt::format("{}", space.min_head_dim))));
  const RatioRange& r = space.attention_ratio;
  const std::string field = "SearchSpace::attention_ratio";
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi))
    errors.add(field, ratio_text(r), "LO and HI must be finite ratios");
  else if (r.lo <= 0)
    errors.add(field, ratio_text(r), "LO must be positive: it bounds query heads x head_dim over H");
  else if (r.lo < kMinRatio || r.hi > kMaxRatio)
    errors.add(field, ratio_text(r), "LO and HI must lie between 0.000001 and 1000000");
  else if (r.lo > r.hi)
    errors.add(field, ratio_text(r), "must be a ratio or a range LO:HI with LO <= HI");
}

// Sum of floor(n / k) over k in [a, b], in O(sqrt n) blocks of equal quotient.
i64 sum_quotients(i64 n, i64 a, i64 b) {
  i64 s = 0;
  for (i64 k = std::max<i64>(a, 1); k <= b && k <= n;) {
    const i64 q = n / k;
    const i64 last = std::min(b, n / q);
    s += q * (last - k + 1);
    k = last + 1;
  }
  return s;
}

// (query heads m, KV heads k) pairs, k in kv dividing m in q (q.lo >= 1).
i64 count_pairs(const KnobRange& q, const KnobRange& kv) {
  const i64 top = std::min(kv.hi, q.hi);
  if (kv.lo > top) return 0;
  return sum_quotients(q.hi, kv.lo, top) - sum_quotients(q.lo - 1, kv.lo, top);
}

// The same pairs, listed KV head by KV head over the multiples of each.
std::vector<std::pair<i64, i64>> list_pairs(const KnobRange& q, const KnobRange& kv) {
  std::vector<std::pair<i64, i64>> out;
  for (i64 k = kv.lo; k <= std::min(kv.hi, q.hi); ++k)
    for (i64 m = (q.lo + k - 1) / k * k; m <= q.hi; m += k) out.emplace_back(m, k);
  return out;
}

// Calls f(d, q) for each aligned head_dim d that some query-head count q of
// a.heads fits (q x d in [lo h_min, hi h_max]), with the range of those q;
// stops when f returns false. Only the head sizes that can fit are visited.
template <class F>
void for_each_head_dim(const Attention& a, i64 align, F&& f) {
  const WidthRule& r = a.rule;
  const i128 w_lo_num = r.lo.num * a.h_min;  // widths >= w_lo_num / lo.den
  const i128 w_hi_num = r.hi.num * a.h_max;  // widths <= w_hi_num / hi.den
  const i64 d_lo = std::max(a.head_dim.lo, clamp_size(ceil_div(w_lo_num, r.lo.den * a.heads.hi)));
  const i64 d_hi = std::min(a.head_dim.hi, clamp_size(w_hi_num / (r.hi.den * a.heads.lo)));
  for (i64 d = (d_lo + align - 1) / align * align; d <= d_hi; d += align) {
    const KnobRange q{std::max(a.heads.lo, clamp_size(ceil_div(w_lo_num, r.lo.den * d))),
                      std::min(a.heads.hi, clamp_size(w_hi_num / (r.hi.den * d)))};
    if (q.lo <= q.hi && !f(d, q)) return;
  }
}

// Why no triple fits the width rule: the ranges that meet and the widths the
// rule allows over the hidden domain.
void explain_no_width(const ModelConfig& b, const SearchSpace& space, const Attention& a, Violations& errors) {
  const std::string heads = space.heads ? fmt::format("{} ({})", range_text(a.heads), mention("SearchSpace::heads"))
                            : !space.free_heads ? fmt::format("{} (the Baseline's: {})", b.attention.num_heads,
                                                              mention("SearchSpace::free_heads", "false"))
                                                : std::string("of any count");
  const std::string dims = fmt::format(
      "{} ({})", range_text(a.head_dim),
      space.head_dim ? mention("SearchSpace::head_dim")
                     : mention("SearchSpace::min_head_dim") + " to " + mention("SearchSpace::max_head_dim"));
  errors.add("SearchSpace::attention_ratio", ratio_text(space.attention_ratio),
             fmt::format("no attention geometry fits: query heads {} x head_dim {} never give a width "
                         "between {:.6g} x {} and {:.6g} x {} (the ratio's ends at the ends of {})",
                         heads, dims, value_of(a.rule.lo), a.h_min, value_of(a.rule.hi), a.h_max,
                         mention("SearchSpace::hidden")));
}

}  // namespace

WidthRule width_rule(const ModelConfig& b, const SearchSpace& space) {
  const auto rounded = [](double x) { return Fraction{std::llround(x * static_cast<double>(kRatioDen)), kRatioDen}; };
  WidthRule rule{rounded(space.attention_ratio.lo), rounded(space.attention_ratio.hi)};
  // The default range holds the Baseline's own width, so that its geometry
  // stays a candidate; a range the user chose is kept as given.
  if (space.attention_ratio == SearchSpace{}.attention_ratio) {
    const Fraction own{b.attention.num_heads * b.attention.head_dim, b.hidden_size};
    if (less(own, rule.lo)) rule.lo = own;
    if (less(rule.hi, own)) rule.hi = own;
  }
  return rule;
}

HiddenBounds hidden_bounds(const WidthRule& rule, i64 width) {
  // lo x H <= width <= hi x H  <=>  width / hi <= H <= width / lo.
  return {clamp_size(ceil_div(i128{width} * rule.hi.den, rule.hi.num)),
          clamp_size(i128{width} * rule.lo.den / rule.lo.num)};
}

Attention resolve_attention(const ModelConfig& b, const SearchSpace& space, i64 h_min, i64 h_max, i64 limit,
                            Violations& errors) {
  Attention out;
  const AttentionConfig& att = b.attention;
  const std::size_t before = errors.size();
  check_scalars(space, errors);
  if (att.type == AttentionType::mla) {
    // free_heads is the default, so it is no contradiction here.
    if (space.head_dim || space.kv_heads || space.heads)
      errors.add("SearchSpace::head_dim, SearchSpace::kv_heads, SearchSpace::heads", "",
                 "not supported for an MLA Baseline (its attention is kept as it is)");
    return out;
  }
  out.gqa = true;
  const i64 align = space.align_head_dim;
  const i64 min_d = std::clamp<i64>(space.min_head_dim, 1, kMaxAttentionSize);
  // Up to max_head_dim, or to the Baseline's own head_dim when that is larger.
  const i64 cap = std::max(std::clamp<i64>(space.max_head_dim, 1, kMaxAttentionSize), att.head_dim);
  out.head_dim = space.head_dim.value_or(KnobRange{min_d, std::max(min_d, cap)});
  const i64 n_dims = check_knob("SearchSpace::head_dim", out.head_dim, kMaxAttentionSize, align,
                                "SearchSpace::align_head_dim", errors);
  if (space.max_head_dim >= 1 && space.max_head_dim <= kMaxAttentionSize && space.head_dim && space.head_dim->lo >= 1 &&
      space.head_dim->lo <= space.head_dim->hi && space.head_dim->hi <= kMaxAttentionSize && space.head_dim->hi > cap)
    errors.add("SearchSpace::head_dim", range_text(*space.head_dim),
               cap == space.max_head_dim ? fmt::format("must be at most {} (FlashAttention's largest head size)",
                                                       mention("SearchSpace::max_head_dim", fmt::format("{}", cap)))
                                         : fmt::format("must be at most {}, the Baseline's head_dim ({} is {})", cap,
                                                       mention("SearchSpace::max_head_dim"), space.max_head_dim));
  const i64 n_usable = n_dims > 0 ? count_multiples(std::max(out.head_dim.lo, min_d), out.head_dim.hi, align) : 0;
  if (n_dims > 0 && n_usable == 0)
    errors.add("SearchSpace::head_dim", range_text(out.head_dim),
               fmt::format("must allow a head_dim of at least {}",
                           mention("SearchSpace::min_head_dim", fmt::format("{}", space.min_head_dim))));
  out.head_dim.lo = std::max(out.head_dim.lo, min_d);

  const bool free = !space.heads && space.free_heads;
  bool heads_ok = true;
  if (space.heads) {
    if (!space.free_heads)
      errors.add("SearchSpace::heads", range_text(*space.heads),
                 fmt::format("contradicts {}, which keeps the Baseline's {} query heads",
                             mention("SearchSpace::free_heads", "false"), att.num_heads));
    out.heads = *space.heads;
    heads_ok = check_knob("SearchSpace::heads", out.heads, kMaxAttentionSize, 1, "1", errors) > 0;
  } else {
    out.heads = free ? KnobRange{1, kMaxAttentionSize} : KnobRange{att.num_heads, att.num_heads};
  }
  const bool kv_ok =
      !space.kv_heads || check_knob("SearchSpace::kv_heads", *space.kv_heads, kMaxAttentionSize, 1, "1", errors) > 0;
  out.kv_heads = space.kv_heads.value_or(KnobRange{1, out.heads.hi});
  if (errors.size() != before || h_min < 1 || n_usable == 0 || !heads_ok || !kv_ok) {
    out.geometries = 0;
    return out;
  }
  // Query heads, KV heads and head sizes are in range here: the products fit.
  if (!free && space.kv_heads && count_pairs(out.heads, out.kv_heads) == 0) {
    errors.add("SearchSpace::kv_heads", range_text(*space.kv_heads),
               fmt::format("contains no divisor of the query heads ({})", range_text(out.heads)));
    out.geometries = 0;
    return out;
  }
  out.rule = width_rule(b, space);
  out.h_min = h_min;
  out.h_max = h_max;
  out.head_dim.hi = out.head_dim.hi / align * align;
  out.head_dim.lo = (out.head_dim.lo + align - 1) / align * align;
  if (free) {
    // Every query-head count some head size fits: the rule over the hidden domain.
    out.heads = {
        std::max<i64>(1, clamp_size(ceil_div(out.rule.lo.num * h_min, out.rule.lo.den * out.head_dim.hi))),
        std::min(kMaxAttentionSize, clamp_size(out.rule.hi.num * h_max / (out.rule.hi.den * out.head_dim.lo)))};
    if (!space.kv_heads) out.kv_heads = {1, std::max<i64>(1, out.heads.hi)};
  }
  i64 total = 0;
  bool any = false;
  bool too_many = false;
  KnobRange last{0, -1};
  i64 last_pairs = 0;
  if (out.heads.lo <= out.heads.hi)
    for_each_head_dim(out, align, [&](i64, const KnobRange& q) {
      any = true;
      if (q != last) last_pairs = count_pairs(q, out.kv_heads), last = q;
      total += last_pairs;
      too_many = total > limit;
      return !too_many;
    });
  out.geometries = total;
  if (too_many)
    errors.add(fmt::format("search space too large: more than {} attention geometries", limit));
  else if (total == 0 && any)
    errors.add("SearchSpace::kv_heads", range_text(out.kv_heads),
               fmt::format("contains no divisor of a query-head count whose width fits {}",
                           mention("SearchSpace::attention_ratio", ratio_text(space.attention_ratio))));
  else if (total == 0)
    explain_no_width(b, space, out, errors);
  return out;
}

std::vector<Geometry> list_attention(const ModelConfig& b, const SearchSpace& space, const Attention& a,
                                     const std::vector<i64>& hidden, Violations& errors) {
  const AttentionConfig& att = b.attention;
  if (!a.gqa) return {{att.num_heads, att.num_kv_heads, att.head_dim}};
  std::vector<Geometry> out;
  out.reserve(static_cast<std::size_t>(a.geometries));
  KnobRange last{0, -1};
  std::vector<std::pair<i64, i64>> pairs;
  for_each_head_dim(a, space.align_head_dim, [&](i64 d, const KnobRange& q) {
    if (q != last) pairs = list_pairs(q, a.kv_heads), last = q;
    for (const auto& [m, k] : pairs) {
      // Kept only when a listed H fits: alignment gaps may leave none.
      const HiddenBounds hb = hidden_bounds(a.rule, m * d);
      const auto it = std::lower_bound(hidden.begin(), hidden.end(), hb.lo);
      if (it != hidden.end() && *it <= hb.hi) out.push_back({m, k, d});
    }
    return true;
  });
  std::sort(out.begin(), out.end(), [](const Geometry& x, const Geometry& y) {
    return std::tie(x.heads, x.kv_heads, x.head_dim) < std::tie(y.heads, y.kv_heads, y.head_dim);
  });
  if (out.empty())
    errors.add(
        "SearchSpace::attention_ratio", ratio_text(space.attention_ratio),
        fmt::format("no attention geometry fits: the widths query heads x head_dim that the ranges allow lie "
                    "within [{:.6g}, {:.6g}] x H of no hidden size of {} (multiples of {} from {} to {})",
                    value_of(a.rule.lo), value_of(a.rule.hi), mention("SearchSpace::hidden"),
                    mention("SearchSpace::align_hidden", fmt::format("{}", space.align_hidden)), a.h_min, a.h_max));
  return out;
}

IndexSpan hidden_span(const ModelConfig& baseline, const SearchSpace& space, const std::vector<i64>& hidden,
                      const Geometry& g) {
  if (baseline.attention.type == AttentionType::mla) return {0, hidden.size()};
  const HiddenBounds hb = hidden_bounds(width_rule(baseline, space), g.heads * g.head_dim);
  const auto first = std::lower_bound(hidden.begin(), hidden.end(), hb.lo);
  const auto end = std::upper_bound(first, hidden.end(), hb.hi);
  return {static_cast<std::size_t>(first - hidden.begin()), static_cast<std::size_t>(end - hidden.begin())};
}

}  // namespace smelt::solve_detail
