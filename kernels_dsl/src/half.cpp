// Conversions between float32 and the 16-bit storage types (round to nearest even).
#include <cstring>

#include "kjit/types.hpp"

namespace kjit {

namespace {
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace

half::half(float f) {
  uint32_t x = bits_of(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) {  // inf or nan
    bits = uint16_t(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
    return;
  }
  if (mag >= 0x477ff000u) {  // rounds to beyond the largest half: infinity
    bits = uint16_t(sign | 0x7c00u);
    return;
  }
  if (mag < 0x38800000u) {  // subnormal half (or zero)
    // Add the float to 0.5 so that the hardware's rounding leaves the half's mantissa in
    // the low bits.
    float shifted = float_of(mag) + 0.5f;
    bits = uint16_t(sign | (bits_of(shifted) - 0x3f000000u));
    return;
  }
  uint32_t mant_odd = (mag >> 13) & 1u;
  mag += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  bits = uint16_t(sign | (mag >> 13));
}

half::operator float() const {
  uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  if (exp == 0x1f) return float_of(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return float_of(sign);
    float f = float(mant) * (1.0f / 16777216.0f);  // mant * 2^-24
    return sign ? -f : f;
  }
  return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

bfloat16::bfloat16(float f) {
  uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // nan stays nan
    bits = uint16_t((x >> 16) | 0x40u);
    return;
  }
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
  bits = uint16_t(x >> 16);
}

bfloat16::operator float() const { return float_of(uint32_t(bits) << 16); }

}  // namespace kjit
