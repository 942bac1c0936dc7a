// The search-space, recipe and matching options shared by derive and sweep.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "smelt/solve.hpp"

namespace smelt::cli {

struct SolverArgs {
  std::string span = "middle-half";
  std::int64_t loops = 2;
  double residual_scale = 0;  // used when given
  std::int64_t depth = 0;     // used when given
  const CLI::Option* residual_scale_option = nullptr;
  const CLI::Option* depth_option = nullptr;
  std::string hidden, experts, head_dim, kv_heads, heads;  // "V" or "LO:HI"; empty: default domain
  std::int64_t align_hidden = 64, align_experts = 8, align_head_dim = 8, min_head_dim = 32, align_ffn = 16;
  bool free_heads = false;
  std::string ffn = "proportional";
  std::string match = "flops,params,kv";
  bool flops_with_head = false;
  std::string context;  // "4096" or "4096,32768"
  double tolerance = 1.0;
  std::int64_t top = 5;
};

// recipe: whether to offer --span, --loops and --residual-scale (sweep sets its own).
void add_solver_options(CLI::App* sub, SolverArgs& args, bool recipe);

// Parses the text options; every bad value is listed at once (config_error).
struct SolverSetup {
  LoopRecipe recipe;
  SearchSpace space;
  MatchOptions options;
};
SolverSetup make_setup(const SolverArgs& args);

// The Baseline's knob values, and the matched budgets as "flops, params".
Knobs knobs_of_baseline(const MatchResult& r);
std::string match_list(const MatchResult& r);

}  // namespace smelt::cli
