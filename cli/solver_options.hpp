// The search-space, recipe and matching options shared by derive and sweep,
// made from the library's field tables (option_flags.hpp).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "option_flags.hpp"
#include "smelt/memory.hpp"
#include "smelt/solve.hpp"

namespace smelt::cli {

struct SolverSetup {
  LoopRecipe recipe;
  SearchSpace space;
  MatchOptions options;
};

// LoopRecipe's flags (derive: `recipe`; sweep sets its own), SearchSpace's and
// MatchOptions' (but for `skip`, the MatchOptions rows a command does not offer),
// MemoryLayout's for the memory figures, limit and budget, and TimeOptions' for
// the time figures, limit and budget.
class SolverFlags {
 public:
  SolverFlags(CLI::App* sub, bool recipe, std::vector<std::string_view> skip_match = {});

  // The options as typed; every bad value is listed at once (config_error).
  SolverSetup setup() const;

 private:
  std::optional<OptionFlags<LoopRecipe>> recipe_;
  OptionFlags<SearchSpace> space_;
  OptionFlags<MatchOptions> match_;
  OptionFlags<MemoryLayout> layout_;  // MatchOptions::memory_layout
  OptionFlags<TimeOptions> time_;     // MatchOptions::time_options
};

// The matched budgets as "flops, params".
std::string match_list(const MatchResult& r);

}  // namespace smelt::cli
