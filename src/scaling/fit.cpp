// Fitting a scaling law: L-BFGS (LBFGS++) on the Huber objective of
// scaling_objective.hpp from every point of a grid of starts, in parallel,
// keeping the best; bootstrap resamples refit from the best few starts.
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <new>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "scaling/objective.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/scaling_fit.hpp"
#include "util/option_bounds.hpp"
#include "util/parallel_for.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wshadow"
#include <LBFGS.h>
#pragma GCC diagnostic pop

namespace smelt {
namespace {

using scaling_detail::LogRuns;

// Convergence, relative to the loss scale. The objective is a sum of Huber
// terms with delta = 1e-3: beyond delta each is delta (|r| - delta/2), so over
// the 240 Epoch points (log-loss residuals ~0.5%) the sum is ~1e-3, and on
// cleaner data far smaller. The usual decrease test, |f_k-past - f_k| <=
// tol max(1, |f|), is then absolute: with tol ~1e-9 (scipy's ftol is 2.2e-9)
// it stops while the objective still moves by parts in a million per step,
// and an absolute gradient tolerance (1e-5) likewise; stopping early is what
// went wrong in the original Chinchilla fit (Besiroglu et al. 2024). So the
// optimiser sees the objective divided by delta (beyond delta, a sum of
// |residual| in log-loss units: ~1 here), the decrease test is 1e-12 of
// max(1, |f|) over `past` iterations, and the gradient test is relative to
// |x| (epsilon_rel) with a tiny absolute floor. On this kinked objective most
// starts end in a failed line search instead (see best_of).
constexpr double kEpsilon = 1e-10, kEpsilonRel = 1e-10, kDelta = 1e-12;
constexpr int kPast = 3;
constexpr double kSameMinimum = 1e-9;
constexpr std::size_t kBootstrapStarts = 8;                      // best grid starts reused per resample
constexpr std::size_t kBootstrapBlock = 1024;                    // resamples drawn at a time, at most
constexpr std::size_t kBootstrapIndices = std::size_t{1} << 24;  // and at most this many run indices (128 MiB)

enum class Outcome { gradient, decrease, iterations, line_search, not_finite };

struct StartResult {
  double objective = std::numeric_limits<double>::infinity();  // unscaled
  std::vector<double> x;
  Outcome outcome = Outcome::not_finite;
  std::string detail;  // the line search's message
  bool converged() const { return outcome == Outcome::gradient || outcome == Outcome::decrease; }
};

// The scaled objective for LBFGS++, remembering the best point it evaluated
// (a failed line search leaves the solver's own x at its last trial).
struct Scaled {
  LawForm form;
  const LogRuns* data;
  double delta;
  double best = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_x;
  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
    const double f = scaling_detail::huber_objective(form, *data, delta, x.data(), grad.data()) / delta;
    grad /= delta;
    if (f < best) best = f, best_x = x;
    return f;
  }
};

StartResult minimise(LawForm form, const LogRuns& data, double delta, const std::vector<double>& start,
                     std::int64_t max_iterations) {
  LBFGSpp::LBFGSParam<double> param;
  param.epsilon = kEpsilon;
  param.epsilon_rel = kEpsilonRel;
  param.past = kPast;
  param.delta = kDelta;
  param.max_iterations = static_cast<int>(std::min<std::int64_t>(max_iterations, 1 << 30));
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  LBFGSpp::LBFGSSolver<double> solver(param);
  Scaled f{form, &data, delta, std::numeric_limits<double>::infinity(), {}};
  Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(start.data(), static_cast<Eigen::Index>(start.size()));
  StartResult result;
  try {
    double fx = 0;
    const int iterations = solver.minimize(f, x, fx);
    Eigen::VectorXd grad(x.size());
    (void)f(x, grad);
    if (grad.norm() <= std::max(kEpsilon, kEpsilonRel * x.norm()))
      result.outcome = Outcome::gradient;
    else if (iterations >= param.max_iterations)
      result.outcome = Outcome::iterations;
    else
      result.outcome = Outcome::decrease;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {  // LBFGS++ throws when a line search fails
    result.outcome = Outcome::line_search;
    result.detail = e.what();
  }
  if (!std::isfinite(f.best)) return result;
  result.objective = f.best * delta;
  result.x.assign(f.best_x.data(), f.best_x.data() + f.best_x.size());
  if (!std::isfinite(result.objective)) result.outcome = Outcome::not_finite;
  return result;
}

std::string describe(const StartResult& r, std::int64_t max_iterations) {
  switch (r.outcome) {
    case Outcome::gradient:
      return fmt::format("converged: gradient norm below {} |x|", kEpsilonRel);
    case Outcome::decrease:
      return fmt::format("converged: relative decrease below {} over {} iterations", kDelta, kPast);
    case Outcome::iterations:
      return fmt::format("not converged: {} iterations reached", max_iterations);
    case Outcome::line_search:
      return fmt::format("not converged: line search failed ({})", r.detail);
    case Outcome::not_finite:
      return "not converged: no finite objective";
  }
  return "?";
}

std::vector<double> steps(double from, double to, double step) {
  std::vector<double> v;
  for (double x = from; x <= to + 1e-9; x += step) v.push_back(x);
  return v;
}

// The grid of starting points, in optimiser coordinates.
// chinchilla (Hoffmann et al.): a, b in {0, 5, ..., 25}, e in {-1, -0.5, ..., 1},
//   alpha, beta in {0, 0.5, ..., 2}: 6 * 6 * 5 * 5 * 5 = 4,500 starts.
// smelt, the same by analogy: a_, k in {0, 5, ..., 25}, e in {-1, -0.5, ..., 1},
//   a, c in {0, 0.5, ..., 2}, b in {0, 1, 2}: 6 * 6 * 5 * 5 * 5 * 3 = 13,500.
std::vector<std::vector<double>> grid(LawForm form) {
  const auto scale = steps(0, 25, 5), e = steps(-1, 1, 0.5), exponent = steps(0, 2, 0.5), sparse = steps(0, 2, 1);
  std::vector<std::vector<double>> starts;
  for (double a : scale)
    for (double b : scale)
      for (double ee : e)
        for (double alpha : exponent)
          for (double beta : exponent) {
            if (form == LawForm::chinchilla) {
              starts.push_back({ee, a, b, alpha, beta});
              continue;
            }
            for (double s : sparse) starts.push_back({ee, a, alpha, s, b, beta});
          }
  return starts;
}

// The best result, by objective and then by index: the same for any thread
// count. A converged start within kSameMinimum (relative) of the best is
// preferred: on the kinked Huber objective many starts reach the minimum and
// then fail a line search, which says nothing against the minimum itself.
std::size_t best_of(const std::vector<StartResult>& results) {
  std::size_t best = 0, converged = results.size();
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].objective < results[best].objective) best = i;
    if (results[i].converged() && (converged == results.size() || results[i].objective < results[converged].objective))
      converged = i;
  }
  if (converged < results.size() && results[converged].objective <= results[best].objective * (1 + kSameMinimum))
    return converged;
  return best;
}

