// fit_laws: the runs grouped by label, one fit_law each, every group's
// errors collected (the CLI's fit and the Python package's smelt.fit).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/scaling_fit.hpp"

namespace smelt {

std::vector<Law> fit_laws(std::vector<Run> runs, LawForm form, const FitOptions& options,
                          const std::string& label_column) {
  // Groups in order of first appearance; each label is held once, by its group.
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
    // A label quoted in a message, cut: a runs file's label can be megabytes long.
    const auto shown = [&] { return fmt::format("'{}'", detail::name_excerpt(labels[g])); };
    try {
      Law law = fit_law(groups[g], form, options);
      law.label = std::move(labels[g]);  // not needed after: the label is held once
      laws.push_back(std::move(law));
    } catch (const config_error& e) {
      if (labels[g].empty()) throw;
      for (const auto& v : e.violations()) errors.add(fmt::format("{} {}: {}", label_column, shown(), v.text()));
    } catch (const infeasible_error& e) {
      if (labels[g].empty()) throw;
      infeasible.push_back(fmt::format("{} {}: {}", label_column, shown(), e.what()));
    }
  }
  errors.throw_if_any();
  if (!infeasible.empty()) throw infeasible_error(fmt::format("{}", fmt::join(infeasible, "\n")));
  return laws;
}

}  // namespace smelt
