// One writer per Hugging Face family: the inverse of that family's reader in
// config/hf_import.cpp, writing the keys its transformers config class names.
// A writer writes what the schema can hold; export/hf_export.cpp reads the
// result back and reports every field that did not survive.
#pragma once

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "smelt/config.hpp"

namespace smelt::export_detail {

using HfJson = nlohmann::ordered_json;
using HfWriter = void (*)(const ModelConfig&, HfJson&);

struct HfFamily {
  std::string_view model_type;
  std::string_view architecture;  // transformers' causal-LM class, for "architectures"
  HfWriter write;
  // The family's own keys carry its loop (Ouro's total_ut_steps): no smelt "loop" block is added.
  bool own_loop = false;
};

// Every family the import reads, sorted by model_type.
const std::vector<HfFamily>& hf_families();

}  // namespace smelt::export_detail
