#include "suggest.hpp"

#include <fmt/format.h>

#include "smelt/detail/nearest.hpp"

namespace smelt::cli {
namespace {

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

std::optional<std::string> unknown_subcommand(const CLI::App& app) {
  for (const std::string& word : app.remaining()) {
    if (word.empty() || word.front() == '-') continue;
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      names.push_back(sub->get_name());
    const std::string hint = detail::nearest(word, names);
    return hint.empty() ? fmt::format("unknown subcommand '{}': the subcommands are {}", word, join(names))
                        : fmt::format("unknown subcommand '{}' (did you mean '{}'?)", word, hint);
  }
  return std::nullopt;
}

std::optional<std::string> unknown_option(const CLI::App& sub, const std::string& command) {
  for (const std::string& word : sub.remaining()) {
    if (word.size() < 2 || word.front() != '-' || word == "--") continue;
    const std::string name = word.substr(0, word.find('='));  // --jsn=1 names --jsn
    // Long options only: every one-letter option is one edit from every other.
    std::vector<std::string> known;
    for (const CLI::Option* option : sub.get_options())
      for (const std::string& l : option->get_lnames()) known.push_back("--" + l);
    const std::string hint = name.starts_with("--") ? detail::nearest(name, known) : "";
    return hint.empty() ? fmt::format("{}: unknown option '{}'", command, name)
                        : fmt::format("{}: unknown option '{}' (did you mean '{}'?)", command, name, hint);
  }
  return std::nullopt;
}

}  // namespace

const CLI::App* innermost_command(const CLI::App& app, std::string* path) {
  const CLI::App* sub = &app;
  if (path) *path = app.get_name();
  for (auto parsed = sub->get_subcommands(); !parsed.empty(); parsed = sub->get_subcommands()) {
    sub = parsed.front();
    if (path) *path += " " + sub->get_name();
  }
  return sub;
}

std::optional<std::string> unknown_word_message(const CLI::App& app) {
  if (app.get_subcommands().empty()) return unknown_subcommand(app);
  std::string path;
  const CLI::App* sub = innermost_command(app, &path);
  return unknown_option(*sub, path.substr(path.find(' ') + 1));  // "bench step", without "smelt-match"
}

}  // namespace smelt::cli
