// smelt-match frontier --law REF.json --law TARGET.json --budget ...: each
// law's compute-optimal allocation and loss per budget, and the
// compute-equivalent gain of every other law over the first (the reference).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "lists.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/scaling_frontier.hpp"
#include "smelt/scaling_frontier_report.hpp"
#include "smelt/scaling_laws.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

struct FrontierArgs {
  std::vector<std::string> laws;
  std::vector<std::string> budgets;
  double sparsity = 0;
  bool json = false;
};

struct Named {
  Law law;
  std::string unlabelled;  // the name when the law has no label: the file's stem
  std::string file;
  // The label, or the file's stem when the law has none. A label is held once,
  // by its law: a hostile law file's label can be hundreds of megabytes.
  const std::string& name() const { return law.label.empty() ? unlabelled : law.label; }
};

std::vector<double> parse_budgets(const std::vector<std::string>& given, detail::Violations& errors) {
  std::vector<double> out;
  const auto listed = list_items("--budget", given, errors);
  if (!listed) return out;
  const std::vector<std::string>& words = *listed;
  if (words.empty()) errors.add("--budget = \"\": must be FLOPs separated by commas (1e20,1e21)");
  for (const std::string& word : words) {
    double v = 0;
    if (!parse_number(std::string_view(word), v))
      errors.add(fmt::format("--budget = \"{}\": must be FLOPs separated by commas (1e20,1e21)", word));
    else if (!(v > 0 && std::isfinite(v)))
      errors.add(fmt::format("--budget = {:g}: must be a positive number of FLOPs", v));
    else
      out.push_back(v);
  }
  return out;
}

std::string size_text(const Law& law, double size) {
  return law.form == LawForm::chinchilla ? human(size, Unit::count) + " params" : human(size, Unit::flops) + "/token";
}

// A percentage to two decimals, with no "-0.00%" from rounding noise.
std::string fraction_pct(double fraction) {
  const double p = 100 * fraction;
  return fmt::format("{:+.2f}%", std::fabs(p) < 0.005 ? 0.0 : p);
}

// Two decimals (13.00, not 13) in the range a law gives; three significant
// digits outside it, where two decimals would show nothing or too much.
std::string tpp_number(double tpp) {
  return tpp >= 0.1 && tpp < 1e6 ? fmt::format("{:.2f}", tpp) : fmt::format("{:.3g}", tpp);
}

// The TPP, with its interval over the law's own bootstrap samples where it has some.
std::string tpp_text(const FrontierCell& c) {
  std::string s = tpp_number(c.allocation.tokens_per_parameter);
  if (c.tpp_interval) s += fmt::format(" [{}, {}]", tpp_number(c.tpp_interval->low), tpp_number(c.tpp_interval->high));
  return s;
}

std::string gain_text(const FrontierCell& c) {
  if (!c.gain) return "-";
  std::string s = fraction_pct(*c.gain);
  if (c.interval) s += fmt::format(" [{}, {}]", fraction_pct(c.interval->low), fraction_pct(c.interval->high));
  return s;
}

std::string table(const std::vector<Named>& laws, const std::vector<double>& budgets,
                  const std::vector<std::vector<FrontierCell>>& cells, double sparsity) {
  // Long labels are cut here (--json gives them whole).
  std::string out = fmt::format("reference: {} ({})", shown_name(laws.front().name()), laws.front().file);
  bool smelt_law = false;
  for (const auto& n : laws) smelt_law = smelt_law || n.law.form == LawForm::smelt;
  if (smelt_law) out += fmt::format("; smelt laws at sparsity {:g}", sparsity);
  out += "\n";
  std::vector<std::vector<std::string>> rows{{"budget", "law", "form", "size", "tokens", "TPP", "loss",
                                              fmt::format("gain over {}", shown_name(laws.front().name()))}};
  for (std::size_t b = 0; b < budgets.size(); ++b)
    for (std::size_t i = 0; i < laws.size(); ++i) {
      const FrontierCell& c = cells[b][i];
      rows.push_back({i == 0 ? fmt::format("{:g}", budgets[b]) : "", shown_name(laws[i].name()),
                      std::string(to_string(laws[i].law.form)), size_text(laws[i].law, c.allocation.size),
                      human(c.allocation.tokens, Unit::count), tpp_text(c), fmt::format("{:.5f}", c.allocation.loss),
                      gain_text(c)});
    }
  out += render_cells(rows, 3);  // the first three columns are names, the rest numbers
  bool any_interval = false, any_tpp_interval = false;
  for (const auto& row : cells)
    for (const auto& c : row) {
      any_interval = any_interval || c.interval.has_value();
      any_tpp_interval = any_tpp_interval || c.tpp_interval.has_value();
    }
  out += "size: N* parameters (chinchilla, C = 6 N D) or F* training FLOPs per token (smelt, C = F D)\n";
  out += "TPP: tokens per parameter, D* / N* (chinchilla) or D* / (F*/6) (smelt)";
  out += any_tpp_interval ? "; [2.5%, 97.5%] over the law's bootstrap samples\n" : "\n";
  out += "gain: 1 - C / C_ref, C_ref the reference's compute for the same frontier loss";
  out += any_interval ? "; [2.5%, 97.5%] over paired bootstrap samples\n" : "\n";
  return out;
}

int run_frontier(const FrontierArgs& args) {
  detail::Violations errors;
  const std::vector<double> budgets = parse_budgets(args.budgets, errors);
  if (!(args.sparsity >= 0 && args.sparsity < 1))
    errors.add(fmt::format("--sparsity = {:g}: must be in [0, 1)", args.sparsity));
  std::vector<Named> laws;
  for (const std::string& file : args.laws) {
    try {
      std::vector<Law> read = read_laws(file);
      const std::string stem = std::filesystem::path(file).stem().string();
      for (std::size_t i = 0; i < read.size(); ++i) {
        std::string unlabelled = read.size() == 1 ? stem : fmt::format("{}[{}]", stem, i);
        laws.push_back({std::move(read[i]), std::move(unlabelled), source_name(file)});
      }
    } catch (const config_error& e) {
      errors.merge(e);
    }
  }
  errors.throw_if_any();

  // Everything is computed, and every error found, before anything is printed.
  std::vector<FrontierLaw> views;
  for (const Named& n : laws) views.push_back({&n.law, n.name(), n.file});
  const std::vector<std::vector<FrontierCell>> cells = frontier_cells(views, budgets, args.sparsity);
  std::cout << (args.json ? frontier_report_json(views, budgets, cells, args.sparsity)
                          : table(laws, budgets, cells, args.sparsity));
  return kOk;
}

}  // namespace

Run add_frontier(CLI::App& app) {
  auto args = std::make_shared<FrontierArgs>();
  auto* sub = app.add_subcommand(
      "frontier", "Compute-optimal frontier of fitted laws and the compute-equivalent gain over the first law");
  sub->add_option("--law", args->laws,
                  "Law file (from `smelt-match fit --out`, or one hand-written law object); repeat it: the first "
                  "law is the reference")
      ->required();
  sub->add_option("--budget", args->budgets, "Training compute budgets in FLOPs, comma-separated (1e20,1e21,1e22)")
      ->required();
  sub->add_option("--sparsity", args->sparsity, "Sparsity S in [0, 1) for smelt-form laws (default 0)");
  sub->add_flag("--json", args->json, "Print ordered JSON instead of a table");
  return [args] { return run_frontier(*args); };
}

}  // namespace smelt::cli
