// derive's solver options as the command line gives them: one argument per
// input line, parsed by CLI11 as smelt-match does, then the flags' setup and the
// solver's resolution of the search space (make_plan) on a small Baseline, and
// the solve itself when the space is small. The first byte picks the Baseline
// (bit 0) and, with bit 1 set, memory's layout flags and memory() instead.
#include <string>
#include <vector>

#include "harness.hpp"
#include "option_flags.hpp"
#include "smelt/error.hpp"
#include "smelt/memory.hpp"
#include "solve/space.hpp"
#include "solver_options.hpp"
#include "test_configs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smelt;
  if (size == 0 || size > 4096) return 0;
  const ModelConfig baseline = (data[0] & 1) != 0 ? test::tiny_dense(4) : test::tiny_moe();
  std::vector<std::string> args;
  std::string arg;
  for (const char c : fuzz::text_of(data + 1, size - 1)) {
    if (c == '\n') {
      args.push_back(arg), arg.clear();
    } else {
      arg += c;
    }
  }
  if (!arg.empty()) args.push_back(arg);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first

  if ((data[0] & 2) != 0) {
    CLI::App app;
    const cli::OptionFlags<MemoryLayout> flags(&app);
    try {
      app.parse(reversed);
    } catch (const CLI::Error&) {
      return 0;
    }
    try {
      detail::Violations errors;
      MemoryLayout layout;
      flags.apply(layout, errors);
      errors.throw_if_any();
      (void)memory(CheckedConfig(baseline), layout);
    } catch (const smelt::error&) {
    }
    return 0;
  }
  CLI::App app;
  const cli::SolverFlags options(&app, true);
  try {
    app.parse(reversed);
  } catch (const CLI::Error&) {
    return 0;  // CLI11 rejects it before smelt sees it
  }
  try {
    const cli::SolverSetup s = options.setup();
    const solve_detail::Plan plan = solve_detail::make_plan(CheckedConfig(baseline), s.recipe, s.space, s.options);
    if (plan.space_size() <= 4096) (void)solve(baseline, s.recipe, s.space, s.options);
  } catch (const smelt::error&) {
  }
  return 0;
}
