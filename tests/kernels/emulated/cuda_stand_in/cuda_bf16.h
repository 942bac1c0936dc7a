// A stand-in for the CUDA toolkit's <cuda_bf16.h> where the toolkit is absent
// (see cuda_runtime.h here): bfloat16 as its 16 bits, with the toolkit's
// conversions (round to nearest even; a NaN becomes the canonical 0x7fff).
#pragma once

#include <cstdint>
#include <cstring>

#include "cuda_runtime.h"

struct __nv_bfloat16 {
  std::uint16_t __x;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
};

inline float __bfloat162float(__nv_bfloat16 b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b.__x) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return {0x7fff};
  bits += 0x7fffu + ((bits >> 16) & 1u);  // ties to even
  return {static_cast<std::uint16_t>(bits >> 16)};
}

inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return {__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}
