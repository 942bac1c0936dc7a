// Compute-optimal frontier, its inverse and the compute-equivalent gain
// (docs/scaling.md). Both law forms are the same problem in one variable:
//   minimise L(x) = E + P x^-p + Q y^-q  subject to  C = k x y
// chinchilla: x = N, y = D, k = 6, P = A, Q = B, p = alpha, q = beta;
// smelt:      x = F, y = D, k = 1, P = A (1 - S)^b, Q = K, p = a, q = c.
// Setting dL/dx = 0 with y = C / (k x) gives p P x^-p = q Q y^-q, so
//   x* = (p P / (q Q))^(1/(p+q)) (C/k)^(q/(p+q)),   y* = C / (k x*),
//   L*(C) = E + P (1 + p/q) x*^-p = E + M (C/k)^(-p q/(p+q)),
//   M = P (1 + p/q) (p P / (q Q))^(-p/(p+q)),
// strictly decreasing in C towards E, and inverted in closed form.
// Tokens per parameter, the parameters N* (chinchilla) or F*/6 (smelt), are
// y* / (k x* / 6) = 6 C / (k x*)^2.
#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/scaling_frontier.hpp"

namespace smelt {
namespace {

// The one-variable problem of a law at a sparsity, or the reason it has none.
struct Problem {
  double e = 0, p_coef = 0, q_coef = 0, p = 0, q = 0, k = 1;
};

// A label as messages show it: a hostile file's label can be megabytes long.
constexpr std::size_t kShownLabel = 64;
std::string law_name(const std::string& label) {
  if (label.empty()) return "law";
  if (label.size() <= kShownLabel) return fmt::format("law '{}'", label);
  return fmt::format("law '{}' ({} bytes)", detail::excerpt(label, kShownLabel), label.size());
}
std::string law_name(const Law& law) { return law_name(law.label); }

// True when the parameters have a frontier at the sparsity, filling `out`.
// Otherwise false, and with `errors` every violation, named after `label`
// (without, it stops at the first and formats nothing: the bootstrap samples
// are checked this way, one by one, and must cost no more than a few
// comparisons each).
bool problem_of(LawForm form, const std::vector<double>& v, double sparsity, Problem& out,
                detail::Violations* errors = nullptr, const std::string& label = {}) {
  bool ok = true;
  const auto fail = [&](auto&& message) {
    ok = false;
    if (errors) errors->add(message());
    return errors != nullptr;  // keep checking only to explain
  };
  const bool chinchilla = form == LawForm::chinchilla;
  const std::size_t count = chinchilla ? 5 : 6;
  if (v.size() != count) {
    fail([&] {
      return fmt::format("{}: has {} parameters; the {} form has {}", law_name(label), v.size(),
                         chinchilla ? "chinchilla" : "smelt", count);
    });
    return false;
  }
  // Names and indices in parameter_names order: {E, A, B, alpha, beta} / {E, A, a, b, K, c}.
  struct Positive {
    const char* name;
    std::size_t index;
  };
  static constexpr Positive kChinchilla[] = {{"A", 1}, {"B", 2}, {"alpha", 3}, {"beta", 4}};
  static constexpr Positive kSmelt[] = {{"A", 1}, {"a", 2}, {"K", 4}, {"c", 5}};
  if (!std::isfinite(v[0]) && !fail([&] { return fmt::format("{}: E = {}: must be finite", law_name(label), v[0]); }))
    return false;
  // A named loop variable, not a structured binding: clang 14 cannot capture those in a lambda.
  for (const Positive& p : chinchilla ? std::span<const Positive>(kChinchilla) : std::span<const Positive>(kSmelt))
    if (!(v[p.index] > 0 && std::isfinite(v[p.index])) && !fail([&] {
          return fmt::format("{}: {} = {:g}: must be positive for a compute-optimal frontier", law_name(label), p.name,
                             v[p.index]);
        }))
      return false;
  if (!chinchilla && !std::isfinite(v[3]) &&
      !fail([&] { return fmt::format("{}: b = {}: must be finite", law_name(label), v[3]); }))
    return false;
  if (!(sparsity >= 0 && sparsity < 1) &&
      !fail([&] { return fmt::format("sparsity = {:g}: must be in [0, 1)", sparsity); }))
    return false;
  if (!ok) return false;
  out = chinchilla ? Problem{v[0], v[1], v[2], v[3], v[4], 6}
                   : Problem{v[0], v[1] * std::pow(1 - sparsity, v[3]), v[4], v[2], v[5], 1};
  if (!(out.p_coef > 0 && std::isfinite(out.p_coef)))
    fail([&] {
      return fmt::format("{}: A (1 - S)^b = {:g} at sparsity {:g}: must be positive and finite", law_name(label),
                         out.p_coef, sparsity);
    });
  return ok;
}

Problem problem(const Law& law, double sparsity) {
  Problem pr;
  detail::Violations errors;
  if (!problem_of(law.form, law.params, sparsity, pr, &errors, law.label)) errors.throw_if_any();
  return pr;
}

void check_compute(double compute) {
  if (!(compute > 0 && std::isfinite(compute)))
    throw config_error(fmt::format("compute = {:g}: must be a positive number of FLOPs", compute));
}

// log of x* at C, in logs so that no intermediate power overflows.
double log_size(const Problem& pr, double compute) {
  return (std::log(pr.p * pr.p_coef / (pr.q * pr.q_coef)) + pr.q * std::log(compute / pr.k)) / (pr.p + pr.q);
}

Allocation allocate(const Problem& pr, double compute) {
  Allocation a;
  a.compute = compute;
  a.size = std::exp(log_size(pr, compute));
  a.tokens = compute / (pr.k * a.size);
  a.loss = pr.e + pr.p_coef * std::pow(a.size, -pr.p) + pr.q_coef * std::pow(a.tokens, -pr.q);
  // In logs: (k x*)^2 leaves the doubles long before tokens / size does.
  a.tokens_per_parameter = std::exp(std::log(6 * compute) - 2 * (std::log(pr.k) + log_size(pr, compute)));
  return a;
}

// Inverse of L*(C); nullopt when `loss` is at or below E (no compute reaches it).
std::optional<double> invert(const Problem& pr, double loss) {
  if (!(loss > pr.e)) return std::nullopt;
  // L - E = M (C/k)^-g with g = p q / (p + q), in logs.
  const double g = pr.p * pr.q / (pr.p + pr.q);
  const double log_m = std::log(pr.p_coef) + std::log1p(pr.p / pr.q) -
                       pr.p / (pr.p + pr.q) * std::log(pr.p * pr.p_coef / (pr.q * pr.q_coef));
  return pr.k * std::exp((log_m - std::log(loss - pr.e)) / g);
}

double inverse(const Law& law, const Problem& pr, double loss) {
  if (!std::isfinite(loss)) throw config_error(fmt::format("loss = {}: must be a finite number", loss));
  if (!(loss > pr.e))
    throw config_error(fmt::format("loss = {:g}: at or below the law's irreducible loss E = {:g}", loss, pr.e));
  const double compute = *invert(pr, loss);
  if (!(compute > 0 && std::isfinite(compute)))
    throw config_error(
        fmt::format("loss = {:g}: {} reaches it only at a compute outside the range of a double", loss, law_name(law)));
  return compute;
}

// Percentile by linear interpolation between order statistics (numpy's default).
double percentile(const std::vector<double>& sorted, double fraction) {
  const double h = fraction * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

Allocation optimal_allocation(const Law& law, double compute, double sparsity) {
  const Problem pr = problem(law, sparsity);
  check_compute(compute);
  return allocate(pr, compute);
}

double compute_for_loss(const Law& law, double loss, double sparsity) {
  return inverse(law, problem(law, sparsity), loss);
}

double compute_gain(const Law& target, const Law& reference, double compute, double sparsity) {
  const Problem t = problem(target, sparsity);
  const Problem r = problem(reference, sparsity);
  check_compute(compute);
  const double loss = allocate(t, compute).loss;
  try {
    return 1 - compute / inverse(reference, r, loss);
  } catch (const config_error& e) {
    throw config_error(
        fmt::format("gain of {} over {} at compute {:g}: the reference cannot reach the target's "
                    "frontier loss: {}",
                    law_name(target), law_name(reference), compute, e.what()));
  }
}

std::optional<Interval> compute_gain_interval(const Law& target, const Law& reference, double compute,
                                              double sparsity) {
  (void)problem(target, sparsity);  // the laws themselves, and the sparsity, must be valid
  (void)problem(reference, sparsity);
  check_compute(compute);
  const std::size_t n = std::min(target.bootstrap.size(), reference.bootstrap.size());
  std::vector<double> gains;
  gains.reserve(n);
  // Each sample is checked and solved in place: copying a law per sample would
  // copy its n samples each time, O(n^2) for the interval.
  for (std::size_t i = 0; i < n; ++i) {
    Problem tp, rp;
    if (!problem_of(target.form, target.bootstrap[i], sparsity, tp) ||
        !problem_of(reference.form, reference.bootstrap[i], sparsity, rp))
      continue;
    const std::optional<double> c_ref = invert(rp, allocate(tp, compute).loss);
    if (!c_ref || std::isinf(*c_ref))
      gains.push_back(1.0);  // the reference sample never reaches it: the limit of 1 - C / C_ref
    else if (*c_ref > 0)
      gains.push_back(1 - compute / *c_ref);
  }
  if (gains.empty()) return std::nullopt;
  std::sort(gains.begin(), gains.end());
  return Interval{percentile(gains, 0.025), percentile(gains, 0.975)};
}

std::optional<Interval> tokens_per_parameter_interval(const Law& law, double compute, double sparsity) {
  (void)problem(law, sparsity);
  check_compute(compute);
  std::vector<double> tpp;
  tpp.reserve(law.bootstrap.size());
  for (const std::vector<double>& sample : law.bootstrap) {
    Problem pr;
    if (!problem_of(law.form, sample, sparsity, pr)) continue;
    // A sample's exponents can put its TPP past the doubles, where no percentile means anything.
    const double t = allocate(pr, compute).tokens_per_parameter;
    if (std::isfinite(t) && t > 0) tpp.push_back(t);
  }
  if (tpp.empty()) return std::nullopt;
  std::sort(tpp.begin(), tpp.end());
  return Interval{percentile(tpp, 0.025), percentile(tpp, 0.975)};
}

}  // namespace smelt
