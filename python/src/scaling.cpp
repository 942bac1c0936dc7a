// fit and frontier: runs (a file, or JSON rows from Python) fitted one law per
// label (fit_laws, as `smelt-match fit`), written as the law file
// (laws_to_json); frontiers of law files as `frontier --json` writes them;
// one law's curves for the frontier plot (optimal_allocation, Law::predict).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "bindings.hpp"
#include "options.hpp"
#include "smelt/detail/scaling_text.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/scaling_frontier.hpp"
#include "smelt/scaling_frontier_report.hpp"
#include "smelt/scaling_laws.hpp"
#include "smelt/scaling_runs.hpp"

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

namespace smelt::python {
namespace {

Law law_of(const std::string& form, const std::vector<double>& params) {
  Law law;
  law.form = parse_law_form(form, "form");
  law.params = params;
  return law;
}

double finite_or_nan(double v) { return std::isfinite(v) ? v : std::numeric_limits<double>::quiet_NaN(); }

}  // namespace

std::pair<std::vector<double>, std::vector<double>> law_frontier(const std::string& form,
                                                                 const std::vector<double>& params, double sparsity,
                                                                 const std::vector<double>& computes) {
  const Law law = law_of(form, params);
  std::pair<std::vector<double>, std::vector<double>> out;
  for (const double compute : computes) {
    double size = std::numeric_limits<double>::quiet_NaN(), loss = size;
    try {
      const Allocation a = optimal_allocation(law, compute, sparsity);
      size = finite_or_nan(a.size);
      loss = finite_or_nan(a.loss);
    } catch (const config_error&) {  // no frontier at this compute: a gap in the curve
    }
    out.first.push_back(size);
    out.second.push_back(loss);
  }
  return out;
}

std::vector<double> law_loss(const std::string& form, const std::vector<double>& params, double sparsity, double size,
                             const std::vector<double>& computes) {
  const Law law = law_of(form, params);
  std::vector<double> out(computes.size(), std::numeric_limits<double>::quiet_NaN());
  if (law.params.size() != parameter_names(law.form).size()) return out;
  for (std::size_t i = 0; i < computes.size(); ++i) {
    // A model of `size` trained with `computes[i]`: D = C / (6 N) for chinchilla, C / F for smelt.
    Run run;
    if (law.form == LawForm::chinchilla) {
      run.n = size;
      run.d = computes[i] / (6 * size);
    } else {
      run.f = size;
      run.s = sparsity;
      run.d = computes[i] / size;
    }
    out[i] = finite_or_nan(law.predict(run));
  }
  return out;
}

}  // namespace smelt::python