double percentile(std::vector<double> v, double p) {  // linear interpolation, as numpy's default
  std::sort(v.begin(), v.end());
  const double at = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// Unbiased index in [0, n) from the generator, the same on every platform.
std::size_t draw(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t range = static_cast<std::uint64_t>(n);
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t r;
  do r = rng();
  while (r >= limit);
  return static_cast<std::size_t>(r % range);
}

// A law file holds numbers: a parameter that overflowed to infinity (or is NaN)
// would be written as null, which no reader takes back.
void check_finite(LawForm form, const std::vector<double>& params, std::size_t runs, const std::string& which) {
  const std::vector<std::string> names = parameter_names(form);
  std::vector<std::string> bad;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (!std::isfinite(params[i])) bad.push_back(fmt::format("{} = {}", names[i], params[i]));
  if (!bad.empty())
    throw infeasible_error(
        fmt::format("{} runs: {} of the {} law has {}: parameters must be finite numbers (the "
                    "runs pull the law to infinity; no {} law describes them)",
                    runs, which, to_string(form), fmt::join(bad, ", "), to_string(form)));
}

void validate(const std::vector<Run>& runs, LawForm form, const FitOptions& o) {
  detail::Violations violations;
  const auto row = [](const char* name) -> const auto& { return detail::option_row<FitOptions>(name); };
  if (!(o.huber_delta > row("huber_delta").lo) || !std::isfinite(o.huber_delta))
    violations.add("FitOptions::huber_delta", fmt::format("{}", o.huber_delta), "must be positive");
  if (!detail::within(row("bootstrap"), static_cast<double>(o.bootstrap)))
    violations.add("FitOptions::bootstrap", fmt::format("{}", o.bootstrap),
                   fmt::format("must be between {} and {}", row("bootstrap").lo, row("bootstrap").hi));
  if (!detail::within(row("threads"), static_cast<double>(o.threads)))
    violations.add("FitOptions::threads", fmt::format("{}", o.threads),
                   fmt::format("must be between {} (all cores) and {}", row("threads").lo, row("threads").hi));
  if (static_cast<double>(o.max_iterations) < row("max_iterations").lo)
    violations.add("FitOptions::max_iterations", fmt::format("{}", o.max_iterations),
                   fmt::format("must be at least {}", row("max_iterations").lo));
  const std::size_t needed = scaling_detail::parameter_count(form) + 1;
  if (runs.size() < needed)
    violations.add(fmt::format("{} runs: a {} law needs at least {}", runs.size(), to_string(form), needed));
  violations.throw_if_any();
}

}  // namespace

