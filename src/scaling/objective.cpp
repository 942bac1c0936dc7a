// The Huber objective on log loss and its analytic gradient: one pass over the
// runs (the fit's hot loop: a 4,500-start fit evaluates it about a million
// times, and 97% of the fit's instructions were here).
//
// Runtime dispatch: the library is built for baseline x86-64 (no host
// sniffing), where exp and log of a whole array run two doubles at a time.
// GCC compiles the pass once per instruction set (target_clones: AVX-512,
// AVX2, baseline) and the loader picks the widest the machine has (an ifunc).
// Its exp and log are glibc's vector functions (libmvec, declared below as
// OpenMP SIMD functions; the loop is an `omp simd` loop under -fopenmp-simd,
// no OpenMP run time; -fno-trapping-math lets the AVX2 clone blend the Huber
// branches, which it otherwise leaves scalar): 8 or 4 lanes instead of 2. libmvec's exp and log are
// within 4 ulp rather than glibc's scalar 1, and the sums are taken in the
// order of the lanes: results agree with the baseline build to about 1e-15
// relative, and a given machine gives the same bits on every run.
#include "scaling/objective.hpp"

#include <cmath>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
// The declarations glibc's <math.h> makes only under -ffast-math (which would
// also assume finite values: the objective relies on an overflow giving inf).
extern "C" {
__attribute__((simd("notinbranch"))) double exp(double) noexcept;
__attribute__((simd("notinbranch"))) double log(double) noexcept;
}
#define SMELT_OBJECTIVE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SMELT_OBJECTIVE_CLONES
#endif

