// smelt-match fit RUNS: one scaling law per architecture (--group-by), as a
// table or JSON, and the law file that `frontier` reads (--out).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "option_flags.hpp"
#include "out_file.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/scaling_fit.hpp"
#include "smelt/scaling_laws.hpp"
#include "smelt/scaling_runs.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

struct FitArgs {
  std::string runs;
  std::string form = "chinchilla";
  std::string group_by;
  std::vector<std::string> renames;  // OLD=NEW
  std::unique_ptr<OptionFlags<FitOptions>> options;
  bool json = false;
  OutFile out;
};

std::string formula(LawForm form) {
  return form == LawForm::chinchilla ? "L(N, D) = E + A / N^alpha + B / D^beta"
                                     : "L(F, S, D) = E + A (1 - S)^b / F^a + K / D^c";
}

std::string table(const std::vector<Law>& laws, LawForm form, double delta) {
  const std::vector<std::string> names = parameter_names(form);
  std::string out = fmt::format("{} law {}, Huber delta {:g} on log loss\n", to_string(form), formula(form), delta);
  std::vector<std::string> header{"label"};
  header.insert(header.end(), names.begin(), names.end());
  for (const char* h : {"objective", "rmse", "runs", "starts", "converged"}) header.emplace_back(h);
  std::vector<std::vector<std::string>> cells{header};
  for (const Law& law : laws) {
    std::vector<std::string> line{law.label.empty() ? "(all)" : shown_name(law.label)};
    const bool ci = law.ci_low.size() == names.size() && law.ci_high.size() == names.size();
    for (std::size_t i = 0; i < names.size(); ++i)
      line.push_back(ci ? fmt::format("{:.5g} [{:.4g}, {:.4g}]", law.params[i], law.ci_low[i], law.ci_high[i])
                        : fmt::format("{:.5g}", law.params[i]));
    line.push_back(fmt::format("{:.4g}", law.objective));
    line.push_back(fmt::format("{:.4g}", law.rmse_log_loss));
    line.push_back(std::to_string(law.runs));
    line.push_back(fmt::format("{}/{}", law.converged_starts, law.starts));
    line.push_back(law.converged ? "yes" : fmt::format("no ({})", law.status));
    cells.push_back(std::move(line));
  }
  std::vector<std::size_t> width(header.size());
  for (const auto& line : cells)
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  for (const auto& line : cells) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i)
      text += i == 0 ? fmt::format("{:<{}}  ", line[i], width[i]) : fmt::format("{:>{}}  ", line[i], width[i]);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + '\n';
  }
  if (laws.size() == 1 && !laws.front().bootstrap.empty())
    out += fmt::format("[2.5%, 97.5%] bootstrap percentiles over {} resamples of the runs\n",
                       laws.front().bootstrap.size());
  else if (!laws.empty() && !laws.front().bootstrap.empty())
    out += "[2.5%, 97.5%] bootstrap percentiles over resamples of each label's runs\n";
  return out;
}

int run_fit(const FitArgs& args) {
  detail::Violations errors;
  LawForm form = LawForm::chinchilla;
  try {
    form = parse_law_form(args.form, "--form");
  } catch (const config_error& e) {
    errors.merge(e);
  }
  FitOptions options;
  args.options->apply(options, errors);
  // Checked before the runs are read (a billion resamples is refused at once), with the table's bounds.
  const auto& bootstrap = *find_field<FitOptions>("bootstrap");
  if (!within_bounds(bootstrap, options.bootstrap))
    errors.add(
        fmt::format("--bootstrap = {}: must be between {} and {}", options.bootstrap, bootstrap.lo, bootstrap.hi));
  if (!(options.huber_delta > find_field<FitOptions>("huber_delta")->lo && std::isfinite(options.huber_delta)))
    errors.add(fmt::format("--delta = {:g}: must be a positive number", options.huber_delta));
  const auto& threads = *find_field<FitOptions>("threads");
  if (!within_bounds(threads, options.threads))
    errors.add(
        fmt::format("--threads = {}: must be between {} (every core) and {}", options.threads, threads.lo, threads.hi));
  args.out.check(errors);
  errors.throw_if_any();

  std::vector<std::pair<std::string, std::string>> renames;
  for (const auto& r : args.renames) {
    const auto eq = r.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == r.size())
      throw smelt::config_error(fmt::format("--rename = \"{}\": must be OLD=NEW, e.g. \"Model Size=N\"", r));
    renames.emplace_back(r.substr(0, eq), r.substr(eq + 1));
  }
  std::vector<smelt::Run> runs = read_runs(args.runs, form, args.group_by, renames);
  const std::vector<Law> laws = fit_laws(std::move(runs), form, options, args.group_by);

  const std::string json = laws_to_json(laws);
  if (args.out.given()) write_text_file(args.out.path, json);
  std::cout << (args.json ? json : table(laws, form, options.huber_delta));
  if (args.out.given()) {
    std::cout.flush();  // after the table, on standard error: --json keeps standard output pure JSON
    std::cerr << fmt::format("smelt-match: wrote {} law{} to {}\n", laws.size(), laws.size() == 1 ? "" : "s",
                             detail::one_line(args.out.path));
  }
  return kOk;
}

}  // namespace

Run add_fit(CLI::App& app) {
  auto args = std::make_shared<FitArgs>();
  auto* sub = app.add_subcommand("fit", "Fit a scaling law to training runs, one per architecture with --group-by");
  sub->add_option("RUNS", args->runs,
                  "Training runs: CSV or a JSON array of objects with columns N (or F and S), D (or C) and loss")
      ->required();
  sub->add_option("--form", args->form, "Law form: chinchilla (N, D) or smelt (F, S, D) (default chinchilla)");
  sub->add_option("--group-by", args->group_by, "Column naming each run's architecture: one law per value");
  sub->add_option("--rename", args->renames,
                  "Read a column under another name, OLD=NEW (repeatable), e.g. --rename \"Model Size=N\"");
  args->options = std::make_unique<OptionFlags<FitOptions>>(sub);
  sub->add_flag("--json", args->json, "Print the law file (ordered JSON) instead of a table");
  add_out_file(sub, args->out, "Write the law file to FILE (atomically), for `smelt-match frontier`");
  return [args] { return run_fit(*args); };
}

}  // namespace smelt::cli
