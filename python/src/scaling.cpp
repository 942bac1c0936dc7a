// fit and frontier: runs (a file, or JSON rows from Python) grouped by a label
// column into one law each, as `smelt-match fit` groups them, written as the
// law file (laws_to_json); frontiers of law files as `frontier --json`.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bindings.hpp"
#include "options.hpp"
#include "scaling/readers.hpp"
#include "smelt/error.hpp"
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
