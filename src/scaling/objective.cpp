// The Huber objective on log loss and its analytic gradient, vectorised over
// the runs with Eigen arrays (the fit's hot loop: a 4,500-start fit evaluates
// it about a million times).
#include "scaling/objective.hpp"

#include <cmath>

#include <Eigen/Core>

namespace smelt::detail {
namespace {

using Eigen::ArrayXd;
using Column = Eigen::Map<const ArrayXd>;

Column column(const std::vector<double>& v) { return Column(v.data(), static_cast<Eigen::Index>(v.size())); }

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

// Scratch arrays, one set per thread, so evaluations allocate nothing.
struct Scratch {
  ArrayXd eu, ev, s, r;
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// Fills w.r with the residuals (predicted - observed log loss), w.eu and w.ev
// with the first two terms of the log-sum-exp relative to the third (e), and
// w.s with their sum: log L = e + log(1 + exp(u - e) + exp(v - e)). The sum is
// at least 1, so its log is safe; a term that overflows (only far from any
// sensible law) makes the objective infinite, which line searches reject.
void residuals(LawForm form, const LogRuns& data, const double* x, Scratch& w) {
  const Layout l = layout(form);
  const double e = x[0];
  if (l.smelt) {
    w.eu = (x[l.u] - e + x[l.sparsity] * column(data.dense) - x[l.alpha] * column(data.size)).exp();
  } else {
    w.eu = (x[l.u] - e - x[l.alpha] * column(data.size)).exp();
  }
  w.ev = (x[l.v] - e - x[l.beta] * column(data.tokens)).exp();
  w.s = 1 + w.eu + w.ev;
  w.r = e + w.s.log() - column(data.log_loss);
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
  Scratch& w = scratch();
  residuals(form, data, x, w);
  // Huber: r^2 / 2 within delta of zero, delta (|r| - delta / 2) beyond;
  // its derivative is r clamped to [-delta, delta].
  const ArrayXd& r = w.r;
  const double value = (r.abs() <= delta).select(0.5 * r.square(), delta * (r.abs() - 0.5 * delta)).sum();
  if (!grad) return value;
  // d(log L)/d(term) is the term's softmax weight: eu / s, ev / s, 1 / s.
  w.s = r.max(-delta).min(delta) / w.s;  // from here on: Huber'(r) / s
  const Layout l = layout(form);
  w.eu *= w.s;
  w.ev *= w.s;
  grad[0] = w.s.sum();
  grad[l.u] = w.eu.sum();
  grad[l.alpha] = -(w.eu * column(data.size)).sum();
  if (l.smelt) grad[l.sparsity] = (w.eu * column(data.dense)).sum();
  grad[l.v] = w.ev.sum();
  grad[l.beta] = -(w.ev * column(data.tokens)).sum();
  return value;
}

double rmse_log_loss(LawForm form, const LogRuns& data, const double* x) {
  Scratch& w = scratch();
  residuals(form, data, x, w);
  return data.count() == 0 ? 0.0 : std::sqrt(w.r.square().mean());
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
