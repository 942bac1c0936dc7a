#include "smelt/error.hpp"

#include "smelt/excerpt.hpp"

namespace smelt {
namespace {

// A part of a message longer than this echoes a value no reader cut: a safety
// net, far above any message smelt writes itself.
constexpr std::size_t kMaxPartBytes = 4096;

std::string cut(std::string text) { return text.size() > kMaxPartBytes ? detail::excerpt(text, kMaxPartBytes) : text; }

std::vector<Violation> cut_parts(std::vector<Violation> violations) {
  for (auto& v : violations) {
    v.field = cut(std::move(v.field));
    v.value = cut(std::move(v.value));
    v.rule = cut(std::move(v.rule));
  }
  return violations;
}

std::string join_lines(const std::vector<Violation>& violations) {
  std::string out;
  for (const auto& v : violations) {
    if (!out.empty()) out += '\n';
    out += v.text();
  }
  return out;
}

}  // namespace

std::string Violation::text() const {
  if (field.empty()) return rule;
  if (value.empty()) return field + ": " + rule;
  return field + " = " + value + ": " + rule;
}

config_error::config_error(std::vector<Violation> violations)
    : error(join_lines(violations = cut_parts(std::move(violations)))), violations_(std::move(violations)) {}

std::vector<std::string> config_error::lines() const {
  std::vector<std::string> out;
  out.reserve(violations_.size());
  for (const auto& v : violations_) out.push_back(v.text());
  return out;
}

}  // namespace smelt
