// tests/kernels/emulated/cuda_stand_in/: what the emulated-kernel tests rely on where the CUDA
// toolkit is absent, checked on every machine (with the toolkit present, the
// emulated tests use its own headers and would never notice the stand-in drift).
#include "cuda_stand_in/cuda_bf16.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

float from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint16_t rounded(std::uint32_t float_bits) { return __float2bfloat16_rn(from_bits(float_bits)).__x; }

}  // namespace

TEST_CASE("cuda stand-in: float to bf16 rounds to nearest even, as the toolkit's __float2bfloat16_rn",
          "[cuda_stand_in]") {
  CHECK(rounded(0x3F800000u) == 0x3F80u);  // 1.0 exactly
  // 1 + 2^-8 lies halfway between 1.0 (0x3F80) and 1 + 2^-7 (0x3F81): the tie goes to the even 0x3F80.
  CHECK(rounded(0x3F808000u) == 0x3F80u);
  // 1 + 3 x 2^-8 lies halfway between 0x3F81 and 0x3F82: to the even 0x3F82.
  CHECK(rounded(0x3F818000u) == 0x3F82u);
  CHECK(rounded(0x3F808001u) == 0x3F81u);  // just above the tie: up
  CHECK(rounded(0x3F807FFFu) == 0x3F80u);  // just below it: down
  CHECK(rounded(0xBF808001u) == 0xBF81u);  // the sign does not change the rounding of the magnitude
  CHECK(rounded(0x7F800000u) == 0x7F80u);  // +inf stays +inf
  CHECK(rounded(0x7F7FFFFFu) == 0x7F80u);  // the largest float rounds up past bf16's largest finite: +inf
  CHECK(rounded(0x7FC00001u) == 0x7FFFu);  // a NaN becomes the canonical NaN, never inf
  CHECK(rounded(0x7F800001u) == 0x7FFFu);  // a NaN with only its lowest payload bit set, likewise
}

TEST_CASE("cuda stand-in: bf16 to float is exact, and the pair conversion rounds each half", "[cuda_stand_in]") {
  CHECK(__bfloat162float({0x3F82u}) == 1.015625f);  // 1 + 2/128
  CHECK(__bfloat162float({0xC000u}) == -2.0f);
  CHECK(std::isnan(__bfloat162float({0x7FFFu})));
  const __nv_bfloat162 pair = __floats2bfloat162_rn(1.0f, from_bits(0x3F818000u));
  CHECK(pair.x.__x == 0x3F80u);
  CHECK(pair.y.__x == 0x3F82u);
  const dim3 d(64);
  CHECK((d.x == 64 && d.y == 1 && d.z == 1));
  CHECK(sizeof(uint4) == 16);
  CHECK(alignof(uint4) == 16);
}
