// Fitting a scaling law to training runs (docs/scaling.md):
//   chinchilla: L(N, D) = E + A / N^alpha + B / D^beta, compute C = 6 N D
//               (or F D when the runs give their training FLOPs per token F)
//   smelt:      L(F, S, D) = E + A (1 - S)^b / F^a + K / D^c, compute C = F D
// with N parameters, D training tokens, F training FLOPs per token, S sparsity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smelt/option_fields.hpp"
#include "smelt/scaling_runs.hpp"

namespace smelt {

// Parameter values of a law. chinchilla: {E, A, B, alpha, beta};
// smelt: {E, A, a, b, K, c}. Names in parameter_names(form).
std::vector<std::string> parameter_names(LawForm form);

// Bounds on FitOptions, checked before any work: each resample refits from 9
// starts (so 100,000 of them are hours), and more threads than this is a
// mistake on any machine smelt targets.
inline constexpr std::int64_t kMaxBootstrap = 100'000;
inline constexpr std::int64_t kMaxFitThreads = 1024;

struct FitOptions {
  double huber_delta = 1e-3;
  std::int64_t bootstrap = 0;  // resamples of the runs; 0: none; at most kMaxBootstrap
  std::uint64_t seed = 20261130;
  // 0: hardware concurrency; at most kMaxFitThreads. When the system refuses
  // to start one, the work runs on one thread per core of those started.
  std::int64_t threads = 0;
  std::int64_t max_iterations = 1000;
};

// FitOptions' fields (include/smelt/option_fields.hpp).
template <>
struct OptionTable<FitOptions> {
  static constexpr std::string_view owner = "FitOptions";
  using Field = OptionField<FitOptions, double, std::int64_t, std::uint64_t>;
  static constexpr auto fields = std::to_array<Field>({
      {"huber_delta", OptionKind::number, &FitOptions::huber_delta, 0, kUnbounded,
       "Huber delta on the log-loss residuals, above 0"},
      {"bootstrap", OptionKind::integer, &FitOptions::bootstrap, 0, kMaxBootstrap,
       "Resamples of the runs for 95% confidence intervals (0: none)"},
      {"seed", OptionKind::integer, &FitOptions::seed, 0, kUnbounded,
       "Seed of the bootstrap resampling (reproducible)"},
      {"threads", OptionKind::integer, &FitOptions::threads, 0, kMaxFitThreads,
       "Threads for the starting points (0: every core)"},
      {"max_iterations", OptionKind::integer, &FitOptions::max_iterations, 1, kUnbounded,
       "L-BFGS iterations from each starting point"},
  });
};

struct Law {
  LawForm form = LawForm::chinchilla;
  std::string label;           // architecture ("" when not grouped)
  std::vector<double> params;  // in parameter_names(form) order
  // Fit diagnostics.
  double objective = 0;      // sum of Huber losses at the optimum
  double rmse_log_loss = 0;  // root mean square of log(predicted) - log(observed)
  std::int64_t runs = 0;
  std::int64_t starts = 0;  // starting points tried
  std::int64_t converged_starts = 0;
  bool converged = false;  // the best start met the relative convergence criterion
  std::string status;      // the optimiser's word on the best start
  // Bootstrap: one parameter vector per resample (empty without --bootstrap),
  // and the 2.5% / 97.5% percentiles of each parameter.
  std::vector<std::vector<double>> bootstrap;
  std::vector<double> ci_low, ci_high;

  double predict(const Run& run) const;  // loss
};

// Fits one law to the runs (all of them: group them by label first).
// Throws config_error for out-of-range options and too few runs (fewer than the
// parameter count + 1); infeasible_error when no start converged, or when the
// best fit, or a bootstrap refit, has a parameter that is not a finite double
// (the data pull it to infinity: no law of this form describes them).
Law fit_law(const std::vector<Run>& runs, LawForm form, const FitOptions& options = {});

// One law per label (Run::label, read from `label_column`), in order of first
// appearance; unlabelled runs form one law with an empty label. A labelled
// group's errors are prefixed "LABEL_COLUMN 'LABEL': " and collected: every
// group's config_error violations are thrown together, then every infeasible
// group's message, one per line (infeasible_error). An unlabelled group's
// errors are fit_law's own.
std::vector<Law> fit_laws(std::vector<Run> runs, LawForm form, const FitOptions& options = {},
                          const std::string& label_column = "");

}  // namespace smelt
