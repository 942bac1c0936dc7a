// The count report's term names, in the order it writes them, with the field
// each reads: the one list of them. The count report's writer
// (src/count/report_json.cpp) writes from it, and the Python package reads it
// (smelt._core.report_terms()).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "smelt/count.hpp"

namespace smelt::detail {

// per_layer: written in a layer's (and a run's) `params` or `flops_per_visit`
// too; the model-level terms (embedding, lm_head, mtp) are written only in the
// model's `terms`.
struct FlopTermField {
  std::string_view name;
  double FlopTerms::*value;
  bool per_layer;
};
struct ParamTermField {
  std::string_view name;
  std::int64_t ParamTerms::*value;
  bool per_layer;
};

inline constexpr std::array kFlopTermFields{
    FlopTermField{"attention_qkv", &FlopTerms::attention_qkv, true},
    FlopTermField{"attention_out", &FlopTerms::attention_out, true},
    FlopTermField{"attention_scores", &FlopTerms::attention_scores, true},
    FlopTermField{"attention_values", &FlopTerms::attention_values, true},
    FlopTermField{"router", &FlopTerms::router, true},
    FlopTermField{"experts", &FlopTerms::experts, true},
    FlopTermField{"shared_experts", &FlopTerms::shared_experts, true},
    FlopTermField{"dense_ffn", &FlopTerms::dense_ffn, true},
    FlopTermField{"elementwise", &FlopTerms::elementwise, true},
    FlopTermField{"loop_extras", &FlopTerms::loop_extras, false},
    FlopTermField{"lm_head", &FlopTerms::lm_head, false},
    FlopTermField{"mtp", &FlopTerms::mtp, false},
};

inline constexpr std::array kParamTermFields{
    ParamTermField{"embedding", &ParamTerms::embedding, false},
    ParamTermField{"lm_head", &ParamTerms::lm_head, false},
    ParamTermField{"attention", &ParamTerms::attention, true},
    ParamTermField{"norms", &ParamTerms::norms, true},
    ParamTermField{"router", &ParamTerms::router, true},
    ParamTermField{"experts", &ParamTerms::experts, true},
    ParamTermField{"shared_experts", &ParamTerms::shared_experts, true},
    ParamTermField{"dense_ffn", &ParamTerms::dense_ffn, true},
    ParamTermField{"loop_extras", &ParamTerms::loop_extras, false},
};

}  // namespace smelt::detail
