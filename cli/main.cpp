// smelt-match: thin subcommands over the public headers. Library errors map to
// exit codes here and nowhere else.
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "bench_backends.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "flag_names.hpp"
#include "smelt/error.hpp"
#include "smelt/version.hpp"
#include "suggest.hpp"

int main(int argc, char** argv) {
  using namespace smelt::cli;
  register_bench_backends();
  CLI::App app{"smelt-match: count, match and benchmark looped Mixture-of-Experts configurations", "smelt-match"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("smelt-match ") + smelt::version);
  std::map<const CLI::App*, Run> runs;
  for (auto add : {add_count, add_derive, add_sweep, add_bench, add_fit, add_frontier, add_memory, add_time,
                   add_convert, add_export, add_anatomy}) {
    const Run run = add(app);
    runs[app.get_subcommands({}).back()] = run;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A misspelt word first: CLI11 would report what it then misses instead.
    const std::optional<std::string> unknown = unknown_word_message(app);
    std::string command;
    (void)innermost_command(app, &command);
    std::cerr << "smelt-match: error: " << (unknown ? *unknown : std::string(e.what())) << "\n(run '" << command
              << " --help' for usage)\n";
    return kBadInput;
  }

  try {
    for (const auto* sub : app.get_subcommands()) return runs.at(sub)();
    return kBadInput;
  } catch (const smelt::error& e) {
    const ExitCode code = exit_code_of(e);
    std::cerr << (code == kInternal ? "smelt-match: internal error: " : "smelt-match: error: ") << describe(e) << '\n';
    return code;
  } catch (const std::exception& e) {
    std::cerr << "smelt-match: internal error: " << e.what() << '\n';
    return kInternal;
  }
}
