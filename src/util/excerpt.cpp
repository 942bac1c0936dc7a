#include "smelt/excerpt.hpp"

#include <fmt/format.h>

namespace smelt::detail {

std::string excerpt(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  std::size_t cut = limit;
  // Back up over continuation bytes (10xxxxxx) to the start of a character.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

std::string name_excerpt(std::string_view name, std::size_t limit) {
  if (name.size() <= limit) return std::string(name);
  return fmt::format("{} ({} bytes)", excerpt(name, limit), name.size());
}

}  // namespace smelt::detail
