// exp and log written in the four basic operations and bit moves alone, so that
// every build and every machine computes the same bits: a Debug and a Release
// build, a scalar loop and any vector width the compiler chooses (the fit's
// objective is cloned for AVX-512, AVX2 and baseline x86-64). glibc's exp and
// log differ between those paths (libmvec's vector forms are within 4 ulp, the
// scalar forms pick an FMA variant by CPU), and a fitted law's last digits then
// followed the build type and the CPU.
//
// The algorithms and coefficients are fdlibm's (Sun Microsystems, 1993; the
// e_exp.c and e_log.c reductions, also in musl and FreeBSD's libm): error below
// 1 ulp. The file that includes this must be compiled with -ffp-contract=off,
// since a fused multiply-add would round differently from a multiply and an add.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace smelt::scaling_detail {

// The integer value n (|n| < 2^51) of a double that holds one, as the low bits of n + 1.5 x 2^52.
[[gnu::always_inline]] inline std::uint64_t small_integer_bits(double n) {
  return std::bit_cast<std::uint64_t>(n + 0x1.8p52) - std::bit_cast<std::uint64_t>(0x1.8p52);
}

// 2^n for an integer n in [-1022, 1023], held in a double.
[[gnu::always_inline]] inline double power_of_two(double n) {
  return std::bit_cast<double>(small_integer_bits(n + 1023.0) << 52);
}

// e^x: x = k ln 2 + r with |r| <= ln 2 / 2, e^r by fdlibm's rational form, then scaled by 2^k in two
// halves so that a subnormal result is rounded once. Overflow gives +inf, underflow +0, NaN stays NaN.
[[gnu::always_inline]] inline double exact_exp(double x) {
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  constexpr double inv_ln2 = 1.44269504088896338700e+00;
  constexpr double p1 = 1.66666666666666019037e-01, p2 = -2.77777777770155933842e-03, p3 = 6.61375632143793436117e-05,
                   p4 = -1.65339022054652515390e-06, p5 = 4.13813679705723846039e-08;
  constexpr double over = 7.09782712893383973096e+02, under = -7.45133219101941108420e+02;
  const double clamped = x > over ? over : (x < under ? under : x);  // keeps k in range; NaN passes through
  const double k = (clamped * inv_ln2 + 0x1.8p52) - 0x1.8p52;        // nearest integer to x / ln 2
  const double hi = clamped - k * ln2_hi;                            // exact: ln2_hi has 32 trailing zero bits
  const double lo = k * ln2_lo;
  const double r = hi - lo;
  const double t = r * r;
  const double c = r - t * (p1 + t * (p2 + t * (p3 + t * (p4 + t * p5))));
  const double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
  const double half = (k * 0.5 + 0x1.8p52) - 0x1.8p52;  // k = half + rest, each in the normal range
  const double scaled = y * power_of_two(half) * power_of_two(k - half);
  return x > over ? std::numeric_limits<double>::infinity() : (x < under ? 0.0 : scaled);
}

// log x for x >= the smallest normal double (the objective takes it of 1 + e^u + e^v, at least 1); +inf
// gives +inf, NaN gives NaN. x = 2^k (1 + f) with 1 + f in [sqrt(2) / 2, sqrt(2)), log(1 + f) by fdlibm's
// series in s = f / (2 + f).
[[gnu::always_inline]] inline double exact_log(double x) {
  constexpr double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  constexpr double lg1 = 6.666666666666735130e-01, lg2 = 3.999999999940941908e-01, lg3 = 2.857142874366239149e-01,
                   lg4 = 2.222219843214978396e-01, lg5 = 1.818357216161805012e-01, lg6 = 1.531383769920937332e-01,
                   lg7 = 1.479819860511658591e-01;
  constexpr double sqrt2 = 1.41421356237309504880;
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const double exponent = std::bit_cast<double>((bits >> 52) | std::bit_cast<std::uint64_t>(0x1.0p52)) - 0x1.0p52;
  const double m = std::bit_cast<double>((bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);  // in [1, 2)
  const bool above = m > sqrt2;
  const double k = exponent - 1023.0 + (above ? 1.0 : 0.0);
  const double f = (above ? m * 0.5 : m) - 1.0;  // exact (Sterbenz)
  const double s = f / (2.0 + f);
  const double z = s * s, w = z * z;
  const double r = z * (lg1 + w * (lg3 + w * (lg5 + w * lg7))) + w * (lg2 + w * (lg4 + w * lg6));
  const double hfsq = 0.5 * f * f;
  const double y = k * ln2_hi - ((hfsq - (s * (hfsq + r) + k * ln2_lo)) - f);
  return x == std::numeric_limits<double>::infinity() ? x : (x != x ? x : y);
}

}  // namespace smelt::scaling_detail
