// Violations: the collector of broken rules, so that a caller sees all of them
// at once: add them one by one, merge what a checked call threw, throw one
// config_error at the end. Every reader, validator and option parser of the
// library uses it, and so do the CLI and the Python bindings for their own
// options. In smelt::detail and include/smelt/detail/, as every helper the
// library shares with its CLI and bindings: installed so that they build on the
// installed headers alone, but not API: no promise that the interface stays.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smelt/error.hpp"

namespace smelt::detail {

// Violations one input reports before the rest are summed up in one line: a
// 64 MiB array of bad values would otherwise cost gigabytes of messages.
inline constexpr std::size_t kMaxViolations = 100;

// The one collector of violations: every reader, validator and option parser
// adds to one of these, so that every list stops at the same cap.
class Violations {
 public:
  // The first kMaxViolations are listed; the next adds one line saying that
  // more were found, and the rest are counted but not listed.
  void add(Violation v);
  void add(std::string field, std::string value, std::string rule) {
    add(Violation(std::move(field), std::move(value), std::move(rule)));
  }

  // `value` must lie in [lo, hi]: "must be positive" (lo = 1), "must be at least lo", "must be at most hi".
  // Inline where the value is in range: validate() runs it a dozen times per solver candidate.
  void range(std::string_view field, std::int64_t value, std::int64_t lo, std::int64_t hi) {
    if (value < lo || value > hi) out_of_range(field, value, lo, hi);
  }

  // The violations `e` holds, added one by one.
  void merge(const config_error& e) {
    for (const Violation& v : e.violations()) add(v);
  }

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

  // True once the list holds kMaxViolations and the line after them: a caller
  // checking a long list may then count each further violation with
  // count_unlisted() instead of building a message that would be dropped.
  bool full() const noexcept { return list_.size() > kMaxViolations; }
  void count_unlisted() noexcept { ++found_; }

  bool empty() const noexcept { return found_ == 0; }
  // Every violation added, listed or not: grows with each add, so that a
  // caller can tell whether a check found anything.
  std::size_t size() const noexcept { return found_; }
  // The listed violations: at most kMaxViolations and the line after them.
  const std::vector<Violation>& list() const noexcept { return list_; }
  // The list, leaving this collector empty.
  std::vector<Violation> take() noexcept {
    found_ = 0;
    return std::exchange(list_, {});
  }

  // Throws config_error with the listed violations, if there is any.
  void throw_if_any() {
    if (!list_.empty()) throw config_error(take());
  }

 private:
  void out_of_range(std::string_view field, std::int64_t value, std::int64_t lo, std::int64_t hi);
  std::vector<Violation> list_;
  std::size_t found_ = 0;
};

// Context added when rethrowing: "WHERE:" on its own line, then each violation
// indented by two spaces, each keeping its field, value and rule.
[[noreturn]] void throw_within(const std::string& where, const std::vector<Violation>& violations);

}  // namespace smelt::detail
