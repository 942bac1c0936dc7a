// derive and sweep: the solver over a Baseline given as native JSON, its
// options from keyword arguments, the result as match_report_json and
// sweep_report_json write it. Unlike the CLI, messages keep the library's
// field names (SearchSpace::align_head_dim), which are the keyword names here.
#include "bindings.hpp"
#include "options.hpp"
#include "smelt/config_io.hpp"
#include "smelt/match_report.hpp"
#include "smelt/sweep_report.hpp"

namespace smelt::python {

std::string derive(const std::string& baseline, const std::string& kwargs) {
  Keywords kw(kwargs, "derive");
  LoopRecipe recipe;
  SearchSpace space;
  MatchOptions options;
  kw.read(recipe);
  kw.read(space);
  kw.read(options);
  kw.finish();
  const ModelConfig base = parse_native_config(baseline);
  return match_report_json(solve(base, recipe, space, options));
}

std::string sweep(const std::string& baseline, const std::string& kwargs) {
  Keywords kw(kwargs, "sweep");
  SweepOptions sweep_options;
  SearchSpace space;
  MatchOptions options;
  kw.read(sweep_options);
  kw.read(space);
  kw.read(options);
  kw.finish();
  options.top = 1;  // each row is the best candidate
  const ModelConfig base = parse_native_config(baseline);
  return sweep_report_json(base, smelt::sweep(base, sweep_options, space, options), options);
}

}  // namespace smelt::python
