// The search-space, recipe and matching options shared by derive and sweep.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "smelt/solve.hpp"

namespace smelt::cli {

// The words of budgets ({flops, kv} -> {"flops", "kv"}).
std::vector<std::string> budget_words(const std::vector<Budget>& budgets);

// The options as typed; every default is the library's own (LoopRecipe,
// SearchSpace, MatchOptions), shown by --help.
struct SolverArgs {
  std::string span = to_string(LoopRecipe{}.span);
  std::int64_t loops = LoopRecipe{}.loops;
  double residual_scale = 0;  // used when given
  std::int64_t depth = 0;     // used when given
  const CLI::Option* residual_scale_option = nullptr;
  const CLI::Option* depth_option = nullptr;
  std::string hidden, experts, head_dim, kv_heads, heads, expert_width;  // "V" or "LO:HI"; empty: default domain
  std::int64_t align_hidden = SearchSpace{}.align_hidden;
  std::int64_t align_experts = SearchSpace{}.align_experts;
  std::int64_t align_head_dim = SearchSpace{}.align_head_dim;
  std::int64_t min_head_dim = SearchSpace{}.min_head_dim;
  std::int64_t align_ffn = SearchSpace{}.align_ffn;
  std::int64_t max_head_dim = SearchSpace{}.max_head_dim;
  std::string attention_ratio =
      fmt::format("{}:{}", SearchSpace{}.attention_ratio.lo, SearchSpace{}.attention_ratio.hi);
  bool free_heads = false;  // --free-heads given: the default anyway
  bool keep_heads = false;  // --keep-heads: SearchSpace::free_heads = false
  std::string ffn{to_string(SearchSpace{}.ffn)};
  std::vector<std::string> match = budget_words(MatchOptions{}.match);
  bool flops_with_head = MatchOptions{}.flops_with_head;
  std::vector<std::string> context;  // token counts; empty: the Baseline's
  double tolerance = MatchOptions{}.tolerance_pct;
  std::int64_t top = MatchOptions{}.top;
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

// The matched budgets as "flops, params".
std::string match_list(const MatchResult& r);

}  // namespace smelt::cli
