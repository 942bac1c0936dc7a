#include "smelt/error.hpp"

#include <numeric>

#include "util/excerpt.hpp"

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

// A message line longer than this echoes a value no reader cut: a safety net,
// far above any message smelt writes itself.
constexpr std::size_t kMaxLineBytes = 4096;

std::vector<std::string> cut_lines(std::vector<std::string> lines) {
  for (auto& line : lines)
    if (line.size() > kMaxLineBytes) line = detail::excerpt(line, kMaxLineBytes);
  return lines;
}
}  // namespace

config_error::config_error(std::vector<std::string> violations)
    : error(join_lines(violations = cut_lines(std::move(violations)))), violations_(std::move(violations)) {}

}  // namespace smelt
