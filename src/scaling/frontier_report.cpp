#include "smelt/scaling_frontier_report.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"

namespace smelt {

std::vector<std::vector<FrontierCell>> frontier_cells(const std::vector<FrontierLaw>& laws,
                                                      const std::vector<double>& budgets, double sparsity) {
  detail::Violations errors;
  std::vector<std::vector<FrontierCell>> cells(budgets.size(), std::vector<FrontierCell>(laws.size()));
  for (std::size_t b = 0; b < budgets.size(); ++b)
    for (std::size_t i = 0; i < laws.size(); ++i) {
      try {
        FrontierCell& c = cells[b][i];
        c.allocation = optimal_allocation(*laws[i].law, budgets[b], sparsity);
        c.tpp_interval = tokens_per_parameter_interval(*laws[i].law, budgets[b], sparsity);
        if (i == 0) continue;
        c.gain = compute_gain(*laws[i].law, *laws.front().law, budgets[b], sparsity);
        c.interval = compute_gain_interval(*laws[i].law, *laws.front().law, budgets[b], sparsity);
      } catch (const config_error& e) {
        for (const auto& v : e.violations()) {
          const Violation line(fmt::format("{}: {}", laws[i].file, v.text()));
          const auto& seen = errors.list();
          if (std::find(seen.begin(), seen.end(), line) == seen.end()) errors.add(line);
        }
      }
    }
  errors.throw_if_any();
  return cells;
}

std::string frontier_report_json(const std::vector<FrontierLaw>& laws, const std::vector<double>& budgets,
                                 const std::vector<std::vector<FrontierCell>>& cells, double sparsity) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schema_version"] = 1;
  j["kind"] = "frontier";
  j["reference"] = laws.front().name;
  j["sparsity"] = sparsity;
  j["laws"] = ordered_json::array();
  for (const auto& n : laws)
    j["laws"].push_back({{"name", n.name}, {"form", std::string(to_string(n.law->form))}, {"file", n.file}});
  j["budgets"] = ordered_json::array();
  for (std::size_t b = 0; b < budgets.size(); ++b) {
    ordered_json row;
    row["compute"] = budgets[b];
    row["laws"] = ordered_json::array();
    for (std::size_t i = 0; i < laws.size(); ++i) {
      const FrontierCell& c = cells[b][i];
      ordered_json l;
      l["name"] = laws[i].name;
      l["size"] = c.allocation.size;
      l["size_unit"] = laws[i].law->form == LawForm::chinchilla ? "params" : "flops_per_token";
      l["tokens"] = c.allocation.tokens;
      l["loss"] = c.allocation.loss;
      l["tpp"] = c.allocation.tokens_per_parameter;
      l["tpp_interval"] = c.tpp_interval ? ordered_json{c.tpp_interval->low, c.tpp_interval->high} : ordered_json();
      l["gain"] = c.gain ? ordered_json(*c.gain) : ordered_json();
      l["gain_interval"] = c.interval ? ordered_json{c.interval->low, c.interval->high} : ordered_json();
      row["laws"].push_back(std::move(l));
    }
    j["budgets"].push_back(std::move(row));
  }
  return j.dump(2) + "\n";
}

}  // namespace smelt
