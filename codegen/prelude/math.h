// kjit prelude: scalar math builtins, each forward function beside its adjoint. float and
// double map to the C math library (CUDA's under NVRTC); 16-bit floats compute in float32.
//@chunk math requires core
// CUDA's float sine, cosine and tangent carry their slow path (Payne-Hanek reduction for
// |x| >= 105615: a loop over a local array) inline, where the double ones call it. In a
// module with many of them (codegen defines KJ_OUTLINE_TRIG, prelude_requirements.hpp says
// when) each is one out-of-line copy of the same function, called: the same results, and
// NVVM's time no longer grows with the square of the kernel (docs/BENCHMARKS.md).
#if KJ_CUDA && defined(KJ_OUTLINE_TRIG)
__device__ __noinline__ float kj_sinf_call(float x) { return ::sinf(x); }
__device__ __noinline__ float kj_cosf_call(float x) { return ::cosf(x); }
__device__ __noinline__ float kj_tanf_call(float x) { return ::tanf(x); }
#define KJ_SINF kj_sinf_call
#define KJ_COSF kj_cosf_call
#define KJ_TANF kj_tanf_call
#else
#define KJ_SINF sinf
#define KJ_COSF cosf
#define KJ_TANF tanf
#endif
namespace kj {
// Forward functions: float, double, and a fallback for float16/bfloat16 through float32.
#define KJ_MATH1(name, f32, f64)                                         \
  KJ_FUNC float name(float x) { return ::f32(x); }                       \
  KJ_FUNC double name(double x) { return ::f64(x); }                     \
  template <class T> KJ_FUNC T name(T x) { return T(::f32(float(x))); }
KJ_MATH1(sin, KJ_SINF, sin)
KJ_MATH1(cos, KJ_COSF, cos)
KJ_MATH1(tan, KJ_TANF, tan)
KJ_MATH1(exp, expf, exp)
KJ_MATH1(log, logf, log)
KJ_MATH1(sqrt, sqrtf, sqrt)
KJ_MATH1(floor, floorf, floor)
KJ_MATH1(ceil, ceilf, ceil)
KJ_MATH1(atan, atanf, atan)
KJ_MATH1(sinh, sinhf, sinh)
KJ_MATH1(cosh, coshf, cosh)
KJ_MATH1(tanh, tanhf, tanh)
KJ_MATH1(cbrt, cbrtf, cbrt)
KJ_MATH1(erf, erff, erf)
KJ_MATH1(erfc, erfcf, erfc)
KJ_MATH1(log2, log2f, log2)
KJ_MATH1(log10, log10f, log10)
KJ_MATH1(trunc, truncf, trunc)
KJ_MATH1(round, roundf, round)  // halfway cases away from zero
KJ_MATH1(rint, rintf, rint)     // halfway cases to even
#undef KJ_MATH1
#define KJ_MATH2(name, f32, f64)                                           \
  KJ_FUNC float name(float x, float y) { return ::f32(x, y); }             \
  KJ_FUNC double name(double x, double y) { return ::f64(x, y); }          \
  template <class T> KJ_FUNC T name(T x, T y) { return T(::f32(float(x), float(y))); }
KJ_MATH2(pow, powf, pow)
KJ_MATH2(atan2, atan2f, atan2)
KJ_MATH2(copysign, copysignf, copysign)
#undef KJ_MATH2

/// The product in double, rounded once (Warp's: its constants are double literals).
template <class T> KJ_FUNC T degrees(T x) { return T(double(x) * 57.29577951308232); }
template <class T> KJ_FUNC T radians(T x) { return T(double(x) * 0.017453292519943295); }
/// The fractional part, with the sign of x: x - trunc(x).
template <class T> KJ_FUNC T frac(T x) { return x - trunc(x); }

template <class T> KJ_FUNC void adj_sin(T x, T ret, T& adj_x, T adj_ret) { adj_x += cos(x) * adj_ret; }
template <class T> KJ_FUNC void adj_cos(T x, T ret, T& adj_x, T adj_ret) { adj_x -= sin(x) * adj_ret; }
template <class T> KJ_FUNC void adj_tan(T x, T ret, T& adj_x, T adj_ret) { adj_x += (T(1) + ret * ret) * adj_ret; }
template <class T> KJ_FUNC void adj_exp(T x, T ret, T& adj_x, T adj_ret) { adj_x += ret * adj_ret; }
template <class T> KJ_FUNC void adj_log(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret / x; }
template <class T> KJ_FUNC void adj_sqrt(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret / (T(2) * ret); }
template <class T> KJ_FUNC void adj_pow(T x, T y, T ret, T& adj_x, T& adj_y, T adj_ret) {
  adj_x += adj_ret * y * pow(x, y - T(1));
  if (x > T(0)) adj_y += adj_ret * ret * log(x);
}
/// asin and acos clamp their argument to [-1, 1] first, with clamp's NaN rule, as Warp's
/// (acos(NaN) is pi, acos(3) is 0); outside the interval the gradient is 0.
template <class T> KJ_FUNC T clamp_unit(T x) { return x <= T(-1) ? T(-1) : x >= T(1) ? T(1) : x == x ? x : T(-1); }
KJ_FUNC float asin(float x) { return ::asinf(clamp_unit(x)); }
KJ_FUNC double asin(double x) { return ::asin(clamp_unit(x)); }
template <class T> KJ_FUNC T asin(T x) { return T(asin(float(x))); }
KJ_FUNC float acos(float x) { return ::acosf(clamp_unit(x)); }
KJ_FUNC double acos(double x) { return ::acos(clamp_unit(x)); }
template <class T> KJ_FUNC T acos(T x) { return T(acos(float(x))); }
template <class T> KJ_FUNC void adj_asin(T x, T ret, T& adj_x, T adj_ret) { T d = sqrt(T(1) - x * x); if (d > T(0)) adj_x += adj_ret / d; }
template <class T> KJ_FUNC void adj_acos(T x, T ret, T& adj_x, T adj_ret) { T d = sqrt(T(1) - x * x); if (d > T(0)) adj_x -= adj_ret / d; }
template <class T> KJ_FUNC void adj_atan(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret / (T(1) + x * x); }
template <class T> KJ_FUNC void adj_atan2(T y, T x, T ret, T& adj_y, T& adj_x, T adj_ret) {
  T r2 = x * x + y * y;
  if (r2 > T(0)) { adj_y += adj_ret * x / r2; adj_x -= adj_ret * y / r2; }
}
template <class T> KJ_FUNC void adj_sinh(T x, T ret, T& adj_x, T adj_ret) { adj_x += cosh(x) * adj_ret; }
template <class T> KJ_FUNC void adj_cosh(T x, T ret, T& adj_x, T adj_ret) { adj_x += sinh(x) * adj_ret; }
template <class T> KJ_FUNC void adj_tanh(T x, T ret, T& adj_x, T adj_ret) { adj_x += (T(1) - ret * ret) * adj_ret; }
template <class T> KJ_FUNC void adj_cbrt(T x, T ret, T& adj_x, T adj_ret) { if (ret != T(0)) adj_x += adj_ret / (T(3) * ret * ret); }
template <class T> KJ_FUNC void adj_erf(T x, T ret, T& adj_x, T adj_ret) { adj_x += T(1.1283791670955126) * exp(-x * x) * adj_ret; }
template <class T> KJ_FUNC void adj_erfc(T x, T ret, T& adj_x, T adj_ret) { adj_x -= T(1.1283791670955126) * exp(-x * x) * adj_ret; }
template <class T> KJ_FUNC void adj_log2(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret / (x * T(0.6931471805599453)); }
template <class T> KJ_FUNC void adj_log10(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret / (x * T(2.302585092994046)); }
template <class T> KJ_FUNC void adj_degrees(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret * T(57.29577951308232); }
template <class T> KJ_FUNC void adj_radians(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret * T(0.017453292519943295); }
/// frac is x minus a piecewise constant: its derivative is 1 (Warp gives none).
template <class T> KJ_FUNC void adj_frac(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret; }
/// copysign(x, y) = ±x: d/dx is the product of the signs; y only chooses the sign.
template <class T> KJ_FUNC void adj_copysign(T x, T y, T ret, T& adj_x, T& adj_y, T adj_ret) {
  adj_x += ((x < T(0)) == (ret < T(0)) ? adj_ret : -adj_ret);
}
}  // namespace kj

