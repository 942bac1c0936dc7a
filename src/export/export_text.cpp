#include "export/export_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "smelt/error.hpp"

namespace smelt::export_detail {

void require_utf8_name(const ModelConfig& config) {
  try {
    (void)nlohmann::json(config.name).dump();
  } catch (const nlohmann::json::type_error&) {
    throw config_error(Violation("name", "", "must be UTF-8 text"));  // its bytes are not echoed: they are not text
  }
}

std::string ascii_literal(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', /*ensure_ascii=*/true);
}

}  // namespace smelt::export_detail