Law fit_law(const std::vector<Run>& runs, LawForm form, const FitOptions& options) {
  validate(runs, form, options);
  const LogRuns data = scaling_detail::log_runs(runs, form);
  const double delta = options.huber_delta;
  const auto threads = static_cast<std::size_t>(options.threads);  // 0: one per hardware thread

  const auto starts = grid(form);
  std::vector<StartResult> results(starts.size());
  detail::parallel_for(starts.size(), threads, [&](std::size_t i) {
    results[i] = minimise(form, data, delta, starts[i], options.max_iterations);
  });
  const std::size_t best = best_of(results);
  const StartResult& fit = results[best];
  const auto converged = std::count_if(results.begin(), results.end(), [](const auto& r) { return r.converged(); });
  if (converged == 0 || !std::isfinite(fit.objective))
    throw infeasible_error(fmt::format("{} runs: the {} fit did not converge from any of {} starts (best: {})",
                                       runs.size(), to_string(form), starts.size(),
                                       describe(fit, options.max_iterations)));

  Law law;
  law.form = form;
  law.params = scaling_detail::to_params(form, fit.x);
  check_finite(form, law.params, runs.size(), "the best fit");
  law.objective = fit.objective;
  law.rmse_log_loss = scaling_detail::rmse_log_loss(form, data, fit.x.data());
  law.runs = static_cast<std::int64_t>(runs.size());
  law.starts = static_cast<std::int64_t>(starts.size());
  law.converged_starts = static_cast<std::int64_t>(converged);
  law.converged = fit.converged();
  law.status = describe(fit, options.max_iterations);
  if (options.bootstrap == 0) return law;

  // Bootstrap: resample the runs with replacement (all draws first, from one
  // seeded generator, so the result does not depend on threads), and refit
  // each from the full fit's optimum and the starts of its best few results.
  std::vector<std::size_t> order(results.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t i, std::size_t j) { return results[i].objective < results[j].objective; });
  std::vector<std::vector<double>> restarts{fit.x};
  for (std::size_t k = 0; k < std::min(kBootstrapStarts, order.size()); ++k) restarts.push_back(starts[order[k]]);

  // The draws go in blocks of resamples, in order, so that the indices held at
  // once stay bounded (block x runs) while the result is the same as drawing
  // every resample first.
  const auto count = static_cast<std::size_t>(options.bootstrap);
  const std::size_t block = std::clamp<std::size_t>(kBootstrapIndices / runs.size(), 1, kBootstrapBlock);
  std::mt19937_64 rng(options.seed);
  std::vector<std::vector<std::size_t>> samples;
  law.bootstrap.resize(count);
  for (std::size_t first = 0; first < count; first += block) {
    samples.assign(std::min(block, count - first), std::vector<std::size_t>(runs.size()));
    for (auto& sample : samples)
      for (auto& i : sample) i = draw(rng, runs.size());
    detail::parallel_for(samples.size(), threads, [&](std::size_t k) {
      const LogRuns resample = scaling_detail::subset(data, samples[k]);
      std::vector<StartResult> refits;
      for (const auto& start : restarts)
        refits.push_back(minimise(form, resample, delta, start, options.max_iterations));
      const StartResult& refit = refits[best_of(refits)];  // finite: the first start is the full fit's optimum
      law.bootstrap[first + k] = refit.x.empty() ? law.params : scaling_detail::to_params(form, refit.x);
    });
  }
  for (std::size_t k = 0; k < count; ++k)
    check_finite(form, law.bootstrap[k], runs.size(), fmt::format("bootstrap resample {} of {}", k + 1, count));
  for (std::size_t p = 0; p < law.params.size(); ++p) {
    std::vector<double> values;
    for (const auto& sample : law.bootstrap) values.push_back(sample[p]);
    law.ci_low.push_back(percentile(values, 0.025));
    law.ci_high.push_back(percentile(values, 0.975));
  }
  return law;
}

}  // namespace smelt
