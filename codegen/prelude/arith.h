// kjit prelude: adjoints of arithmetic (the forward pass uses C++ operators), and the
// arithmetic builtins that have no operator (float mod, floor division).
//@chunk arith requires core
namespace kj {
template <class T> KJ_FUNC void adj_add(const T& a, const T& b, const T& ret, T& adj_a, T& adj_b, const T& adj_ret) { adj_a += adj_ret; adj_b += adj_ret; }
template <class T> KJ_FUNC void adj_sub(const T& a, const T& b, const T& ret, T& adj_a, T& adj_b, const T& adj_ret) { adj_a += adj_ret; adj_b -= adj_ret; }
template <class T> KJ_FUNC void adj_neg(const T& a, const T& ret, T& adj_a, const T& adj_ret) { adj_a -= adj_ret; }
template <class T> KJ_FUNC void adj_pos(const T& a, const T& ret, T& adj_a, const T& adj_ret) { adj_a += adj_ret; }

// mul: scalar x scalar, vector/matrix x scalar (either side), matrix x vector, vector x
// matrix, matrix x matrix.
template <class T> KJ_FUNC void adj_mul(T a, T b, T ret, T& adj_a, T& adj_b, T adj_ret) { adj_a += b * adj_ret; adj_b += a * adj_ret; }
template <int N, class T> KJ_FUNC void adj_mul(const vec_t<N, T>& a, T s, const vec_t<N, T>& ret, vec_t<N, T>& adj_a, T& adj_s, const vec_t<N, T>& adj_ret) { adj_a += adj_ret * s; adj_s += dot(a, adj_ret); }
template <int N, class T> KJ_FUNC void adj_mul(T s, const vec_t<N, T>& a, const vec_t<N, T>& ret, T& adj_s, vec_t<N, T>& adj_a, const vec_t<N, T>& adj_ret) { adj_a += adj_ret * s; adj_s += dot(a, adj_ret); }
template <int R, int C, class T> KJ_FUNC void adj_mul(const mat_t<R, C, T>& a, T s, const mat_t<R, C, T>& ret, mat_t<R, C, T>& adj_a, T& adj_s, const mat_t<R, C, T>& adj_ret) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) { adj_a.c[i][j] += adj_ret.c[i][j] * s; adj_s += a.c[i][j] * adj_ret.c[i][j]; }
}
template <int R, int C, class T> KJ_FUNC void adj_mul(T s, const mat_t<R, C, T>& a, const mat_t<R, C, T>& ret, T& adj_s, mat_t<R, C, T>& adj_a, const mat_t<R, C, T>& adj_ret) { adj_mul(a, s, ret, adj_a, adj_s, adj_ret); }
template <int R, int C, class T> KJ_FUNC void adj_mul(const mat_t<R, C, T>& m, const vec_t<C, T>& v, const vec_t<R, T>& ret, mat_t<R, C, T>& adj_m, vec_t<C, T>& adj_v, const vec_t<R, T>& adj_ret) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) { adj_m.c[i][j] += adj_ret.c[i] * v.c[j]; adj_v.c[j] += m.c[i][j] * adj_ret.c[i]; }
}
template <int R, int C, class T> KJ_FUNC void adj_mul(const vec_t<R, T>& v, const mat_t<R, C, T>& m, const vec_t<C, T>& ret, vec_t<R, T>& adj_v, mat_t<R, C, T>& adj_m, const vec_t<C, T>& adj_ret) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) { adj_v.c[i] += m.c[i][j] * adj_ret.c[j]; adj_m.c[i][j] += v.c[i] * adj_ret.c[j]; }
}
template <int R, int C, int K, class T> KJ_FUNC void adj_matmul(const mat_t<R, C, T>& a, const mat_t<C, K, T>& b, mat_t<R, C, T>& adj_a, mat_t<C, K, T>& adj_b, const mat_t<R, K, T>& adj_ret) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) for (int k = 0; k < K; ++k) {
    adj_a.c[i][j] += adj_ret.c[i][k] * b.c[j][k];
    adj_b.c[j][k] += a.c[i][j] * adj_ret.c[i][k];
  }
}
template <int R, int C, int K, class T> KJ_FUNC void adj_mul(const mat_t<R, C, T>& a, const mat_t<C, K, T>& b, const mat_t<R, K, T>& ret, mat_t<R, C, T>& adj_a, mat_t<C, K, T>& adj_b, const mat_t<R, K, T>& adj_ret) {
  adj_matmul(a, b, adj_a, adj_b, adj_ret);
}
// Square products match both the generic adj_mul (every operand of one type) and the one
// above; this overload is more specialized than either, so it is the one chosen.
template <int N, class T> KJ_FUNC void adj_mul(const mat_t<N, N, T>& a, const mat_t<N, N, T>& b, const mat_t<N, N, T>& ret, mat_t<N, N, T>& adj_a, mat_t<N, N, T>& adj_b, const mat_t<N, N, T>& adj_ret) {
  adj_matmul(a, b, adj_a, adj_b, adj_ret);
}

