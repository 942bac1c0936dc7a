#include "smelt/error.hpp"

#include <numeric>

namespace smelt {
namespace {
std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) {
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}
}  // namespace

config_error::config_error(std::vector<std::string> violations)
    : error(join_lines(violations)), violations_(std::move(violations)) {}

}  // namespace smelt
