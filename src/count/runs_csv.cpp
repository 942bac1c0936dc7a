// count_runs_csv(): counted configs as the columns of a runs file (docs/scaling.md).
#include <fmt/format.h>

#include "smelt/count_report.hpp"
#include "util/csv.hpp"

namespace smelt {

std::string count_runs_csv(const std::vector<CountedModel>& models) {
  std::string out = detail::csv_record({"model", "N", "F", "S"});
  for (const auto& m : models) {
    // Training FLOPs per token without the LM head: 3 x (forward non-embedding + MTP).
    const double f = m.cost.flops.training - 3 * m.cost.flops.terms.lm_head;
    out += detail::csv_record({m.cost.model, fmt::format("{}", m.cost.params.non_embedding), fmt::format("{}", f),
                               fmt::format("{}", m.sparsity.value)});
  }
  return out;
}

}  // namespace smelt
