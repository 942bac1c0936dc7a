// The modes of `smelt-match bench` besides the blocks' benchmark, each a subcommand of it (cli/bench.cpp):
// `bench step CONFIG` (whole training steps beside the time model, cli/bench_step.cpp) and `bench calibrate`
// (the CPU backend measured for the time model, cli/bench_calibrate.cpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "option_flags.hpp"
#include "smelt/bench.hpp"

namespace smelt::cli {

// The options of a run of CONFIG (bench, bench step) as given, over `defaults`: CONFIG required (`missing` says
// so), and --tokens and --context positive where typed (0 means "the default" to the library). Throws config_error
// with every violation.
BenchOptions run_options(const OptionFlags<BenchOptions>& flags, BenchOptions defaults, const std::string& config,
                         const char* missing);

Run add_bench_step(CLI::App& bench);
Run add_bench_calibrate(CLI::App& bench);

}  // namespace smelt::cli
