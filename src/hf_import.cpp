// Placeholder: being written.
#include "hf_import.hpp"

#include "smelt/error.hpp"

namespace smelt::detail {
ModelConfig import_hf(const nlohmann::json&, std::string_view) { throw config_error("not yet"); }
std::vector<std::string> hf_model_types() { return {}; }
}  // namespace smelt::detail
