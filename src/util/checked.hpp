// 64-bit integer arithmetic that reports overflow instead of wrapping.
#pragma once

#include <cstdint>
#include <stdexcept>

namespace smelt::detail {

// Thrown by the checked helpers; what() names the quantity being computed.
class overflow : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline std::int64_t mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw overflow(what);
  return r;
}

inline std::int64_t add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw overflow(what);
  return r;
}

}  // namespace smelt::detail