// div: scalar / scalar, vector/matrix / scalar, scalar / vector (componentwise).
template <class T> KJ_FUNC void adj_div(T a, T b, T ret, T& adj_a, T& adj_b, T adj_ret) { adj_a += adj_ret / b; adj_b -= adj_ret * ret / b; }
template <int N, class T> KJ_FUNC void adj_div(const vec_t<N, T>& a, T s, const vec_t<N, T>& ret, vec_t<N, T>& adj_a, T& adj_s, const vec_t<N, T>& adj_ret) { adj_a += adj_ret / s; adj_s -= dot(adj_ret, ret) / s; }
template <int N, class T> KJ_FUNC void adj_div(T s, const vec_t<N, T>& a, const vec_t<N, T>& ret, T& adj_s, vec_t<N, T>& adj_a, const vec_t<N, T>& adj_ret) {
  for (int i = 0; i < N; ++i) { adj_s += adj_ret.c[i] / a.c[i]; adj_a.c[i] -= adj_ret.c[i] * ret.c[i] / a.c[i]; }
}
template <int R, int C, class T> KJ_FUNC void adj_div(const mat_t<R, C, T>& a, T s, const mat_t<R, C, T>& ret, mat_t<R, C, T>& adj_a, T& adj_s, const mat_t<R, C, T>& adj_ret) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) { adj_a.c[i][j] += adj_ret.c[i][j] / s; adj_s -= adj_ret.c[i][j] * ret.c[i][j] / s; }
}
}  // namespace kj

//@chunk mod requires core
namespace kj {
/// Remainder with the sign of the dividend (C's % and fmod).
KJ_FUNC float mod(float a, float b) { return ::fmodf(a, b); }
KJ_FUNC double mod(double a, double b) { return ::fmod(a, b); }
/// d/da = 1 and d/db = -trunc(a / b): both operands get their gradient.
template <class T> KJ_FUNC void adj_mod(T a, T b, T ret, T& adj_a, T& adj_b, T adj_ret) {
  adj_a += adj_ret;
  adj_b -= adj_ret * ((a - ret) / b);
}
}  // namespace kj

//@chunk floordiv requires core
namespace kj {
/// Division rounded toward negative infinity (by zero: 0, as quot in core.h).
template <class T> KJ_FUNC T floordiv(T a, T b) {
  T q = quot(a, b);
  if (b != 0 && rem(a, b) != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
KJ_FUNC float floordiv(float a, float b) { return ::floorf(a / b); }
KJ_FUNC double floordiv(double a, double b) { return ::floor(a / b); }
}  // namespace kj

//@chunk select requires core
namespace kj {
template <class T> KJ_FUNC void adj_where(bool c, const T& a, const T& b, const T& ret, T& adj_a, T& adj_b, const T& adj_ret) {
  if (c) adj_a += adj_ret; else adj_b += adj_ret;
}
/// Warp's select(cond, value_if_false, value_if_true): where with the values swapped.
template <class T> KJ_FUNC T select(bool c, const T& if_false, const T& if_true) { return c ? if_true : if_false; }
template <class T> KJ_FUNC void adj_select(bool c, const T& a, const T& b, const T& ret, T& adj_a, T& adj_b, const T& adj_ret) {
  if (c) adj_b += adj_ret; else adj_a += adj_ret;
}
}  // namespace kj

//@chunk div_approx requires core arith
namespace kj {
/// Division that may trade accuracy for speed: CUDA's fast float division (about 2 ulp),
/// exact division elsewhere. Its adjoint is that of division.
template <class A, class B> KJ_FUNC auto div_approx(const A& a, const B& b) -> decltype(a / b) { return a / b; }
#if KJ_CUDA
KJ_FUNC float div_approx(float a, float b) { return __fdividef(a, b); }
#endif
template <class A, class B, class R> KJ_FUNC void adj_div_approx(const A& a, const B& b, const R& ret, A& adj_a, B& adj_b, const R& adj_ret) { adj_div(a, b, ret, adj_a, adj_b, adj_ret); }
}  // namespace kj
