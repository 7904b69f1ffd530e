// kjit/host_math.hpp — Warp's arithmetic and builtins on host element types (vec, mat, quat, transform), with the kernel prelude's formulas.
// Included by kjit/types.hpp. Each function repeats the operation order of its counterpart in
// codegen/prelude/*.h (kernels_dsl cannot include codegen), so that float32 results on the
// host are bit-identical to a cpu kernel's (tests/runtime/host_math.cpp checks that). Every
// overload takes vec/mat/quat/transform parameters by pattern, or is constrained to float and
// double: none can deduce from a traced kjit::dsl::Value, which ADL also brings here.
#pragma once

#include "kjit/types.hpp"

namespace kjit {

namespace detail {
/// Blocks deduction through a parameter, so a scalar operand converts to the vector's T (`v * 2`).
template <class T> struct nodeduce { using type = T; };
template <class T> using nodeduce_t = typename nodeduce<T>::type;
/// The functions that need a square root, sine or cosine compute in float or double only.
template <class T> using if_real = std::enable_if_t<std::is_same_v<T, float> || std::is_same_v<T, double>, int>;
// The compiler's builtins, not <cmath>: kjit.hpp stays free of <cmath> (tests/lint/header_size.py).
// Unless constant-folded they are the C library's sqrtf/sinf/cosf, the functions cpu kernels call.
inline float host_sqrt(float x) { return __builtin_sqrtf(x); }
inline double host_sqrt(double x) { return __builtin_sqrt(x); }
inline float host_sin(float x) { return __builtin_sinf(x); }
inline double host_sin(double x) { return __builtin_sin(x); }
inline float host_cos(float x) { return __builtin_cosf(x); }
inline double host_cos(double x) { return __builtin_cos(x); }
inline float host_atan2(float y, float x) { return __builtin_atan2f(y, x); }
inline double host_atan2(double y, double x) { return __builtin_atan2(y, x); }
inline float host_abs(float x) { return __builtin_fabsf(x); }
inline double host_abs(double x) { return __builtin_fabs(x); }
/// a * b + c with one rounding for float and double (the kernels' muladd: Warp's matrix
/// product); other types multiply, then add.
template <class T> constexpr T muladd(T a, T b, T c) { return T(c + a * b); }
inline float muladd(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline double muladd(double a, double b, double c) { return __builtin_fma(a, b, c); }
/// Division as kernels define it (prelude core.h `quot`): an integer divided by 0 is 0 and
/// MIN / -1 wraps to MIN, where C++ would trap.
template <class T> constexpr T quot(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == T(0)) return T(0);
    if constexpr (std::is_signed_v<T>) {
      using U = std::make_unsigned_t<T>;
      if (b == T(-1)) return T(U(0) - U(a));
    }
  }
  return T(a / b);
}
}  // namespace detail

// Componentwise arithmetic of vectors and matrices. The results are cast back to T because
// 16-bit floats (and small integers) compute in float (int), as they do in kernels.
#define KJIT_HOST_ZIP(name, op)                                                                            \
  template <int N, class T> constexpr vec<N, T> name(const vec<N, T>& a, const vec<N, T>& b) {             \
    vec<N, T> r{};                                                                                         \
    for (int i = 0; i < N; ++i) r.c[i] = T(a.c[i] op b.c[i]);                                              \
    return r;                                                                                              \
  }                                                                                                        \
  template <int R, int C, class T> constexpr mat<R, C, T> name(const mat<R, C, T>& a, const mat<R, C, T>& b) { \
    mat<R, C, T> r{};                                                                                      \
    for (int i = 0; i < R; ++i)                                                                            \
      for (int j = 0; j < C; ++j) r.c[i][j] = T(a.c[i][j] op b.c[i][j]);                                   \
    return r;                                                                                              \
  }
/// a + b, a - b componentwise.
KJIT_HOST_ZIP(operator+, +)
KJIT_HOST_ZIP(operator-, -)
/// Warp's componentwise product and quotient (plain division, as the kernels' cw_div).
KJIT_HOST_ZIP(cw_mul, *)
KJIT_HOST_ZIP(cw_div, /)
#undef KJIT_HOST_ZIP

