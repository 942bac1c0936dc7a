// Scaling laws on hostile input: option bounds checked before any work, fits
// whose parameters leave the doubles, runs whose D overflows, long labels in
// messages, and the gain interval over many bootstrap samples in linear time.
#include <string>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "smelt/detail/scaling_text.hpp"
#include "smelt/error.hpp"
#include "smelt/scaling_fit.hpp"
#include "smelt/scaling_frontier.hpp"
#include "smelt/scaling_laws.hpp"
#include "smelt/scaling_runs.hpp"

using namespace smelt;

namespace {

std::string scaling_data(const char* name) { return std::string(SMELT_SOURCE_DIR "/tests/data/") + name; }

// Epoch AI's refit of the Chinchilla data with A = a, and n bootstrap samples equal to it.
Law epoch(double a, std::size_t samples, std::string label = "epoch") {
  Law law;
  law.label = std::move(label);
  law.params = {1.8169, a, 2085.43, 0.3478, 0.3658};
  law.bootstrap.assign(samples, law.params);
  return law;
}

}  // namespace

TEST_CASE("scaling: the gain interval over 16,000 paired samples is the gain of each", "[scaling]") {
  // Copying both laws per sample made this O(n^2): about a minute at n = 16,000. Its speed is measured in
  // benchmarks/fit_bench.cpp (GainInterval), not asserted here; the CLI test bounds it with a generous timeout.
  const Law ref = epoch(482.01, 16000), target = epoch(400, 16000);
  const auto interval = compute_gain_interval(target, ref, 1e22);
  // Every sample is its law: the interval is the gain 1 - (400 / 482.01)^(1 / 0.3478) = 0.41500...
  REQUIRE(interval);
  CHECK(interval->low == Approx(compute_gain(target, ref, 1e22)).epsilon(1e-12));
  CHECK(interval->high == Approx(interval->low).epsilon(1e-12));
}

TEST_CASE("scaling: a long label is cut in messages", "[scaling]") {
  Law law = epoch(-1, 0, std::string(100000, 'x'));
  const std::string expected =
      "law '" + std::string(64, 'x') + "...' (100000 bytes): A = -1: must be positive for a compute-optimal frontier";
  REQUIRE_THROWS_WITH(optimal_allocation(law, 1e22), expected);
}

TEST_CASE("scaling: fit options are bounded before any work", "[scaling]") {
  const std::vector<Run> runs = read_runs(scaling_data("runs-chinchilla.csv"), LawForm::chinchilla);
  FitOptions o;
  o.bootstrap = kMaxBootstrap + 1;
  o.threads = kMaxFitThreads + 1;
  REQUIRE_THROWS_WITH(fit_law(runs, LawForm::chinchilla, o),
                      "FitOptions::bootstrap = 100001: must be between 0 and 100000\n"
                      "FitOptions::threads = 1025: must be between 0 (all cores) and 1024");
}

TEST_CASE("scaling: a fit whose parameters are not finite is infeasible, not a law", "[scaling]") {
  // Losses alternating between 1e300 and 1e-300 pull A past the largest double.
  const std::vector<Run> runs = read_runs(scaling_data("runs-nonfinite.csv"), LawForm::chinchilla);
  REQUIRE_THROWS_AS(fit_law(runs, LawForm::chinchilla), infeasible_error);
  REQUIRE_THROWS_WITH(fit_law(runs, LawForm::chinchilla),
                      "6 runs: the best fit of the chinchilla law has A = inf: parameters must be finite numbers "
                      "(the runs pull the law to infinity; no chinchilla law describes them)");
}

TEST_CASE("scaling: a row whose D = C / (6 N) leaves the doubles is rejected", "[scaling]") {
  // Row 2: 1e308 / (6 * 1e-10) = inf; row 3: 1e-300 / (6 * 1e300) = 0 (underflow).
  const std::string path = scaling_data("runs-d-overflow.csv");
  REQUIRE_THROWS_WITH(read_runs(path, LawForm::chinchilla),
                      path +
                          ": row 2: D = C / (6 N) = inf (C = 1e308, N = 1e-10): must be a positive finite number of "
                          "tokens\n" +
                          path +
                          ": row 3: D = C / (6 N) = 0 (C = 1e-300, N = 1e300): must be a positive finite number of "
                          "tokens");
}

TEST_CASE("scaling: a label that is not UTF-8 is refused by its row and never reaches a law file", "[scaling]") {
  // Before: read, fitted, then laws_to_json threw nlohmann's type_error 316 (the CLI's exit 1, "internal error").
  std::string csv = "N,D,loss,arch\n";
  for (int i = 1; i <= 6; ++i) csv += fmt::format("{}e8,{}e10,{},ok\n", i, i, 3.0 - 0.1 * i);
  csv += "1e9,1e11,2.5,d\xffx\n";  // data row 7
  REQUIRE_THROWS_WITH(detail::parse_runs(csv, "runs.csv", LawForm::chinchilla, "arch"),
                      "runs.csv: row 7: arch: not UTF-8 text (labels are written to JSON law files)");
  // Valid UTF-8 labels are kept byte for byte.
  const std::vector<Run> runs =
      detail::parse_runs("N,D,loss,arch\n1e8,1e10,3,d\xc3\xa9\n", "runs.csv", LawForm::chinchilla, "arch");
  REQUIRE(runs.front().label == "d\xc3\xa9");
}
