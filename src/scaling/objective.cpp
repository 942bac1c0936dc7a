// The Huber objective on log loss and its analytic gradient: one pass over the
// runs (the fit's hot loop: a 4,500-start fit evaluates it about a million
// times, and 97% of the fit's instructions were here).
//
// Runtime dispatch: the library is built for baseline x86-64 (no host
// sniffing). GCC compiles the pass once per instruction set (target_clones:
// AVX-512, AVX2, baseline) and the loader picks the widest the machine has (an
// ifunc). Every clone, and a Debug build, computes the same bits: exp and log
// are exact_exp_log.hpp's (the four basic operations, no fused multiply-add:
// -ffp-contract=off, src/scaling/CMakeLists.txt), and the sums are taken in 8
// fixed lanes (run i into lane i mod 8, the lanes added in a fixed order), which
// a vector of any width computes element for element. Before, libmvec's vector
// exp and log and an `omp simd` reduction made a fitted law's last digits follow
// the build type and the CPU.
#include "scaling/objective.hpp"

#include <cmath>

#include "scaling/exact_exp_log.hpp"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SMELT_OBJECTIVE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SMELT_OBJECTIVE_CLONES
#endif

namespace smelt::scaling_detail {
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
// One run's terms, added into lane `j` of the sums.
constexpr std::size_t kLanes = 8;
struct Lanes {
  double value[kLanes] = {}, squares[kLanes] = {}, h[kLanes] = {}, hu[kLanes] = {}, hu_size[kLanes] = {},
         hu_dense[kLanes] = {}, hv[kLanes] = {}, hv_tokens[kLanes] = {};
};
template <bool Smelt>
[[gnu::always_inline]] inline void add_run(Lanes& a, std::size_t j, double size, double dense, double tokens,
                                           double observed, const Coefficients& c) {
  const double first = c.u - c.e - c.alpha * size + (Smelt ? c.sparsity * dense : 0.0);
  const double eu = exact_exp(first), ev = exact_exp(c.v - c.e - c.beta * tokens);
  const double s = 1 + eu + ev;
  const double r = c.e + exact_log(s) - observed;
  const double abs_r = r < 0 ? -r : r;
  a.value[j] += abs_r <= c.delta ? 0.5 * r * r : c.delta * (abs_r - 0.5 * c.delta);
  a.squares[j] += r * r;
  const double w = (r < -c.delta ? -c.delta : (r > c.delta ? c.delta : r)) / s;
  a.h[j] += w;
  a.hu[j] += eu * w;
  a.hu_size[j] += eu * w * size;
  if constexpr (Smelt) a.hu_dense[j] += eu * w * dense;
  a.hv[j] += ev * w;
  a.hv_tokens[j] += ev * w * tokens;
}

// The lanes of one sum added in a fixed tree order.
[[gnu::always_inline]] inline double total(const double (&lane)[kLanes]) {
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

template <bool Smelt>
[[gnu::always_inline]] inline Sums pass(const LogRuns& data, const Coefficients& c) {
  const double *size = data.size.data(), *dense = Smelt ? data.dense.data() : data.size.data();
  const double *tokens = data.tokens.data(), *observed = data.log_loss.data();
  const std::size_t n = data.count(), whole = n - n % kLanes;
  Lanes a;
  for (std::size_t i = 0; i < whole; i += kLanes)
    for (std::size_t j = 0; j < kLanes; ++j)
      add_run<Smelt>(a, j, size[i + j], dense[i + j], tokens[i + j], observed[i + j], c);
  for (std::size_t i = whole; i < n; ++i) add_run<Smelt>(a, i - whole, size[i], dense[i], tokens[i], observed[i], c);
  return {total(a.value),   total(a.squares),  total(a.h),  total(a.hu),
          total(a.hu_size), total(a.hu_dense), total(a.hv), total(a.hv_tokens)};
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
    data.size.push_back(exact_log(form == LawForm::chinchilla ? run.n : run.f));
    if (form == LawForm::smelt) data.dense.push_back(std::log1p(-run.s));
    data.tokens.push_back(exact_log(run.d));
    data.log_loss.push_back(exact_log(run.loss));
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
    if (is_log(form, i)) p[i] = exact_exp(p[i]);
  return p;
}

std::vector<double> from_params(LawForm form, const std::vector<double>& params) {
  std::vector<double> x(params);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (is_log(form, i)) x[i] = exact_log(x[i]);
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

}  // namespace smelt::scaling_detail

namespace smelt {

double Law::predict(const Run& run) const {
  if (form == LawForm::chinchilla)  // E + A / N^alpha + B / D^beta
    return params.at(0) + params.at(1) * std::pow(run.n, -params.at(3)) + params.at(2) * std::pow(run.d, -params.at(4));
  // E + A (1 - S)^b / F^a + K / D^c
  return params.at(0) + params.at(1) * std::pow(1 - run.s, params.at(3)) * std::pow(run.f, -params.at(2)) +
         params.at(4) * std::pow(run.d, -params.at(5));
}

}  // namespace smelt
