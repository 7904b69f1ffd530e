// kjit prelude: scalar math builtins and their adjoints.
//@chunk math requires core
namespace kj {
#define KJ_MATH1(name, f32, f64) \
  KJ_FUNC float name(float x) { return ::f32(x); } \
  KJ_FUNC double name(double x) { return ::f64(x); }
KJ_MATH1(sin, sinf, sin)
KJ_MATH1(cos, cosf, cos)
KJ_MATH1(tan, tanf, tan)
KJ_MATH1(exp, expf, exp)
KJ_MATH1(log, logf, log)
KJ_MATH1(sqrt, sqrtf, sqrt)
KJ_MATH1(floor, floorf, floor)
KJ_MATH1(ceil, ceilf, ceil)
#undef KJ_MATH1
KJ_FUNC float pow(float x, float y) { return ::powf(x, y); }
KJ_FUNC double pow(double x, double y) { return ::pow(x, y); }

template <class T> KJ_FUNC void adj_sin(T x, T ret, T& adj_x, T adj_ret) { adj_x += kj::cos(x) * adj_ret; }
template <class T> KJ_FUNC void adj_cos(T x, T ret, T& adj_x, T adj_ret) { adj_x -= kj::sin(x) * adj_ret; }
template <class T> KJ_FUNC void adj_tan(T x, T ret, T& adj_x, T adj_ret) { adj_x += (T(1) + ret * ret) * adj_ret; }
template <class T> KJ_FUNC void adj_exp(T x, T ret, T& adj_x, T adj_ret) { adj_x += ret * adj_ret; }
template <class T> KJ_FUNC void adj_log(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret / x; }
template <class T> KJ_FUNC void adj_sqrt(T x, T ret, T& adj_x, T adj_ret) { adj_x += adj_ret / (T(2) * ret); }
template <class T> KJ_FUNC void adj_pow(T x, T y, T ret, T& adj_x, T& adj_y, T adj_ret) {
  adj_x += adj_ret * y * kj::pow(x, y - T(1));
  if (x > T(0)) adj_y += adj_ret * ret * kj::log(x);
}
}  // namespace kj

//@chunk abs requires core
namespace kj {
template <class T> KJ_FUNC T abs(T x) { return x < T(0) ? -x : x; }
template <int N, class T> KJ_FUNC vec_t<N, T> abs(vec_t<N, T> v) { for (int i = 0; i < N; ++i) v.c[i] = kj::abs(v.c[i]); return v; }
template <class T> KJ_FUNC void adj_abs(T x, T ret, T& adj_x, T adj_ret) {
  if (x > T(0)) adj_x += adj_ret; else if (x < T(0)) adj_x -= adj_ret;
}
template <int N, class T> KJ_FUNC void adj_abs(const vec_t<N, T>& x, const vec_t<N, T>& ret, vec_t<N, T>& adj_x, const vec_t<N, T>& adj_ret) {
  for (int i = 0; i < N; ++i) adj_abs(x.c[i], ret.c[i], adj_x.c[i], adj_ret.c[i]);
}
}  // namespace kj

//@chunk minmax requires core
namespace kj {
template <class T> KJ_FUNC T min(T a, T b) { return b < a ? b : a; }
template <class T> KJ_FUNC T max(T a, T b) { return a < b ? b : a; }
template <int N, class T> KJ_FUNC vec_t<N, T> min(vec_t<N, T> a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] = kj::min(a.c[i], b.c[i]); return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> max(vec_t<N, T> a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] = kj::max(a.c[i], b.c[i]); return a; }
// The gradient goes to the operand that was selected (the first one on ties).
template <class T> KJ_FUNC void adj_min(T a, T b, T ret, T& adj_a, T& adj_b, T adj_ret) { if (b < a) adj_b += adj_ret; else adj_a += adj_ret; }
template <class T> KJ_FUNC void adj_max(T a, T b, T ret, T& adj_a, T& adj_b, T adj_ret) { if (a < b) adj_b += adj_ret; else adj_a += adj_ret; }
template <int N, class T> KJ_FUNC void adj_min(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& ret, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b, const vec_t<N, T>& adj_ret) { for (int i = 0; i < N; ++i) adj_min(a.c[i], b.c[i], ret.c[i], adj_a.c[i], adj_b.c[i], adj_ret.c[i]); }
template <int N, class T> KJ_FUNC void adj_max(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& ret, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b, const vec_t<N, T>& adj_ret) { for (int i = 0; i < N; ++i) adj_max(a.c[i], b.c[i], ret.c[i], adj_a.c[i], adj_b.c[i], adj_ret.c[i]); }
}  // namespace kj

//@chunk clamp requires core
namespace kj {
template <class T> KJ_FUNC T clamp(T x, T lo, T hi) { return x < lo ? lo : (hi < x ? hi : x); }
template <class T> KJ_FUNC void adj_clamp(T x, T lo, T hi, T ret, T& adj_x, T& adj_lo, T& adj_hi, T adj_ret) {
  if (x < lo) adj_lo += adj_ret; else if (hi < x) adj_hi += adj_ret; else adj_x += adj_ret;
}
}  // namespace kj
