// The solver's training time with the step's shape found once (TimeEvaluator) equals training_attoseconds(), the
// full path, to the attosecond (the same double), over random configs and layouts, each evaluator prepared by
// another candidate of the same shape first.
#include <catch2/catch.hpp>

#include "property_cases.hpp"
#include "random_candidates.hpp"
#include "smelt/checked_config.hpp"
#include "smelt/error.hpp"
#include "smelt/hardware.hpp"
#include "solve/time_budget.hpp"

using namespace smelt;

TEST_CASE("time with the step's shape found once equals the full path's", "[solve][time]") {
  std::mt19937_64 rng(20261207);
  const HardwareSpec hw = hardware_spec("h100");
  int compared = 0, none = 0;
  for (int draw = 0; draw < test::property_cases(1500); ++draw) {
    const ModelConfig c = test::draw_config(rng);
    MatchOptions o;
    o.memory_layout = test::draw_layout(rng);
    try {
      (void)CheckedConfig(c);
    } catch (const config_error&) {
      continue;
    }
    INFO("draw " << draw);
    const std::optional<solve_detail::i128> full = solve_detail::training_attoseconds(c, hw, o);
    ModelConfig other = c;
    other.hidden_size += 32;
    if (c.is_moe()) other.moe.num_experts = 24;
    solve_detail::TimeEvaluator shared(&hw, o);
    (void)shared.attoseconds(other);
    REQUIRE(shared.attoseconds(c) == full);
    solve_detail::TimeEvaluator fresh(&hw, o);
    REQUIRE(fresh.attoseconds(c) == full);
    ++(full ? compared : none);
  }
  if (!test::every_case) return;
  CHECK(compared > 400);
  CHECK(none > 50);
}
