// Exact non-negative fractions: the solver's mismatches (budget gaps over
// budgets, whose terms can pass 2^63) and the attention-width rule's ratios
// (terms below 2^50) are compared as fractions, never as rounded floating point.
#pragma once

namespace smelt::solve_detail {

__extension__ typedef __int128 i128;  // FLOPs over a whole sequence can pass 2^63

// A non-negative fraction num / den with den > 0.
struct Fraction {
  i128 num = 0;
  i128 den = 1;
};

// Exact three-way comparison of two fractions whose terms reach 2^63, without
// overflow: compares integer parts, then the reciprocals of the remainders (a
// continued fraction).
int compare_large(Fraction a, Fraction b);

// Exact three-way comparison of two fractions. Where every term is below 2^63
// the cross products fit 128 bits: compared exactly without a division (the
// common case, inline: the search compares a few hundred times per candidate).
inline int compare(Fraction a, Fraction b) {
  constexpr i128 kSmall = i128{1} << 63;
  if (a.num < kSmall && a.den < kSmall && b.num < kSmall && b.den < kSmall) {
    const i128 l = a.num * b.den;
    const i128 r = b.num * a.den;
    return l < r ? -1 : (l > r ? 1 : 0);
  }
  return compare_large(a, b);
}

}  // namespace smelt::solve_detail
