// The field tables against what users read: every row of every option struct
// is a flag of the commands that take that struct, its --help line holds the
// row's doc (other fields named by their flags) and bounds, and docs/cli.md
// documents the flag in that command's option table; and no option table in
// docs/cli.md documents a flag that the command lacks.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flag_names.hpp"
#include "smelt/bench.hpp"
#include "smelt/bench_calibrate.hpp"
#include "smelt/memory.hpp"
#include "smelt/recipe.hpp"
#include "smelt/scaling_fit.hpp"
#include "smelt/solve.hpp"
#include "smelt/sweep.hpp"

namespace {

using namespace smelt;

// The section "## NAME" (a command) or "### NAME" (a subcommand of one: "bench step") of docs/cli.md, up to the
// next heading of either level.
std::string cli_doc_section(const std::string& name) {
  std::ifstream in(SMELT_SOURCE_DIR "/docs/cli.md");
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  std::size_t begin = text.find("\n## " + name + "\n");
  if (begin == std::string::npos) begin = text.find("\n### " + name + "\n");
  REQUIRE(begin != std::string::npos);
  const std::size_t end = std::min(text.find("\n## ", begin + 1), text.find("\n### ", begin + 1));
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The subcommand "bench" or "bench step" of `app`.
CLI::App* subcommand(CLI::App& app, const std::string& path) {
  CLI::App* sub = &app;
  std::istringstream words(path);
  for (std::string word; words >> word;) sub = sub->get_subcommand(word);
  return sub;
}

// The flags an option table of a docs section names in its first column: "| `--a`, `--b` | ..." -> {--a, --b}.
std::set<std::string> documented_flags(const std::string& section) {
  std::set<std::string> out;
  std::istringstream lines(section);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `--", 0) != 0) continue;
    const std::string cell = line.substr(0, line.find(" |", 2));
    for (std::size_t at = cell.find("`--"); at != std::string::npos; at = cell.find("`--", at + 1)) {
      const std::size_t end = cell.find_first_of(" `", at + 1);
      out.insert(cell.substr(at + 1, end - at - 1));
    }
  }
  return out;
}

struct Command {
  const char* name;
  CLI::App* app;
  std::set<std::string> documented;
};

template <class Options>
void check_rows(const Command& c, const std::vector<std::string>& skip = {}) {
  const std::string help = c.app->help();
  for (const auto& row : OptionTable<Options>::fields) {
    if (std::find(skip.begin(), skip.end(), row.name) != skip.end()) continue;
    const cli::FieldFlag f = cli::field_flag(OptionTable<Options>::owner, row.name);
    INFO(c.name << ": " << f.field);
    if (!f.flag.empty()) {
      CHECK(c.app->get_option_no_throw(f.flag) != nullptr);
      CHECK(help.find(cli::help_text(OptionTable<Options>::owner, row.doc, row.kind, row.lo, row.hi)) !=
            std::string::npos);
      CHECK(c.documented.count(f.flag) == 1);
    }
    if (!f.negative.empty()) {
      CHECK(c.app->get_option_no_throw(f.negative) != nullptr);
      CHECK(help.find(f.negative_help) != std::string::npos);
      CHECK(c.documented.count(f.negative) == 1);
    }
  }
}

}  // namespace

TEST_CASE("every field table row is a flag with its doc in --help and docs/cli.md", "[cli][options]") {
  CLI::App app;
  cli::add_derive(app);
  cli::add_sweep(app);
  cli::add_bench(app);
  cli::add_fit(app);
  cli::add_memory(app);
  const auto command = [&](const char* name) {
    return Command{name, subcommand(app, name), documented_flags(cli_doc_section(name))};
  };
  const Command derive = command("derive"), bench = command("bench"), fit = command("fit");
  // sweep takes derive's search-space and matching options, documented once under derive.
  Command sweep = command("sweep");
  sweep.documented.insert(derive.documented.begin(), derive.documented.end());
  check_rows<LoopRecipe>(derive);
  check_rows<SearchSpace>(derive);
  check_rows<MatchOptions>(derive);
  check_rows<MemoryLayout>(derive, {"context", "device_memory"});  // --context is MatchOptions::contexts there
  check_rows<TimeOptions>(derive);
  check_rows<SearchSpace>(sweep);
  check_rows<MemoryLayout>(sweep, {"context", "device_memory"});
  check_rows<TimeOptions>(sweep);
  check_rows<MatchOptions>(sweep, {"relaxations", "top"});  // each row is the best: --top is hidden, ignored
  check_rows<SweepOptions>(sweep);
  check_rows<BenchOptions>(bench);
  check_rows<BenchOptions>(command("bench step"), {"moe_only"});  // a step runs whole blocks
  check_rows<CalibrateOptions>(command("bench calibrate"));
  check_rows<FitOptions>(fit);
  check_rows<MemoryLayout>(command("memory"));
}

TEST_CASE("docs/cli.md documents no flag that its command lacks", "[cli][options]") {
  CLI::App app;
  cli::add_count(app);
  cli::add_derive(app);
  cli::add_sweep(app);
  cli::add_bench(app);
  cli::add_fit(app);
  cli::add_frontier(app);
  cli::add_export(app);
  cli::add_memory(app);
  for (const char* name :
       {"count", "derive", "sweep", "bench", "bench step", "bench calibrate", "fit", "frontier", "export", "memory"}) {
    const CLI::App* sub = subcommand(app, name);
    for (const std::string& flag : documented_flags(cli_doc_section(name))) {
      INFO(name << ": " << flag);
      CHECK(sub->get_option_no_throw(flag) != nullptr);
    }
  }
}
