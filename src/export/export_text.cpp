#include "export/export_text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "smelt/error.hpp"

namespace smelt::detail {

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

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else if (text.substr(i, 2) == "\xc2\x85") {
      out += "\\u0085";
      i += 1;
    } else if (text.substr(i, 3) == "\xe2\x80\xa8" || text.substr(i, 3) == "\xe2\x80\xa9") {
      out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace smelt::detail
