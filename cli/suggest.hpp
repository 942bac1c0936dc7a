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

}  // namespace smelt::cli