// A vector or matrix with a scalar: `v * s`, `s * v` and `v / s` (the kernels' integer
// division), and the unary signs.
#define KJIT_HOST_MAP(X, TPL, LOOP, E)                                                                    \
  TPL constexpr X operator*(X a, detail::nodeduce_t<T> s) { LOOP a.E = T(a.E * s); return a; }           \
  TPL constexpr X operator*(detail::nodeduce_t<T> s, X a) { LOOP a.E = T(s * a.E); return a; }           \
  TPL constexpr X operator/(X a, detail::nodeduce_t<T> s) { LOOP a.E = detail::quot(a.E, s); return a; } \
  TPL constexpr X operator-(X a) { LOOP a.E = T(-a.E); return a; }                                       \
  TPL constexpr X operator+(const X& a) { return a; }                                                    \
  TPL constexpr X& operator+=(X& a, const X& b) { return a = a + b; }                                    \
  TPL constexpr X& operator-=(X& a, const X& b) { return a = a - b; }                                    \
  TPL constexpr X& operator*=(X& a, detail::nodeduce_t<T> s) { return a = a * s; }                       \
  TPL constexpr X& operator/=(X& a, detail::nodeduce_t<T> s) { return a = a / s; }                       \
  TPL constexpr bool operator==(const X& a, const X& b) { LOOP if (!(a.E == b.E)) return false; return true; } \
  TPL constexpr bool operator!=(const X& a, const X& b) { return !(a == b); }
#define KJIT_HOST_COMMA ,
KJIT_HOST_MAP(vec<N KJIT_HOST_COMMA T>, template <int N KJIT_HOST_COMMA class T>, for (int i = 0; i < N; ++i), c[i])
KJIT_HOST_MAP(mat<R KJIT_HOST_COMMA C KJIT_HOST_COMMA T>, template <int R KJIT_HOST_COMMA int C KJIT_HOST_COMMA class T>,
              for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j), c[i][j])
#undef KJIT_HOST_COMMA
#undef KJIT_HOST_MAP

// Vectors.
/// The sum of the componentwise products in component order, as Warp (and the kernels): from
/// the first product for 2- and 3-vectors (all -0 products give -0), from 0 otherwise.
template <int N, class T> constexpr T dot(const vec<N, T>& a, const vec<N, T>& b) {
  constexpr int f = (N == 2 || N == 3) ? 1 : 0;
  T s = f ? T(a.c[0] * b.c[0]) : T(0);
  for (int i = f; i < N; ++i) s = T(s + a.c[i] * b.c[i]);
  return s;
}
template <class T> constexpr vec<3, T> cross(const vec<3, T>& a, const vec<3, T>& b) {
  return vec<3, T>(T(a.c[1] * b.c[2] - a.c[2] * b.c[1]), T(a.c[2] * b.c[0] - a.c[0] * b.c[2]), T(a.c[0] * b.c[1] - a.c[1] * b.c[0]));
}
/// |v|^2 and |v|.
template <int N, class T> constexpr T length_sq(const vec<N, T>& v) { return dot(v, v); }
template <int N, class T, detail::if_real<T> = 0> T length(const vec<N, T>& v) { return detail::host_sqrt(dot(v, v)); }
/// v / |v|; the zero vector when |v| is not > 0 (Warp's rule).
template <int N, class T, detail::if_real<T> = 0> vec<N, T> normalize(const vec<N, T>& v) {
  T l = detail::host_sqrt(dot(v, v));
  if (l > T(0)) return v / l;
  return vec<N, T>();
}
/// The outer product a b^T.
template <int R, int C, class T> constexpr mat<R, C, T> outer(const vec<R, T>& a, const vec<C, T>& b) {
  mat<R, C, T> m{};
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) m.c[i][j] = T(a.c[i] * b.c[j]);
  return m;
}

