// Placeholder: being written.
#include "smelt/convention.hpp"
#include "smelt/error.hpp"

namespace smelt {
std::string_view to_string(Convention v) { return v == Convention::smelt ? "smelt" : "megatron"; }
Convention parse_convention(std::string_view s, std::string_view) {
  return s == "megatron" ? Convention::megatron : Convention::smelt;
}
MegatronFlops megatron_flops(const ModelConfig&, std::int64_t) { return {}; }
}  // namespace smelt
