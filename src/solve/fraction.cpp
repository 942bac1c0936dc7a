#include "solve/fraction.hpp"

namespace smelt::solve_detail {

int compare(Fraction a, Fraction b) {
  // Where every term is below 2^63 the cross products fit 128 bits: compared
  // exactly without a division (the common case, and 128-bit division is slow).
  constexpr i128 kSmall = i128{1} << 63;
  if (a.num < kSmall && a.den < kSmall && b.num < kSmall && b.den < kSmall) {
    const i128 l = a.num * b.den;
    const i128 r = b.num * a.den;
    return l < r ? -1 : (l > r ? 1 : 0);
  }
  int sign = 1;  // each step to the reciprocals of the remainders reverses the order
  for (;;) {
    const i128 qa = a.num / a.den;
    const i128 qb = b.num / b.den;
    if (qa != qb) return qa < qb ? -sign : sign;
    const i128 ra = a.num % a.den;
    const i128 rb = b.num % b.den;
    if (ra == 0 || rb == 0) return ra == rb ? 0 : (ra == 0 ? -sign : sign);
    // ra/a.den < rb/b.den  <=>  a.den/ra > b.den/rb
    a = {a.den, ra};
    b = {b.den, rb};
    sign = -sign;
  }
}

}  // namespace smelt::solve_detail
