// After CLI11 rejects a command line: a misspelt subcommand or option named,
// with the nearest known one ("did you mean"), instead of CLI11's
// "A subcommand is required" or "BASELINE is required".
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace smelt::cli {

// The message for the first unknown subcommand or option left over by the
// parse of `app`, or none when every word was known.
std::optional<std::string> unknown_word_message(const CLI::App& app);

// The innermost subcommand the parse of `app` reached (`app` itself when none), and in `path` (when given) the
// command line that names it: "smelt-match bench step".
const CLI::App* innermost_command(const CLI::App& app, std::string* path = nullptr);

}  // namespace smelt::cli