// Matrices.
/// Matrix times column vector and row vector times matrix (each component summed from its
/// first product), matrix times matrix (each entry accumulated from 0 with fused
/// multiply-adds): Warp's operations, as the kernels.
template <int R, int C, class T> constexpr vec<R, T> operator*(const mat<R, C, T>& m, const vec<C, T>& v) {
  vec<R, T> r{};
  for (int i = 0; i < R; ++i) {
    T s = T(m.c[i][0] * v.c[0]);
    for (int j = 1; j < C; ++j) s = T(s + m.c[i][j] * v.c[j]);
    r.c[i] = s;
  }
  return r;
}
template <int R, int C, class T> constexpr vec<C, T> operator*(const vec<R, T>& v, const mat<R, C, T>& m) {
  vec<C, T> r{};
  for (int j = 0; j < C; ++j) {
    T s = T(m.c[0][j] * v.c[0]);
    for (int i = 1; i < R; ++i) s = T(s + m.c[i][j] * v.c[i]);
    r.c[j] = s;
  }
  return r;
}
template <int R, int C, int K, class T> constexpr mat<R, K, T> operator*(const mat<R, C, T>& a, const mat<C, K, T>& b) {
  mat<R, K, T> r{};
  for (int i = 0; i < R; ++i)
    for (int k = 0; k < K; ++k) {
      T s = T(0);
      for (int j = 0; j < C; ++j) s = detail::muladd(a.c[i][j], b.c[j][k], s);
      r.c[i][k] = s;
    }
  return r;
}
template <int R, int C, class T> constexpr mat<C, R, T> transpose(const mat<R, C, T>& m) {
  mat<C, R, T> t{};
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) t.c[j][i] = m.c[i][j];
  return t;
}
/// The N x N identity: `identity<3, float>()` (or `mat33f::identity()`).
// The empty trailing pack makes the DSL's identity<N, S>(Loc) the more specialized candidate
// where kjit and kjit::dsl are both open (partial ordering's tie-break against a trailing
// function parameter pack): kernel code keeps the traced one instead of an ambiguous call.
template <int N, class T = float, class... None, std::enable_if_t<sizeof...(None) == 0, int> = 0>
constexpr mat<N, N, T> identity(None...) { return mat<N, N, T>::identity(); }
/// The sum of the diagonal, the diagonal as a vector, and the diagonal matrix of a vector.
template <int N, class T> constexpr T trace(const mat<N, N, T>& m) {
  T s = m.c[0][0];  // as the kernels (and Warp): an all -0 diagonal sums to -0
  for (int i = 1; i < N; ++i) s = T(s + m.c[i][i]);
  return s;
}
template <int N, class T> constexpr vec<N, T> get_diag(const mat<N, N, T>& m) {
  vec<N, T> v{};
  for (int i = 0; i < N; ++i) v.c[i] = m.c[i][i];
  return v;
}
template <int N, class T> constexpr mat<N, N, T> diag(const vec<N, T>& v) {
  mat<N, N, T> m{};
  for (int i = 0; i < N; ++i) m.c[i][i] = v.c[i];
  return m;
}
/// The determinant of a 2x2 or 3x3 (row0 . row1 x row2) matrix, as the kernels and Warp.
template <class T> constexpr T determinant(const mat<2, 2, T>& m) { return T(m.c[0][0] * m.c[1][1] - m.c[0][1] * m.c[1][0]); }
template <class T> constexpr T determinant(const mat<3, 3, T>& m) {
  return T(m.c[0][0] * (m.c[1][1] * m.c[2][2] - m.c[1][2] * m.c[2][1]) + m.c[0][1] * (m.c[1][2] * m.c[2][0] - m.c[1][0] * m.c[2][2]) +
           m.c[0][2] * (m.c[1][0] * m.c[2][1] - m.c[1][1] * m.c[2][0]));
}
namespace detail {
/// The 3x3 cofactor of element (i, j) (the kernels' cofactor).
template <class T> constexpr T cofactor(const mat<3, 3, T>& m, int i, int j) {
  const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
  return T(m.c[i1][j1] * m.c[i2][j2] - m.c[i1][j2] * m.c[i2][j1]);
}
/// The cofactors z[i][j] and the determinant of a 4x4 matrix in Warp's scheme, operation for
/// operation as the kernels' cofactors44 (codegen/prelude/matmath.h says how).
template <class T> struct cofactors44 {
  T lo[4][2];       ///< columns 0 and 1, rounded to T (stored as T: GCC 12's SLP vectorizer
                    ///< drops the rounding of a double narrowed and widened in one expression)
  double hi[4][2];  ///< columns 2 and 3
  T det;
  constexpr double z(int i, int j) const { return j < 2 ? double(lo[i][j]) : hi[i][j - 2]; }
};
/// The 2x2 minors of columns (c0, c1): y[a][b] for rows a < b, in T, kept as double.
template <class T> constexpr void minors44(const mat<4, 4, T>& m, int c0, int c1, double (&y)[4][4]) {
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) y[a][b] = double(T(m.c[a][c0] * m.c[b][c1] - m.c[b][c0] * m.c[a][c1]));
}
/// m[p][col] y(q, s) - m[q][col] y(p, s) +- m[s][col] y(p, q), in double.
template <class T>
constexpr double term44(const mat<4, 4, T>& m, const double (&y)[4][4], int col, int p, int q, int s, bool plus_last) {
  auto Y = [&](int a, int b) { return a < b ? y[a][b] : y[b][a]; };
  const double t = double(m.c[p][col]) * Y(q, s) - double(m.c[q][col]) * Y(p, s);
  return plus_last ? t + double(m.c[s][col]) * Y(p, q) : t - double(m.c[s][col]) * Y(p, q);
}
template <class T> constexpr cofactors44<T> cofactors(const mat<4, 4, T>& m) {
  cofactors44<T> r{};
  double y[4][4]{};
  minors44(m, 0, 1, y);
  r.hi[3][1] = term44(m, y, 2, 0, 1, 2, true);
  r.hi[2][1] = term44(m, y, 2, 1, 3, 0, false);
  r.hi[1][1] = term44(m, y, 2, 0, 2, 3, true);
  r.hi[0][1] = term44(m, y, 2, 2, 3, 1, false);
  r.hi[3][0] = term44(m, y, 3, 1, 2, 0, false);
  r.hi[2][0] = term44(m, y, 3, 0, 1, 3, true);
  r.hi[1][0] = term44(m, y, 3, 2, 3, 0, false);
  r.hi[0][0] = term44(m, y, 3, 1, 2, 3, true);
  minors44(m, 2, 3, y);
  r.lo[3][0] = T(term44(m, y, 1, 1, 2, 0, false));
  r.lo[2][0] = T(term44(m, y, 1, 0, 1, 3, true));
  r.lo[1][0] = T(term44(m, y, 1, 2, 3, 0, false));
  r.lo[0][0] = T(term44(m, y, 1, 1, 2, 3, true));
  r.lo[3][1] = T(term44(m, y, 0, 0, 1, 2, true));
  r.lo[2][1] = T(term44(m, y, 0, 1, 3, 0, false));
  r.lo[1][1] = T(term44(m, y, 0, 0, 2, 3, true));
  r.lo[0][1] = T(term44(m, y, 0, 2, 3, 1, false));
  r.det = T(T(T(m.c[3][0] * r.lo[3][0] + m.c[2][0] * r.lo[2][0]) + m.c[1][0] * r.lo[1][0]) + m.c[0][0] * r.lo[0][0]);
  return r;
}
}  // namespace detail
/// The determinant of a 4x4 matrix: Warp's (USD's) expansion through 2x2 minors kept in double.
template <class T> constexpr T determinant(const mat<4, 4, T>& m) { return detail::cofactors(m).det; }
/// The inverse, as Warp (and the kernels) compute it: the adjugate times the reciprocal of the
/// determinant (for 4x4 in double); a zero matrix where the determinant is 0 or NaN (3x3: 0).
template <class T, detail::if_real<T> = 0> constexpr mat<2, 2, T> inverse(const mat<2, 2, T>& m) {
  const T d = determinant(m);
  if (!(d > T(0) || d < T(0))) return mat<2, 2, T>();
  const T r = T(1) / d;
  return mat<2, 2, T>(m.c[1][1] * r, -m.c[0][1] * r, -m.c[1][0] * r, m.c[0][0] * r);
}
template <class T, detail::if_real<T> = 0> constexpr mat<3, 3, T> inverse(const mat<3, 3, T>& m) {
  const T d = determinant(m);
  if (d == T(0)) return mat<3, 3, T>();
  const T r = T(1) / d;
  mat<3, 3, T> inv{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) inv.c[j][i] = T(detail::cofactor(m, i, j) * r);
  return inv;
}
template <class T, detail::if_real<T> = 0> constexpr mat<4, 4, T> inverse(const mat<4, 4, T>& m) {
  const detail::cofactors44<T> c = detail::cofactors(m);
  const double d = double(c.det);
  if (!((d < 0 ? -d : d) > 0.0)) return mat<4, 4, T>();
  const double r = 1.0 / d;
  mat<4, 4, T> inv{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) inv.c[j][i] = T(c.z(i, j) * r);
  return inv;
}