namespace smelt::detail {
namespace {

// Indices into x of the first term's intercept and exponent, the sparsity
// exponent (smelt), the second term's intercept and exponent; x[0] is e.
struct Layout {
  std::size_t u, alpha, sparsity, v, beta;
  bool smelt;
};
Layout layout(LawForm form) {
  if (form == LawForm::chinchilla) return {1, 3, 0, 2, 4, false};
  return {1, 2, 3, 4, 5, true};
}

// The pass's coefficients: log L = e + log(1 + exp(u - e + sparsity log(1 - S)
// - alpha log N) + exp(v - e - beta log D)).
struct Coefficients {
  double e, u, alpha, sparsity, v, beta, delta;
};

// Sums over the runs: the Huber value, the squared residuals, and the
// gradient's sums (h = Huber'(r) / s, eu and ev the first two terms relative
// to the third, s = 1 + eu + ev).
struct Sums {
  double value = 0, squares = 0, h = 0, hu = 0, hu_size = 0, hu_dense = 0, hv = 0, hv_tokens = 0;
};

// The sum s is at least 1, so its log is safe; a term that overflows (only far
// from any sensible law) makes the objective infinite, which line searches
// reject. Huber: r^2 / 2 within delta of zero, delta (|r| - delta / 2) beyond;
// its derivative is r clamped to [-delta, delta]; d(log L)/d(term) is the
// term's softmax weight (eu / s, ev / s, 1 / s).
template <bool Smelt>
[[gnu::always_inline]] inline Sums pass(const LogRuns& data, const Coefficients& c) {
  const double *size = data.size.data(), *dense = data.dense.data(), *tokens = data.tokens.data();
  const double* observed = data.log_loss.data();
  const std::size_t n = data.count();
  double value = 0, squares = 0, h = 0, hu = 0, hu_size = 0, hu_dense = 0, hv = 0, hv_tokens = 0;
#pragma omp simd reduction(+ : value, squares, h, hu, hu_size, hu_dense, hv, hv_tokens)
  for (std::size_t i = 0; i < n; ++i) {
    const double first = c.u - c.e - c.alpha * size[i] + (Smelt ? c.sparsity * dense[i] : 0.0);
    const double eu = std::exp(first), ev = std::exp(c.v - c.e - c.beta * tokens[i]);
    const double s = 1 + eu + ev;
    const double r = c.e + std::log(s) - observed[i];
    const double a = std::fabs(r);
    value += a <= c.delta ? 0.5 * r * r : c.delta * (a - 0.5 * c.delta);
    squares += r * r;
    const double w = (r < -c.delta ? -c.delta : (r > c.delta ? c.delta : r)) / s;
    h += w;
    hu += eu * w;
    hu_size += eu * w * size[i];
    if constexpr (Smelt) hu_dense += eu * w * dense[i];
    hv += ev * w;
    hv_tokens += ev * w * tokens[i];
  }
  return {value, squares, h, hu, hu_size, hu_dense, hv, hv_tokens};
}

SMELT_OBJECTIVE_CLONES Sums sums(const LogRuns& data, const Coefficients& c, bool smelt) {
  return smelt ? pass<true>(data, c) : pass<false>(data, c);
}

Sums evaluate(LawForm form, const LogRuns& data, double delta, const double* x) {
  const Layout l = layout(form);
  const Coefficients c{x[0], x[l.u], x[l.alpha], l.smelt ? x[l.sparsity] : 0.0, x[l.v], x[l.beta], delta};
  return sums(data, c, l.smelt);
}

// The coordinates that are logs of their parameter: E, A and B (chinchilla),
// E, A and K (smelt).
bool is_log(LawForm form, std::size_t i) { return i <= 1 || i == (form == LawForm::chinchilla ? 2u : 4u); }

}  // namespace

LogRuns log_runs(const std::vector<Run>& runs, LawForm form) {
  LogRuns data;
  for (const Run& run : runs) {
    data.size.push_back(std::log(form == LawForm::chinchilla ? run.n : run.f));
    if (form == LawForm::smelt) data.dense.push_back(std::log1p(-run.s));
    data.tokens.push_back(std::log(run.d));
    data.log_loss.push_back(std::log(run.loss));
  }
  return data;
}

LogRuns subset(const LogRuns& data, const std::vector<std::size_t>& indices) {
  LogRuns out;
  for (const std::size_t i : indices) {
    out.size.push_back(data.size[i]);
    if (!data.dense.empty()) out.dense.push_back(data.dense[i]);
    out.tokens.push_back(data.tokens[i]);
    out.log_loss.push_back(data.log_loss[i]);
  }
  return out;
}

std::size_t parameter_count(LawForm form) { return form == LawForm::chinchilla ? 5 : 6; }

std::vector<double> to_params(LawForm form, const std::vector<double>& x) {
  std::vector<double> p(x);
  for (std::size_t i = 0; i < p.size(); ++i)
    if (is_log(form, i)) p[i] = std::exp(p[i]);
  return p;
}

std::vector<double> from_params(LawForm form, const std::vector<double>& params) {
  std::vector<double> x(params);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (is_log(form, i)) x[i] = std::log(x[i]);
  return x;
}

double huber_objective(LawForm form, const LogRuns& data, double delta, const double* x, double* grad) {
  const Sums sum = evaluate(form, data, delta, x);
  if (!grad) return sum.value;
  const Layout l = layout(form);
  grad[0] = sum.h;
  grad[l.u] = sum.hu;
  grad[l.alpha] = -sum.hu_size;
  if (l.smelt) grad[l.sparsity] = sum.hu_dense;
  grad[l.v] = sum.hv;
  grad[l.beta] = -sum.hv_tokens;
  return sum.value;
}

double rmse_log_loss(LawForm form, const LogRuns& data, const double* x) {
  if (data.count() == 0) return 0.0;
  return std::sqrt(evaluate(form, data, 1.0, x).squares / static_cast<double>(data.count()));
}

}  // namespace smelt::detail

namespace smelt {

double Law::predict(const Run& run) const {
  if (form == LawForm::chinchilla)  // E + A / N^alpha + B / D^beta
    return params.at(0) + params.at(1) * std::pow(run.n, -params.at(3)) + params.at(2) * std::pow(run.d, -params.at(4));
  // E + A (1 - S)^b / F^a + K / D^c
  return params.at(0) + params.at(1) * std::pow(1 - run.s, params.at(3)) * std::pow(run.f, -params.at(2)) +
         params.at(4) * std::pow(run.d, -params.at(5));
}

}  // namespace smelt
