// A training step's weight elements (for the gradients' reduction and the optimizer's update): from
// model_state()'s report, or summed from each layer kind's parameter terms without it (the solver's candidates).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "count/layer_cost.hpp"
#include "memory/division.hpp"
#include "memory/model_state.hpp"
#include "memory/resolved_layout.hpp"
#include "smelt/config.hpp"
#include "time/step_time.hpp"

namespace smelt::time_detail {

// The weight elements of a stage on the unsharded layout `ur` (no ZeRO, no distributed optimizer), dense and routed
// experts, summed as training_step() sums model_state()'s weight terms: each term's bytes over the element size,
// in the terms' order.
struct WeightElements {
  double dense = 0;
  double experts = 0;
};
WeightElements weight_elements(const memory_detail::ModelState& state, const memory_detail::ResolvedLayout& r);

// model_state()'s weight elements without count()'s report: each layer's parameter terms from its kind's (MoE or
// dense, attention kind), counted once (layer_cost()), summed and rounded layer by layer in model_state()'s order,
// so the same integers, in the same order, make the same doubles. Only where count() could raise nothing: plain
// spans and no MTP modules (whose parameters join terms this does not follow), and every total it checks far
// within 64 bits; elsewhere count()'s report is read as before.
struct KindElements {
  std::array<ParamTerms, 2 * 3> params{};  // by (MoE, attention kind)
  const std::vector<std::vector<std::pair<std::size_t, std::int64_t>>>* stage_layers = nullptr;  // TrainingShape's
  static std::size_t key(const ModelConfig& c, std::int64_t layer) {
    return static_cast<std::size_t>((c.is_moe_layer(layer) ? 3 : 0) + static_cast<int>(c.attention_at(layer)));
  }

  WeightElements of(const ModelConfig& c, const memory_detail::ResolvedLayout& ur, std::int64_t stage) const {
    using memory_detail::ceil_div;
    const MemoryLayout& l = ur.layout;
    const std::int64_t stages = static_cast<std::int64_t>(ur.stage_layers.size());
    const bool first = stage == 0, last = stage == stages - 1;
    struct Sum {
      std::int64_t ParamTerms::*member;
      std::int64_t split;
      std::int64_t total = 0;
    };
    std::array<Sum, 5> sums{{{&ParamTerms::attention, l.tp},
                             {&ParamTerms::norms, 1},
                             {&ParamTerms::router, 1},
                             {&ParamTerms::shared_experts, l.tp},
                             {&ParamTerms::dense_ffn, l.tp}}};
    std::array<std::int64_t, 10> terms{};  // the dense terms in model_state()'s order
    std::size_t n_terms = 0;
    std::array<std::size_t, 5> at{};  // where each sum sits in `terms`
    std::int64_t experts = 0;
    // Layer by layer in model_state(), kind by kind here: the same integer sums, each term placed where its
    // first layer puts it (the kinds in the order they first appear on the stage).
    for (const auto& [kind, count] : stage_layers->at(static_cast<std::size_t>(stage))) {
      const ParamTerms& p = params[kind];
      for (std::size_t k = 0; k < sums.size(); ++k)
        if (const std::int64_t elements = p.*sums[k].member; elements > 0) {
          if (sums[k].total == 0) at[k] = n_terms++;
          sums[k].total += count * ceil_div(elements, sums[k].split);
        }
      if (p.experts > 0) experts += count * ceil_div(p.experts / l.ep, l.etp);
    }
    for (std::size_t k = 0; k < sums.size(); ++k)
      if (sums[k].total > 0) terms[at[k]] = sums[k].total;
    const std::int64_t embedding = c.vocab_size * c.hidden_size;
    if (first && embedding > 0) terms[n_terms++] = ceil_div(embedding, l.tp);
    if (last) {
      const std::int64_t head = c.tie_embeddings ? (first ? 0 : embedding) : embedding;
      if (head > 0) terms[n_terms++] = ceil_div(head, l.tp);
      const std::int64_t final_norm = c.norm == NormType::layernorm ? 2 * c.hidden_size : c.hidden_size;
      if (sums[1].total > 0)
        terms[at[1]] += final_norm;  // "norms" merged into the layers' term
      else
        terms[n_terms++] = final_norm;
      if (const std::int64_t extras = count_detail::loop_extras(c).params; extras > 0) terms[n_terms++] = extras;
    }
    WeightElements out;
    for (std::size_t t = 0; t < n_terms; ++t)
      out.dense += static_cast<double>(terms[t] * ur.param_bytes) / static_cast<double>(ur.param_bytes);
    if (experts > 0) out.experts += static_cast<double>(experts * ur.param_bytes) / static_cast<double>(ur.param_bytes);
    return out;
  }
};

std::optional<KindElements> kind_elements(const ModelConfig& c, const TrainingShape& shape);

// Fills the shape's layers by kind (TrainingShape::first_layer, layers, visits, stage_layers).
void count_layer_kinds(const ModelConfig& c, TrainingShape& shape);

}  // namespace smelt::time_detail
