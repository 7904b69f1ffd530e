// kjit prelude: float16 and bfloat16 storage types. Arithmetic converts to float32, computes,
// and rounds back to nearest even, as CUDA's half arithmetic does (no cuda_fp16.h needed).
//@chunk half requires core
namespace kj {
/// IEEE binary16 bits to float32.
KJ_FUNC float half_to_float(kj_uint16 h) {
  kj_uint32 sign = (kj_uint32)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return float_of_bits(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float f = (float)mant * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  return float_of_bits(sign | ((exp + 112) << 23) | (mant << 13));
}
/// float32 to IEEE binary16 bits, rounding to nearest even (as kjit::half on the host).
KJ_FUNC kj_uint16 float_to_half(float f) {
  kj_uint32 x = bits_of(f), sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) return (kj_uint16)(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
  if (mag >= 0x477ff000u) return (kj_uint16)(sign | 0x7c00u);
  if (mag < 0x38800000u) return (kj_uint16)(sign | (bits_of(float_of_bits(mag) + 0.5f) - 0x3f000000u));
  kj_uint32 odd = (mag >> 13) & 1u;
  mag += 0xc8000fffu + odd;
  return (kj_uint16)(sign | (mag >> 13));
}
KJ_FUNC kj_uint16 float_to_bfloat16(float f) {
  kj_uint32 x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (kj_uint16)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (kj_uint16)(x >> 16);
}

#define KJ_HALF_TYPE(T, TO_FLOAT, FROM_FLOAT)                                                     \
  struct T {                                                                                      \
    kj_uint16 bits;                                                                               \
    T() = default;                                                                                \
    KJ_FUNC T(float f) : bits(FROM_FLOAT(f)) {}                                                   \
    KJ_FUNC T(double f) : bits(FROM_FLOAT((float)f)) {}                                           \
    KJ_FUNC T(int i) : bits(FROM_FLOAT((float)i)) {}                                              \
    KJ_FUNC operator float() const { return TO_FLOAT(bits); }                                     \
  };                                                                                              \
  KJ_FUNC T operator+(T a, T b) { return T(float(a) + float(b)); }                                \
  KJ_FUNC T operator-(T a, T b) { return T(float(a) - float(b)); }                                \
  KJ_FUNC T operator*(T a, T b) { return T(float(a) * float(b)); }                                \
  KJ_FUNC T operator/(T a, T b) { return T(float(a) / float(b)); }                                \
  KJ_FUNC T operator-(T a) { T r = a; r.bits ^= 0x8000u; return r; }                             \
  KJ_FUNC T operator+(T a) { return a; }                                                          \
  KJ_FUNC T& operator+=(T& a, T b) { return a = a + b; }                                          \
  KJ_FUNC T& operator-=(T& a, T b) { return a = a - b; }                                          \
  KJ_FUNC T& operator*=(T& a, T b) { return a = a * b; }                                          \
  KJ_FUNC T& operator/=(T& a, T b) { return a = a / b; }                                          \
  KJ_FUNC bool operator<(T a, T b) { return float(a) < float(b); }                                \
  KJ_FUNC bool operator<=(T a, T b) { return float(a) <= float(b); }                              \
  KJ_FUNC bool operator>(T a, T b) { return float(a) > float(b); }                                \
  KJ_FUNC bool operator>=(T a, T b) { return float(a) >= float(b); }                              \
  KJ_FUNC bool operator==(T a, T b) { return float(a) == float(b); }                              \
  KJ_FUNC bool operator!=(T a, T b) { return float(a) != float(b); }
KJ_FUNC float bfloat16_to_float(kj_uint16 b) { return float_of_bits((kj_uint32)b << 16); }
KJ_HALF_TYPE(half, half_to_float, float_to_half)
KJ_HALF_TYPE(bfloat16, bfloat16_to_float, float_to_bfloat16)
#undef KJ_HALF_TYPE
// The arithmetic builtins without an operator, on 16-bit floats (through float32).
KJ_FUNC half mod(half a, half b) { return half(::fmodf(float(a), float(b))); }
KJ_FUNC bfloat16 mod(bfloat16 a, bfloat16 b) { return bfloat16(::fmodf(float(a), float(b))); }
KJ_FUNC half floordiv(half a, half b) { return half(::floorf(float(a) / float(b))); }
KJ_FUNC bfloat16 floordiv(bfloat16 a, bfloat16 b) { return bfloat16(::floorf(float(a) / float(b))); }
}  // namespace kj
