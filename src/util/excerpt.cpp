#include "smelt/detail/excerpt.hpp"

#include <fmt/format.h>

namespace smelt::detail {

std::string excerpt(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  std::size_t cut = limit;
  // Back up over continuation bytes (10xxxxxx) to the start of a character.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
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

std::string name_excerpt(std::string_view name, std::size_t limit) {
  // Cut before escaping too: a 60 MB name is not copied whole.
  const std::string shown = one_line(name.size() <= 4 * limit ? name : std::string_view(excerpt(name, 4 * limit)));
  if (shown.size() <= limit && name.size() <= limit) return shown;
  return fmt::format("{} ({} bytes)", excerpt(shown, limit), name.size());
}

}  // namespace smelt::detail
