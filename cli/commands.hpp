// Each subcommand registers itself on the app and returns the function that
// runs it after parsing; that function returns the process exit code.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace smelt::cli {

using Run = std::function<int()>;

Run add_count(CLI::App& app);
Run add_convert(CLI::App& app);
Run add_export(CLI::App& app);
Run add_derive(CLI::App& app);
Run add_bench(CLI::App& app);
Run add_sweep(CLI::App& app);
Run add_fit(CLI::App& app);
Run add_frontier(CLI::App& app);
Run add_memory(CLI::App& app);
Run add_time(CLI::App& app);
Run add_anatomy(CLI::App& app);

}  // namespace smelt::cli
