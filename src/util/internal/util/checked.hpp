// 64-bit integer arithmetic that reports overflow instead of wrapping.
#pragma once

#include <cstdint>
#include <string>

#include "smelt/error.hpp"

namespace smelt::detail {

// Thrown by the checked helpers. An overflow_error (bad input, exit code 2)
// when it escapes; callers catch it to name the input that caused it.
class overflow : public overflow_error {
 public:
  explicit overflow(const char* quantity)
      : overflow_error(Violation(std::string(quantity) + " overflows 64-bit integers")), quantity_(quantity) {}

  // The quantity being computed ("device bytes"), a literal.
  const char* quantity() const noexcept { return quantity_; }

 private:
  const char* quantity_;
};

// The throw, out of line: a caller that inlines many checked products (the anatomy's builder) keeps only the
// overflow tests, not an error's construction at each.
[[noreturn, gnu::noinline, gnu::cold]] inline void throw_overflow(const char* what) { throw overflow(what); }

inline std::int64_t mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_overflow(what);
  return r;
}

inline std::int64_t add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_overflow(what);
  return r;
}

}  // namespace smelt::detail
