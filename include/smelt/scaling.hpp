// Scaling laws: fitted per architecture from training runs, and the
// compute-optimal frontier and compute-equivalent gain they imply
// (docs/scaling.md).
//   chinchilla: L(N, D) = E + A / N^alpha + B / D^beta, compute C = 6 N D
//               (or F D when the runs give their training FLOPs per token F)
//   smelt:      L(F, S, D) = E + A (1 - S)^b / F^a + K / D^c, compute C = F D
// with N parameters, D training tokens, F training FLOPs per token, S sparsity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace smelt {

enum class LawForm { chinchilla, smelt };
std::string_view to_string(LawForm v);
LawForm parse_law_form(std::string_view s, std::string_view field);

// One training run. chinchilla uses n (and d); smelt uses f, s (and d).
struct Run {
  double n = 0;       // parameters
  double f = 0;       // training FLOPs per token (smelt; chinchilla's compute when given)
  double s = 0;       // sparsity in [0, 1)
  double d = 0;       // tokens
  double loss = 0;    // final loss (natural log scale as reported)
  std::string label;  // architecture, to group runs by
};

// Reads CSV or JSON (an array of objects) with named columns: N or F (with S),
// D or C (then D = C / (6 N), or C / F), loss, and an optional label column.
// Throws config_error naming the file, row, column and rule (missing columns,
// non-positive values, NaN).
// `renames` maps the file's column names to these ({"Model Size", "N"}).
std::vector<Run> read_runs(const std::string& path, LawForm form, const std::string& label_column = "",
                           const std::vector<std::pair<std::string, std::string>>& renames = {});

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

// Compute-optimal allocation at training compute C (FLOPs). For chinchilla,
// size = N*, tokens = D* with C = 6 N D; for smelt, size = F*, tokens = D*
// with C = F D at the given sparsity.
struct Allocation {
  double compute = 0;
  double size = 0;
  double tokens = 0;
  double loss = 0;
};
Allocation optimal_allocation(const Law& law, double compute, double sparsity = 0);
// The compute at which the frontier loss equals `loss` (inverse of L*(C)).
// Throws config_error when `loss` is at or below the law's E.
double compute_for_loss(const Law& law, double loss, double sparsity = 0);
// Compute-equivalent gain of `target` over `reference` at compute C:
// 1 - C / C_ref with L*_ref(C_ref) = L*_target(C).
double compute_gain(const Law& target, const Law& reference, double compute, double sparsity = 0);
// The 2.5% / 97.5% percentiles of the gain over paired bootstrap samples
// (sample i of each law; the shorter list sets the count). nullopt when either
// law has no samples. A sample whose target frontier loss is at or below the
// reference sample's E counts as gain 1 (the limit); a sample with no frontier
// (a non-positive coefficient or exponent) is left out, and nullopt is
// returned when no sample is left.
struct Interval {
  double low, high;
};
std::optional<Interval> compute_gain_interval(const Law& target, const Law& reference, double compute,
                                              double sparsity = 0);

// Law files: ordered JSON with schema_version and one entry per law.
std::string laws_to_json(const std::vector<Law>& laws);
std::vector<Law> read_laws(const std::string& path);

}  // namespace smelt
