// count_model(): a config's count and its sparsity, as the count report shows them.
#include "smelt/count_report.hpp"

namespace smelt {

CountedModel count_model(ModelConfig config, const CountOptions& options, const ModelConfig* reference) {
  CostReport cost = count(config, options);
  CountOptions at_context = options;
  at_context.context_length = cost.context_length;
  Sparsity s = reference ? sparsity(cost, count(*reference, at_context)) : sparsity(config, cost, at_context);
  return {std::move(config), std::move(cost), std::move(s)};
}

}  // namespace smelt
