// The frontier report: each law's compute-optimal allocation at each budget
// and the compute-equivalent gain of every law over the first (the
// reference), computed and written as `smelt-match frontier --json` prints it
// (docs/json-schema.md). The CLI and the Python package share it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smelt/scaling_frontier.hpp"

namespace smelt {

// One law as the report names it: its label, or its file's stem when it has
// none. A view: a law file's label can be hundreds of megabytes, held once.
struct FrontierLaw {
  const Law* law = nullptr;
  std::string_view name;
  std::string_view file;  // as messages and the report name it
};

struct FrontierCell {
  Allocation allocation;                 // with its tokens per parameter
  std::optional<Interval> tpp_interval;  // over the law's own bootstrap samples; none without
  std::optional<double> gain;            // none for the reference
  std::optional<Interval> interval;      // of the gain, over paired samples
};

// cells[b][i]: budget b (training FLOPs), law i. Throws config_error listing
// every failure once, each as "FILE: violation".
std::vector<std::vector<FrontierCell>> frontier_cells(const std::vector<FrontierLaw>& laws,
                                                      const std::vector<double>& budgets, double sparsity = 0);

// Ordered JSON, "schema_version" 1 and "kind" "frontier", final newline.
std::string frontier_report_json(const std::vector<FrontierLaw>& laws, const std::vector<double>& budgets,
                                 const std::vector<std::vector<FrontierCell>>& cells, double sparsity = 0);

}  // namespace smelt
