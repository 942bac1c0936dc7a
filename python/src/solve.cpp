// derive and sweep: the solver over a Baseline read once (NativeConfig), its
// options from keyword arguments, the result as match_report_json and
// sweep_report_json write it. Unlike the CLI, messages keep the library's
// field names (SearchSpace::align_head_dim), which are the keyword names here.
#include "bindings.hpp"
#include "options.hpp"
#include "smelt/config_io.hpp"
#include "smelt/match_report.hpp"
#include "smelt/sweep_report.hpp"

namespace smelt::python {

std::string derive(const CheckedConfig& baseline, const std::string& kwargs) {
  Keywords kw(kwargs, "derive");
  LoopRecipe recipe;
  SearchSpace space;
  MatchOptions options;
  kw.read(recipe);
  kw.read(space);
  kw.read(options);
  kw.read(options.memory_layout);
  kw.read(options.time_options);
  kw.finish();
  return match_report_json(solve(baseline, recipe, space, options));
}

std::string sweep(const CheckedConfig& baseline, const std::string& kwargs) {
  Keywords kw(kwargs, "sweep");
  SweepOptions sweep_options;
  SearchSpace space;
  MatchOptions options;
  kw.read(sweep_options);
  kw.read(space);
  kw.read(options);
  kw.read(options.memory_layout);
  kw.read(options.time_options);
  kw.finish();
  options.top = 1;  // each row is the best candidate
  return sweep_report_json(baseline, smelt::sweep(baseline, sweep_options, space, options), options);
}

}  // namespace smelt::python
