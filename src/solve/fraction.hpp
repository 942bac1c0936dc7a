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

// Exact three-way comparison of two fractions, without overflow: compares
// integer parts, then the reciprocals of the remainders (a continued fraction).
int compare(Fraction a, Fraction b);

}  // namespace smelt::solve_detail
