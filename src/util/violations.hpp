// Collecting every broken rule before throwing, so a caller sees all of them at
// once: add them one by one, merge what a checked call threw, throw at the end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smelt/error.hpp"

namespace smelt::detail {

class Violations {
 public:
  void add(Violation v) { list_.push_back(std::move(v)); }
  void add(std::string field, std::string value, std::string rule) {
    list_.emplace_back(std::move(field), std::move(value), std::move(rule));
  }

  // `value` must lie in [lo, hi]: "must be positive" (lo = 1), "must be at least lo", "must be at most hi".
  void range(std::string_view field, std::int64_t value, std::int64_t lo, std::int64_t hi);

  // The violations `e` holds, appended.
  void merge(const config_error& e) { list_.insert(list_.end(), e.violations().begin(), e.violations().end()); }

  // Runs `check`, merging a config_error it throws; true when it threw none.
  template <class Check>
  bool collect(Check&& check) {
    try {
      std::forward<Check>(check)();
      return true;
    } catch (const config_error& e) {
      merge(e);
      return false;
    }
  }

  bool empty() const noexcept { return list_.empty(); }
  std::size_t size() const noexcept { return list_.size(); }
  std::vector<Violation>& list() noexcept { return list_; }
  const std::vector<Violation>& list() const noexcept { return list_; }

  // Throws config_error with every violation, if there is any.
  void throw_if_any() {
    if (!list_.empty()) throw config_error(std::move(list_));
  }

 private:
  std::vector<Violation> list_;
};

// Context added when rethrowing: "WHERE:" on its own line, then each violation
// indented by two spaces, each keeping its field, value and rule.
[[noreturn]] void throw_within(const std::string& where, const std::vector<Violation>& violations);

}  // namespace smelt::detail
