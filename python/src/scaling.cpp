// fit and frontier: runs (a file, or JSON rows from Python) fitted one law per
// label (fit_laws, as `smelt-match fit`), written as the law file
// (laws_to_json); frontiers of law files as `frontier --json` writes them.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "bindings.hpp"
#include "options.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/scaling_frontier_report.hpp"
#include "smelt/scaling_laws.hpp"
#include "smelt/scaling_runs.hpp"
#include "smelt/violations.hpp"

namespace smelt::python {

std::string fit(const std::string& runs_input, bool runs_is_path, const std::string& source,
                const std::string& kwargs) {
  Keywords kw(kwargs, "fit");
  FitOptions options;
  kw.read(options);
  const std::string form_word = kw.text("form", "chinchilla");
  const std::string group_by = kw.text("group_by", "");
  const auto renames = kw.renames("renames");
  kw.finish();
  const LawForm form = parse_law_form(form_word, "form");

  std::vector<Run> runs = runs_is_path ? read_runs(runs_input, form, group_by, renames)
                                       : detail::parse_runs(runs_input, source, form, group_by, renames);
  return laws_to_json(fit_laws(std::move(runs), form, options, group_by));
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
