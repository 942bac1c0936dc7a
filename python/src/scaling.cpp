// fit and frontier: runs (a file, or JSON rows from Python) grouped by a label
// column into one law each, as `smelt-match fit` groups them, written as the
// law file (laws_to_json); frontiers of law files as `frontier --json`.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bindings.hpp"
#include "options.hpp"
#include "scaling/readers.hpp"
#include "smelt/error.hpp"
#include "smelt/io.hpp"
#include "smelt/scaling_frontier_report.hpp"
#include "smelt/scaling_laws.hpp"
#include "smelt/scaling_runs.hpp"
#include "util/excerpt.hpp"

namespace smelt::python {

std::string fit(const std::string& runs_input, bool runs_is_path, const std::string& source,
                const std::string& kwargs) {
  Keywords kw(kwargs, "fit");
  FitOptions options;
  kw.read(options);
  const std::string form_word = kw.text("form", "chinchilla");
  const std::string group_by = kw.text("group_by", "");
  kw.finish();
  const LawForm form = parse_law_form(form_word, "form");

  std::vector<Run> runs =
      runs_is_path ? read_runs(runs_input, form, group_by) : detail::parse_runs(runs_input, source, form, group_by);
  // Groups in order of first appearance, as the CLI's fit forms them.
  std::vector<std::string> labels;
  std::vector<std::vector<Run>> groups;
  for (Run& r : runs) {
    const auto g = static_cast<std::size_t>(std::find(labels.begin(), labels.end(), r.label) - labels.begin());
    if (g == labels.size()) {
      labels.push_back(std::move(r.label));
      groups.emplace_back();
    }
    r.label.clear();
    groups[g].push_back(std::move(r));
  }
  detail::Violations errors;
  std::vector<std::string> infeasible;
  std::vector<Law> laws;
  for (std::size_t g = 0; g < labels.size(); ++g) {
    const std::string shown = fmt::format("'{}'", detail::name_excerpt(labels[g]));
    try {
      Law law = fit_law(groups[g], form, options);
      law.label = labels[g];
      laws.push_back(std::move(law));
    } catch (const config_error& e) {
      if (labels[g].empty()) throw;
      for (const auto& v : e.violations()) errors.add(fmt::format("{} {}: {}", group_by, shown, v.text()));
    } catch (const infeasible_error& e) {
      if (labels[g].empty()) throw;
      infeasible.push_back(fmt::format("{} {}: {}", group_by, shown, e.what()));
    }
  }
  errors.throw_if_any();
  if (!infeasible.empty()) throw infeasible_error(fmt::format("{}", fmt::join(infeasible, "\n")));
  return laws_to_json(laws);
}

}  // namespace smelt::python

namespace smelt::python {

std::string frontier(const std::vector<std::string>& inputs, const std::vector<bool>& is_path,
                     const std::vector<std::string>& sources, const std::vector<double>& budgets, double sparsity) {
  // The CLI's checks, named as the keywords are.
  detail::Violations errors;
  if (budgets.empty()) errors.add("budgets", "[]", "must hold at least one training compute in FLOPs");
  for (const double b : budgets)
    if (!(b > 0 && std::isfinite(b)))
      errors.add("budgets", fmt::format("{:g}", b), "must be a positive number of FLOPs");
  if (!(sparsity >= 0 && sparsity < 1)) errors.add("sparsity", fmt::format("{:g}", sparsity), "must be in [0, 1)");
  if (inputs.empty()) errors.add("laws", "[]", "must hold at least one law");
  struct Named {
    Law law;
    std::string unlabelled;
    std::string file;
  };
  std::vector<Named> laws;
  for (std::size_t f = 0; f < inputs.size(); ++f) {
    try {
      std::vector<Law> read = is_path[f] ? read_laws(inputs[f]) : detail::parse_law_file(inputs[f], sources[f]);
      const std::string file = is_path[f] ? source_name(inputs[f]) : sources[f];
      const std::string stem = std::filesystem::path(file).stem().string();
      for (std::size_t i = 0; i < read.size(); ++i)
        laws.push_back({std::move(read[i]), read.size() == 1 ? stem : fmt::format("{}[{}]", stem, i), file});
    } catch (const config_error& e) {
      errors.merge(e);
    }
  }
  errors.throw_if_any();
  std::vector<FrontierLaw> views;
  for (const Named& n : laws)
    views.push_back({&n.law, n.law.label.empty() ? std::string_view(n.unlabelled) : n.law.label, n.file});
  return frontier_report_json(views, budgets, frontier_cells(views, budgets, sparsity), sparsity);
}

}  // namespace smelt::python