//@chunk erfinv requires math
namespace kj {
/// The inverse error function: Giles' single-precision approximation ("Approximating the
/// erfinv function", GPU Gems 4) as a start, refined by Newton steps on erf (or on erfc for
/// erfcinv, which keeps precision in the tail). Identical code on cpu and CUDA.
template <class T> KJ_FUNC T erfinv_start(T w, T x) {
  T p;
  if (w < T(5)) {
    w = w - T(2.5);
    p = T(2.81022636e-08);
    p = T(3.43273939e-07) + p * w; p = T(-3.5233877e-06) + p * w; p = T(-4.39150654e-06) + p * w;
    p = T(0.00021858087) + p * w; p = T(-0.00125372503) + p * w; p = T(-0.00417768164) + p * w;
    p = T(0.246640727) + p * w; p = T(1.50140941) + p * w;
  } else {
    w = sqrt(w) - T(3);
    p = T(-0.000200214257);
    p = T(0.000100950558) + p * w; p = T(0.00134934322) + p * w; p = T(-0.00367342844) + p * w;
    p = T(0.00573950773) + p * w; p = T(-0.0076224613) + p * w; p = T(0.00943887047) + p * w;
    p = T(1.00167406) + p * w; p = T(2.83297682) + p * w;
  }
  return p * x;
}
template <class T> KJ_FUNC_BIG T erfinv(T y) {
  if (y <= T(-1) || y >= T(1)) return y == T(1) ? T(1) / T(0) : (y == T(-1) ? T(-1) / T(0) : T(0) / T(0));
  T x = erfinv_start(-log((T(1) - y) * (T(1) + y)), y);
  for (int k = 0; k < 2; ++k) x -= (erf(x) - y) / (T(1.1283791670955126) * exp(-x * x));
  return x;
}
template <class T> KJ_FUNC_BIG T erfcinv(T y) {
  if (y <= T(0) || y >= T(2)) return y == T(0) ? T(1) / T(0) : (y == T(2) ? T(-1) / T(0) : T(0) / T(0));
  T w = -log(y * (T(2) - y));
  // Past the approximation's range (y below ~5e-8): the tail's asymptote erfc(x) ~
  // exp(-x^2) / (x sqrt(pi)), solved by two fixed-point steps, and one Newton step more.
  T x = erfinv_start(w, T(1) - y);
  int steps = 2;
  if (w > T(16)) {
    x = sqrt(-log(y));
    for (int k = 0; k < 2; ++k) x = sqrt(-log(y * x * T(1.7724538509055159)));
    steps = 3;
  }
  for (int k = 0; k < steps; ++k) {
    T slope = T(1.1283791670955126) * exp(-x * x);  // 0 in the far tail of float: keep the start
    if (slope > T(0)) x += (erfc(x) - y) / slope;
  }
  return x;
}
template <class T> KJ_FUNC void adj_erfinv(T y, T ret, T& adj_y, T adj_ret) { adj_y += T(0.886226925452758) * exp(ret * ret) * adj_ret; }
template <class T> KJ_FUNC void adj_erfcinv(T y, T ret, T& adj_y, T adj_ret) { adj_y -= T(0.886226925452758) * exp(ret * ret) * adj_ret; }
}  // namespace kj

