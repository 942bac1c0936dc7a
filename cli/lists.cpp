#include "lists.hpp"

namespace smelt::cli {

std::vector<std::string> list_items(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (std::string item : given) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    out.push_back(std::move(item));
  }
  if (out.size() == 1 && (out[0].empty() || out[0] == "none")) out.clear();
  return out;
}

}  // namespace smelt::cli