// Quaternions (x, y, z, w).
/// The Hamilton product a b: the rotation b, then a.
template <class T> constexpr quat<T> operator*(const quat<T>& a, const quat<T>& b) {
  return quat<T>(a.w * b.x + b.w * a.x + a.y * b.z - b.y * a.z, a.w * b.y + b.w * a.y + a.z * b.x - b.z * a.x,
                 a.w * b.z + b.w * a.z + a.x * b.y - b.x * a.y, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z);
}
template <class T> constexpr quat<T> operator+(const quat<T>& a, const quat<T>& b) { return quat<T>(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
template <class T> constexpr quat<T> operator-(const quat<T>& a, const quat<T>& b) { return quat<T>(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w); }
template <class T> constexpr quat<T> operator-(const quat<T>& a) { return quat<T>(-a.x, -a.y, -a.z, -a.w); }
template <class T> constexpr quat<T> operator+(const quat<T>& a) { return a; }
template <class T> constexpr quat<T> operator*(const quat<T>& a, detail::nodeduce_t<T> s) { return quat<T>(a.x * s, a.y * s, a.z * s, a.w * s); }
template <class T> constexpr quat<T> operator*(detail::nodeduce_t<T> s, const quat<T>& a) { return a * s; }
template <class T> constexpr quat<T> operator/(const quat<T>& a, detail::nodeduce_t<T> s) { return quat<T>(a.x / s, a.y / s, a.z / s, a.w / s); }
template <class T> constexpr quat<T>& operator+=(quat<T>& a, const quat<T>& b) { return a = a + b; }
template <class T> constexpr quat<T>& operator-=(quat<T>& a, const quat<T>& b) { return a = a - b; }
template <class T> constexpr bool operator==(const quat<T>& a, const quat<T>& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
template <class T> constexpr bool operator!=(const quat<T>& a, const quat<T>& b) { return !(a == b); }
template <class T> constexpr T dot(const quat<T>& a, const quat<T>& b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
template <class T> constexpr T length_sq(const quat<T>& q) { return dot(q, q); }
template <class T, detail::if_real<T> = 0> T length(const quat<T>& q) { return detail::host_sqrt(dot(q, q)); }
/// q times the reciprocal of |q|; the identity when |q| is not > 0 (Warp's rules).
template <class T, detail::if_real<T> = 0> quat<T> normalize(const quat<T>& q) {
  T l = length(q);
  if (l > T(0)) return q * (T(1) / l);
  return quat<T>(T(0), T(0), T(0), T(1));
}
/// The identity rotation (0, 0, 0, 1): `quat_identity<float>()`. (The trailing pack: see identity.)
template <class T = float, class... None, std::enable_if_t<sizeof...(None) == 0, int> = 0>
constexpr quat<T> quat_identity(None...) { return quat<T>::identity(); }
/// The conjugate: the inverse of a unit quaternion.
template <class T> constexpr quat<T> quat_inverse(const quat<T>& q) { return quat<T>(-q.x, -q.y, -q.z, q.w); }
/// Rotation of `angle` radians about `axis` (used as given: pass a unit axis).
template <class T, detail::if_real<T> = 0> quat<T> quat_from_axis_angle(const vec<3, T>& axis, detail::nodeduce_t<T> angle) {
  T h = angle * T(0.5);
  return quat<T>(axis * detail::host_sin(h), detail::host_cos(h));
}
/// The axis and angle of a unit quaternion, as the kernels' quat_to_axis_angle and Warp: the
/// shorter rotation (angle 2 atan2(|v|, |w|) in [0, pi], the axis negated where w < 0), a zero
/// axis for the identity. `auto [axis, angle] = quat_to_axis_angle(q);`
template <class T> struct axis_angle {
  vec<3, T> axis;
  T angle;
};
template <class T, detail::if_real<T> = 0> axis_angle<T> quat_to_axis_angle(const quat<T>& q) {
  const vec<3, T> v(q.x, q.y, q.z);
  return {q.w < T(0) ? -normalize(v) : normalize(v), T(2) * detail::host_atan2(length(v), detail::host_abs(q.w))};
}
/// Warp's spelling: the axis and the angle into `axis` and `angle`.
template <class T, detail::if_real<T> = 0> void quat_to_axis_angle(const quat<T>& q, vec<3, T>& axis, T& angle) {
  const axis_angle<T> r = quat_to_axis_angle(q);
  axis = r.axis;
  angle = r.angle;
}
/// Spherical interpolation from q0 (t = 0) towards q1 (t = 1) along the shorter arc, as the
/// kernels' quat_slerp and Warp (q0 r^t with r = q0* q1 through r's axis and angle).
template <class T, detail::if_real<T> = 0> quat<T> quat_slerp(const quat<T>& q0, const quat<T>& q1, detail::nodeduce_t<T> t) {
  const quat<T> r = quat_inverse(q0) * q1;
  const vec<3, T> v(r.x, r.y, r.z);
  vec<3, T> axis = normalize(v);
  if (r.w < T(0)) axis = -axis;
  return q0 * quat_from_axis_angle(axis, t * (T(2) * detail::host_atan2(length(v), detail::host_abs(r.w))));
}
/// Roll about X, then pitch about Y, then yaw about Z, all about the fixed axes: the product
/// qz(yaw) qy(pitch) qx(roll) multiplied out in Warp's order of operations, as the kernels
/// compute it (float32 gives Warp's bits).
template <class T, detail::if_real<T> = 0> quat<T> quat_rpy(T roll, detail::nodeduce_t<T> pitch, detail::nodeduce_t<T> yaw) {
  const T cy = detail::host_cos(yaw * T(0.5)), sy = detail::host_sin(yaw * T(0.5));
  const T cr = detail::host_cos(roll * T(0.5)), sr = detail::host_sin(roll * T(0.5));
  const T cp = detail::host_cos(pitch * T(0.5)), sp = detail::host_sin(pitch * T(0.5));
  return quat<T>(cy * sr * cp - sy * cr * sp, cy * cr * sp + sy * sr * cp, sy * cr * cp - cy * sr * sp,
                 cy * cr * cp + sy * sr * sp);
}
/// q p q* and q* p q, for a unit q (Warp's formula: for other q it scales the result).
namespace detail {
/// Warp's formula and order of operations (the kernels' rotate_by): s = 1 rotates by q, -1 by
/// its inverse.
template <class T> constexpr vec<3, T> rotate_by(const quat<T>& q, const vec<3, T>& p, T s) {
  T c = T(2) * q.w * q.w - T(1), d = T(2) * (q.x * p.c[0] + q.y * p.c[1] + q.z * p.c[2]);
  return vec<3, T>(p.c[0] * c + q.x * d + s * ((q.y * p.c[2] - q.z * p.c[1]) * q.w * T(2)),
                   p.c[1] * c + q.y * d + s * ((q.z * p.c[0] - q.x * p.c[2]) * q.w * T(2)),
                   p.c[2] * c + q.z * d + s * ((q.x * p.c[1] - q.y * p.c[0]) * q.w * T(2)));
}
}  // namespace detail
template <class T> constexpr vec<3, T> quat_rotate(const quat<T>& q, const vec<3, T>& p) { return detail::rotate_by(q, p, T(1)); }
template <class T> constexpr vec<3, T> quat_rotate_inv(const quat<T>& q, const vec<3, T>& p) { return detail::rotate_by(q, p, T(-1)); }
/// The rotation matrix: column j is q rotating axis j (Warp's formula, as the kernels; for a q
/// that is not unit it is not orthogonal).
template <class T> constexpr mat<3, 3, T> quat_to_matrix(const quat<T>& q) {
  mat<3, 3, T> m{};
  for (int j = 0; j < 3; ++j) {
    vec<3, T> e(T(0), T(0), T(0));
    e.c[j] = T(1);
    const vec<3, T> col = detail::rotate_by(q, e, T(1));
    for (int i = 0; i < 3; ++i) m.c[i][j] = col.c[i];
  }
  return m;
}
/// The unit quaternion of a rotation matrix (a 4x4: of its upper-left 3x3), as Warp and the
/// kernels: from the trace where it is >= 0, else from the largest diagonal element; then
/// normalized (no sign is chosen for w).
template <int N, class T, detail::if_real<T> = 0> quat<T> quat_from_matrix(const mat<N, N, T>& m) {
  static_assert(N == 3 || N == 4, "quat_from_matrix takes a 3x3 or 4x4 matrix");
  const auto& a = m.c;
  const T tr = a[0][0] + a[1][1] + a[2][2];
  quat<T> q{};
  if (tr >= T(0)) {
    const T h = detail::host_sqrt(tr + T(1)), k = T(0.5) / h;
    q = quat<T>((a[2][1] - a[1][2]) * k, (a[0][2] - a[2][0]) * k, (a[1][0] - a[0][1]) * k, T(0.5) * h);
  } else {
    int d = a[1][1] > a[0][0] ? 1 : 0;
    if (a[2][2] > a[d][d]) d = 2;
    const int u = (d + 1) % 3, v = (d + 2) % 3;
    const T h = detail::host_sqrt((a[d][d] - (a[u][u] + a[v][v])) + T(1)), k = T(0.5) / h;
    T c[3]{};
    c[d] = T(0.5) * h;
    c[u] = (a[u][d] + a[d][u]) * k;
    c[v] = (a[v][d] + a[d][v]) * k;
    q = quat<T>(c[0], c[1], c[2], (a[v][u] - a[u][v]) * k);
  }
  return normalize(q);
}

// Transforms (p, q): the point x maps to q x q* + p.
/// The identity transform: `transform_identity<float>()`. (The trailing pack: see identity.)
template <class T = float, class... None, std::enable_if_t<sizeof...(None) == 0, int> = 0>
constexpr transform<T> transform_identity(None...) { return transform<T>::identity(); }
template <class T> constexpr vec<3, T> transform_get_translation(const transform<T>& t) { return t.p; }
template <class T> constexpr quat<T> transform_get_rotation(const transform<T>& t) { return t.q; }
template <class T> constexpr transform<T> transform_set_translation(transform<T> t, const vec<3, T>& p) {
  t.p = p;
  return t;
}
template <class T> constexpr transform<T> transform_set_rotation(transform<T> t, const quat<T>& q) {
  t.q = q;
  return t;
}
template <class T> constexpr bool operator==(const transform<T>& a, const transform<T>& b) { return a.p == b.p && a.q == b.q; }
template <class T> constexpr bool operator!=(const transform<T>& a, const transform<T>& b) { return !(a == b); }
/// The composition a b (b first, then a); `a * b` is the same.
template <class T> constexpr transform<T> transform_multiply(const transform<T>& a, const transform<T>& b) {
  return transform<T>(quat_rotate(a.q, b.p) + a.p, a.q * b.q);
}
template <class T> constexpr transform<T> operator*(const transform<T>& a, const transform<T>& b) { return transform_multiply(a, b); }
template <class T> constexpr transform<T> transform_inverse(const transform<T>& t) {
  quat<T> qi = quat_inverse(t.q);
  return transform<T>(-quat_rotate(qi, t.p), qi);
}
/// A point (rotated, then translated) and a vector (rotated) through a transform, or through
/// a 4x4 matrix as (p, 1) and (v, 0).
template <class T> constexpr vec<3, T> transform_point(const transform<T>& t, const vec<3, T>& p) { return quat_rotate(t.q, p) + t.p; }
template <class T> constexpr vec<3, T> transform_vector(const transform<T>& t, const vec<3, T>& v) { return quat_rotate(t.q, v); }
template <class T> constexpr vec<3, T> transform_point(const mat<4, 4, T>& m, const vec<3, T>& p) {
  vec<3, T> r{};
  for (int i = 0; i < 3; ++i) r.c[i] = m.c[i][0] * p.c[0] + m.c[i][1] * p.c[1] + m.c[i][2] * p.c[2] + m.c[i][3];
  return r;
}
template <class T> constexpr vec<3, T> transform_vector(const mat<4, 4, T>& m, const vec<3, T>& v) {
  vec<3, T> r{};
  for (int i = 0; i < 3; ++i) r.c[i] = m.c[i][0] * v.c[0] + m.c[i][1] * v.c[1] + m.c[i][2] * v.c[2];
  return r;
}
/// The 4x4 matrix of a transform, and the transform of a rigid 4x4 matrix.
template <class T> constexpr mat<4, 4, T> transform_to_matrix(const transform<T>& t) {
  mat<3, 3, T> r = quat_to_matrix(t.q);
  mat<4, 4, T> m{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m.c[i][j] = r.c[i][j];
    m.c[i][3] = t.p.c[i];
  }
  m.c[3][3] = T(1);
  return m;
}
template <class T, detail::if_real<T> = 0> transform<T> transform_from_matrix(const mat<4, 4, T>& m) {
  return transform<T>(vec<3, T>(m.c[0][3], m.c[1][3], m.c[2][3]), quat_from_matrix(m));
}

}  // namespace kjit
