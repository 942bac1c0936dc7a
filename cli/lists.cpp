#include "lists.hpp"

#include <algorithm>

#include "smelt/detail/excerpt.hpp"

namespace smelt::cli {
namespace {

std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(" \t") - first + 1));
}

}  // namespace

std::optional<std::vector<std::string>> list_items(std::string_view flag, const std::vector<std::string>& given,
                                                   detail::Violations& errors) {
  if (given.size() == 1 && (trimmed(given[0]).empty() || trimmed(given[0]) == "none"))
    return std::vector<std::string>{};
  std::vector<std::string> out;
  bool ok = true;
  for (const std::string& word : given) {
    std::vector<std::string> items;
    for (std::size_t start = 0;;) {
      const std::size_t comma = word.find(',', start);
      items.push_back(
          trimmed(std::string_view(word).substr(start, comma == std::string::npos ? comma : comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (std::find(items.begin(), items.end(), std::string()) != items.end()) {
      errors.add(fmt::format("{} = \"{}\": has an empty item: separate the values by single commas", flag,
                             detail::excerpt(word)));
      ok = false;
      continue;
    }
    out.insert(out.end(), items.begin(), items.end());
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace smelt::cli
