#include "solve/fraction.hpp"

namespace smelt::solve_detail {

int compare_large(Fraction a, Fraction b) {
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