//@chunk classify requires core
namespace kj {
KJ_FUNC bool isnan(float x) { return (bits_of(x) & 0x7fffffffu) > 0x7f800000u; }
KJ_FUNC bool isnan(double x) { return (bits_of(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }
KJ_FUNC bool isinf(float x) { return (bits_of(x) & 0x7fffffffu) == 0x7f800000u; }
KJ_FUNC bool isinf(double x) { return (bits_of(x) & 0x7fffffffffffffffull) == 0x7ff0000000000000ull; }
KJ_FUNC bool isfinite(float x) { return (bits_of(x) & 0x7f800000u) != 0x7f800000u; }
KJ_FUNC bool isfinite(double x) { return (bits_of(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull; }
template <class T> KJ_FUNC bool isnan(T x) { return isnan(float(x)); }
template <class T> KJ_FUNC bool isinf(T x) { return isinf(float(x)); }
template <class T> KJ_FUNC bool isfinite(T x) { return isfinite(float(x)); }
}  // namespace kj

//@chunk sign requires core
namespace kj {
/// -1 when x < 0, else 1 (componentwise on vectors).
template <class T> KJ_FUNC T sign(T x) { return x < T(0) ? T(-1) : T(1); }
/// 1 when x < 0, else 0 (Warp's step).
template <class T> KJ_FUNC T step(T x) { return x < T(0) ? T(1) : T(0); }
/// 1 when x != 0, else 0.
template <class T> KJ_FUNC T nonzero(T x) { return x != T(0) ? T(1) : T(0); }
template <int N, class T> KJ_FUNC vec_t<N, T> sign(vec_t<N, T> v) { for (int i = 0; i < N; ++i) v.c[i] = sign(v.c[i]); return v; }
}  // namespace kj

//@chunk bits requires core
namespace kj {
/// The number of set bits of x's two's complement representation, in x's type (Warp's
/// bit_count): 8 for int8(-1), 64 for uint64 all ones.
template <class T> KJ_FUNC T bit_count(T x) {
  const unsigned long long mask = sizeof(T) == 8 ? ~0ull : (1ull << (8 * sizeof(T))) - 1;
  const unsigned long long u = (unsigned long long)x & mask;
#if KJ_CUDA
  return T(__popcll(u));
#else
  return T(__builtin_popcountll(u));
#endif
}
}  // namespace kj

//@chunk abs requires core
namespace kj {
template <class T> KJ_FUNC T abs(T x) { return x < T(0) ? -x : x; }
/// Floats clear the sign bit (abs(-0) is +0, as C's fabs and Warp's).
#if KJ_CUDA
KJ_FUNC float abs(float x) { return ::fabsf(x); }
KJ_FUNC double abs(double x) { return ::fabs(x); }
#else
KJ_FUNC float abs(float x) { return __builtin_fabsf(x); }
KJ_FUNC double abs(double x) { return __builtin_fabs(x); }
#endif
template <int N, class T> KJ_FUNC vec_t<N, T> abs(vec_t<N, T> v) { for (int i = 0; i < N; ++i) v.c[i] = abs(v.c[i]); return v; }
template <class T> KJ_FUNC void adj_abs(T x, T ret, T& adj_x, T adj_ret) {
  if (x > T(0)) adj_x += adj_ret; else if (x < T(0)) adj_x -= adj_ret;
}
template <int N, class T> KJ_FUNC void adj_abs(const vec_t<N, T>& x, const vec_t<N, T>& ret, vec_t<N, T>& adj_x, const vec_t<N, T>& adj_ret) {
  for (int i = 0; i < N; ++i) adj_abs(x.c[i], ret.c[i], adj_x.c[i], adj_ret.c[i]);
}
}  // namespace kj

//@chunk minmax requires core
namespace kj {
/// Warp's rules (C's fmin/fmax on floats): a NaN operand is a missing value, so the other
/// operand is returned and NaN only when both are; ties return the first operand.
template <class T> KJ_FUNC T min(T a, T b) { return a <= b ? a : (b == b ? b : a); }
template <class T> KJ_FUNC T max(T a, T b) { return a >= b ? a : (b == b ? b : a); }
template <int N, class T> KJ_FUNC vec_t<N, T> min(vec_t<N, T> a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] = min(a.c[i], b.c[i]); return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> max(vec_t<N, T> a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] = max(a.c[i], b.c[i]); return a; }
/// The smallest / largest component of a vector.
template <int N, class T> KJ_FUNC T min(const vec_t<N, T>& v) { T m = v.c[0]; for (int i = 1; i < N; ++i) m = min(m, v.c[i]); return m; }
template <int N, class T> KJ_FUNC T max(const vec_t<N, T>& v) { T m = v.c[0]; for (int i = 1; i < N; ++i) m = max(m, v.c[i]); return m; }
// The gradient goes to the operand that was selected (the first one on ties).
template <class T> KJ_FUNC void adj_min(T a, T b, T ret, T& adj_a, T& adj_b, T adj_ret) { if (a <= b || b != b) adj_a += adj_ret; else adj_b += adj_ret; }
template <class T> KJ_FUNC void adj_max(T a, T b, T ret, T& adj_a, T& adj_b, T adj_ret) { if (a >= b || b != b) adj_a += adj_ret; else adj_b += adj_ret; }
template <int N, class T> KJ_FUNC void adj_min(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& ret, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b, const vec_t<N, T>& adj_ret) { for (int i = 0; i < N; ++i) adj_min(a.c[i], b.c[i], ret.c[i], adj_a.c[i], adj_b.c[i], adj_ret.c[i]); }
template <int N, class T> KJ_FUNC void adj_max(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& ret, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b, const vec_t<N, T>& adj_ret) { for (int i = 0; i < N; ++i) adj_max(a.c[i], b.c[i], ret.c[i], adj_a.c[i], adj_b.c[i], adj_ret.c[i]); }
// One vector: the gradient goes to the first component holding the extreme value.
template <int N, class T> KJ_FUNC void adj_min(const vec_t<N, T>& v, T ret, vec_t<N, T>& adj_v, T adj_ret) { for (int i = 0; i < N; ++i) if (v.c[i] == ret) { adj_v.c[i] += adj_ret; return; } }
template <int N, class T> KJ_FUNC void adj_max(const vec_t<N, T>& v, T ret, vec_t<N, T>& adj_v, T adj_ret) { for (int i = 0; i < N; ++i) if (v.c[i] == ret) { adj_v.c[i] += adj_ret; return; } }
}  // namespace kj

//@chunk clamp requires minmax
namespace kj {
/// min(max(lo, x), hi) with min's and max's NaN rules, as Warp's: a NaN x gives lo, and
/// hi wins when lo > hi.
template <class T> KJ_FUNC T clamp(T x, T lo, T hi) { return min(max(lo, x), hi); }
/// The gradient goes to the bound that was selected; to x on ties.
template <class T> KJ_FUNC void adj_clamp(T x, T lo, T hi, T ret, T& adj_x, T& adj_lo, T& adj_hi, T adj_ret) {
  T m = max(lo, x);
  if (!(m <= hi) && hi == hi) adj_hi += adj_ret;
  else if (x < lo || (x != x && lo == lo)) adj_lo += adj_ret;
  else adj_x += adj_ret;
}
}  // namespace kj
