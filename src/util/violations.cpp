#include "smelt/detail/violations.hpp"

#include <fmt/format.h>

namespace smelt::detail {

void Violations::add(Violation v) {
  if (list_.size() < kMaxViolations)
    list_.push_back(std::move(v));
  else if (list_.size() == kMaxViolations)
    list_.emplace_back(fmt::format("(more violations after the first {} are not listed)", kMaxViolations));
  ++found_;
}

void Violations::out_of_range(std::string_view field, std::int64_t value, std::int64_t lo, std::int64_t hi) {
  const std::string shown = fmt::format("{}", value);
  if (value < lo && lo == 1)
    add(std::string(field), shown, "must be positive");
  else if (value < lo)
    add(std::string(field), shown, fmt::format("must be at least {}", lo));
  else if (value > hi)
    add(std::string(field), shown, fmt::format("must be at most {}", hi));
}

void throw_within(const std::string& where, const std::vector<Violation>& violations) {
  std::vector<Violation> lines{Violation(where + ":")};
  for (Violation v : violations) {
    (v.field.empty() ? v.rule : v.field).insert(0, "  ");
    if (v.field.empty())
      for (FieldMention& m : v.mentions) m.offset += 2;
    lines.push_back(std::move(v));
  }
  throw config_error(std::move(lines));
}

}  // namespace smelt::detail
