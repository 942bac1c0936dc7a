// The scaling-law fit's objective in the log-sum-exp parametrisation
// (Hoffmann et al. 2022, Besiroglu et al. 2024), with its analytic gradient.
// Private to the library; declared without Eigen so tests can check it.
//
// Optimiser coordinates x (all unbounded):
//   chinchilla: x = (e, a, b, alpha, beta), E = exp(e), A = exp(a), B = exp(b)
//     log L = LSE(a - alpha log N, b - beta log D, e)
//   smelt:      x = (e, a_, a, b, k, c), E = exp(e), A = exp(a_), K = exp(k)
//     log L = LSE(a_ + b log(1 - S) - a log F, k - c log D, e)
// so that x and the parameters (parameter_names order) line up index by index.
#pragma once

#include <vector>

#include "smelt/scaling_fit.hpp"

namespace smelt::scaling_detail {

// The runs as the objective reads them: logs, computed once.
struct LogRuns {
  std::vector<double> size;      // log N (chinchilla) or log F (smelt)
  std::vector<double> dense;     // log(1 - S) (smelt only)
  std::vector<double> tokens;    // log D
  std::vector<double> log_loss;  // log of the observed loss
  std::size_t count() const { return log_loss.size(); }
};
LogRuns log_runs(const std::vector<Run>& runs, LawForm form);
// The runs at `indices` (a bootstrap resample).
LogRuns subset(const LogRuns& data, const std::vector<std::size_t>& indices);

std::size_t parameter_count(LawForm form);
std::vector<double> to_params(LawForm form, const std::vector<double>& x);
std::vector<double> from_params(LawForm form, const std::vector<double>& params);

// sum over runs of Huber_delta(predicted log loss - observed log loss), and
// when `grad` is not null its gradient in x (parameter_count(form) values).
double huber_objective(LawForm form, const LogRuns& data, double delta, const double* x, double* grad);

// Root mean square of predicted minus observed log loss.
double rmse_log_loss(LawForm form, const LogRuns& data, const double* x);

}  // namespace smelt::scaling_detail
