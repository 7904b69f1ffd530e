// kjit prelude: vector builtins and their adjoints, forward beside adjoint.
//@chunk dot requires vec
namespace kj {
template <int N, class T> KJ_FUNC void adj_dot(const vec_t<N, T>& a, const vec_t<N, T>& b, T ret, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b, T adj_ret) { adj_a += b * adj_ret; adj_b += a * adj_ret; }
}  // namespace kj

//@chunk cross requires vec
namespace kj {
template <class T> KJ_FUNC vec_t<3, T> cross(const vec_t<3, T>& a, const vec_t<3, T>& b) {
  return vec_t<3, T>{{a.c[1] * b.c[2] - a.c[2] * b.c[1], a.c[2] * b.c[0] - a.c[0] * b.c[2], a.c[0] * b.c[1] - a.c[1] * b.c[0]}};
}
template <class T> KJ_FUNC void adj_cross(const vec_t<3, T>& a, const vec_t<3, T>& b, const vec_t<3, T>& ret, vec_t<3, T>& adj_a, vec_t<3, T>& adj_b, const vec_t<3, T>& adj_ret) {
  adj_a += cross(b, adj_ret);
  adj_b += cross(adj_ret, a);
}
}  // namespace kj

//@chunk length requires vec math
namespace kj {
template <int N, class T> KJ_FUNC T length(const vec_t<N, T>& v) { return sqrt(dot(v, v)); }
template <int N, class T> KJ_FUNC void adj_length(const vec_t<N, T>& v, T ret, vec_t<N, T>& adj_v, T adj_ret) {
  if (ret > T(0)) adj_v += (v / ret) * adj_ret;  // Warp's rounding: the direction, then its scale
}
template <int N, class T> KJ_FUNC T length_sq(const vec_t<N, T>& v) { return dot(v, v); }
template <int N, class T> KJ_FUNC void adj_length_sq(const vec_t<N, T>& v, T ret, vec_t<N, T>& adj_v, T adj_ret) { adj_v += v * (T(2) * adj_ret); }
template <int N, class T> KJ_FUNC T norm_l2(const vec_t<N, T>& v) { return length(v); }
template <int N, class T> KJ_FUNC void adj_norm_l2(const vec_t<N, T>& v, T ret, vec_t<N, T>& adj_v, T adj_ret) { adj_length(v, ret, adj_v, adj_ret); }
}  // namespace kj

//@chunk normalize requires vec math
namespace kj {
template <int N, class T> KJ_FUNC vec_t<N, T> normalize(const vec_t<N, T>& v) {
  T l = sqrt(dot(v, v));
  if (l > T(0)) return v / l;
  vec_t<N, T> z = {};
  return z;
}
template <int N, class T> KJ_FUNC void adj_normalize(const vec_t<N, T>& v, const vec_t<N, T>& ret, vec_t<N, T>& adj_v, const vec_t<N, T>& adj_ret) {
  T l = sqrt(dot(v, v));
  if (l > T(0)) adj_v += (adj_ret - ret * dot(ret, adj_ret)) / l;
}
}  // namespace kj

//@chunk norms requires vec math
namespace kj {
template <int N, class T> KJ_FUNC T norm_l1(const vec_t<N, T>& v) { T s = T(0); for (int i = 0; i < N; ++i) s += v.c[i] < T(0) ? -v.c[i] : v.c[i]; return s; }
template <int N, class T> KJ_FUNC void adj_norm_l1(const vec_t<N, T>& v, T ret, vec_t<N, T>& adj_v, T adj_ret) {
  for (int i = 0; i < N; ++i) { if (v.c[i] > T(0)) adj_v.c[i] += adj_ret; else if (v.c[i] < T(0)) adj_v.c[i] -= adj_ret; }
}
/// Huber: |v|^2 / 2 inside delta, delta (|v| - delta / 2) outside.
template <int N, class T> KJ_FUNC T norm_huber(const vec_t<N, T>& v, T delta) {
  T a = dot(v, v);
  if (a <= delta * delta) return T(0.5) * a;
  return delta * (sqrt(a) - T(0.5) * delta);
}
template <int N, class T> KJ_FUNC void adj_norm_huber(const vec_t<N, T>& v, T delta, T ret, vec_t<N, T>& adj_v, T& adj_delta, T adj_ret) {
  T a = dot(v, v);
  if (a <= delta * delta) { adj_v += v * adj_ret; return; }
  T l = sqrt(a);
  adj_v += v * (adj_ret * delta / l);
  adj_delta += adj_ret * (l - delta);
}
/// Pseudo-Huber: delta sqrt(1 + |v|^2 / delta^2).
template <int N, class T> KJ_FUNC T norm_pseudo_huber(const vec_t<N, T>& v, T delta) { return delta * sqrt(T(1) + dot(v, v) / (delta * delta)); }
template <int N, class T> KJ_FUNC void adj_norm_pseudo_huber(const vec_t<N, T>& v, T delta, T ret, vec_t<N, T>& adj_v, T& adj_delta, T adj_ret) {
  T a = dot(v, v);
  adj_v += v * (adj_ret / ret);  // dH/dv = v / H
  adj_delta += adj_ret * (ret / delta - a / (delta * ret));
}
/// v / pseudo_huber(v, delta).
template <int N, class T> KJ_FUNC vec_t<N, T> smooth_normalize(const vec_t<N, T>& v, T delta) { return v / norm_pseudo_huber(v, delta); }
template <int N, class T> KJ_FUNC void adj_smooth_normalize(const vec_t<N, T>& v, T delta, const vec_t<N, T>& ret, vec_t<N, T>& adj_v, T& adj_delta, const vec_t<N, T>& adj_ret) {
  T h = norm_pseudo_huber(v, delta);
  // ret = v / h: d ret = dv / h - v dh / h^2
  T g = dot(adj_ret, v) / (h * h);  // adjoint of h
  adj_v += adj_ret / h;
  T adj_h = -g;
  T a = dot(v, v);
  adj_v += v * (adj_h / h);
  adj_delta += adj_h * (h / delta - a / (delta * h));
}
}  // namespace kj

//@chunk cw requires vec mat
namespace kj {
template <int N, class T> KJ_FUNC vec_t<N, T> cw_mul(vec_t<N, T> a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] *= b.c[i]; return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> cw_div(vec_t<N, T> a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] /= b.c[i]; return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> cw_mul(mat_t<R, C, T> a, const mat_t<R, C, T>& b) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] *= b.c[i][j]; return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> cw_div(mat_t<R, C, T> a, const mat_t<R, C, T>& b) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] /= b.c[i][j]; return a; }
template <int N, class T> KJ_FUNC void adj_cw_mul(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& ret, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b, const vec_t<N, T>& adj_ret) {
  for (int i = 0; i < N; ++i) { adj_a.c[i] += b.c[i] * adj_ret.c[i]; adj_b.c[i] += a.c[i] * adj_ret.c[i]; }
}
template <int N, class T> KJ_FUNC void adj_cw_div(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& ret, vec_t<N, T>& adj_a, vec_t<N, T>& adj_b, const vec_t<N, T>& adj_ret) {
  for (int i = 0; i < N; ++i) { adj_a.c[i] += adj_ret.c[i] / b.c[i]; adj_b.c[i] -= adj_ret.c[i] * ret.c[i] / b.c[i]; }
}
template <int R, int C, class T> KJ_FUNC void adj_cw_mul(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b, const mat_t<R, C, T>& ret, mat_t<R, C, T>& adj_a, mat_t<R, C, T>& adj_b, const mat_t<R, C, T>& adj_ret) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) { adj_a.c[i][j] += b.c[i][j] * adj_ret.c[i][j]; adj_b.c[i][j] += a.c[i][j] * adj_ret.c[i][j]; }
}
template <int R, int C, class T> KJ_FUNC void adj_cw_div(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b, const mat_t<R, C, T>& ret, mat_t<R, C, T>& adj_a, mat_t<R, C, T>& adj_b, const mat_t<R, C, T>& adj_ret) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) { adj_a.c[i][j] += adj_ret.c[i][j] / b.c[i][j]; adj_b.c[i][j] -= adj_ret.c[i][j] * ret.c[i][j] / b.c[i][j]; }
}
}  // namespace kj

//@chunk outer requires vec mat
namespace kj {
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> outer(const vec_t<R, T>& a, const vec_t<C, T>& b) { mat_t<R, C, T> m; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) m.c[i][j] = a.c[i] * b.c[j]; return m; }
template <int R, int C, class T> KJ_FUNC void adj_outer(const vec_t<R, T>& a, const vec_t<C, T>& b, const mat_t<R, C, T>& ret, vec_t<R, T>& adj_a, vec_t<C, T>& adj_b, const mat_t<R, C, T>& adj_ret) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) { adj_a.c[i] += adj_ret.c[i][j] * b.c[j]; adj_b.c[j] += adj_ret.c[i][j] * a.c[i]; }
}
}  // namespace kj

//@chunk argminmax requires vec
namespace kj {
/// Index of the smallest / largest component (the first on ties). NaN components are
/// skipped, as Warp (0 when all are NaN): a leading NaN would otherwise win every comparison.
template <int N, class T> KJ_FUNC kj_uint32 argmin(const vec_t<N, T>& v) {
  int k = 0;
  while (k < N && v.c[k] != v.c[k]) ++k;
  if (k == N) return 0;
  for (int i = k + 1; i < N; ++i) if (v.c[i] < v.c[k]) k = i;
  return (kj_uint32)k;
}
template <int N, class T> KJ_FUNC kj_uint32 argmax(const vec_t<N, T>& v) {
  int k = 0;
  while (k < N && v.c[k] != v.c[k]) ++k;
  if (k == N) return 0;
  for (int i = k + 1; i < N; ++i) if (v.c[k] < v.c[i]) k = i;
  return (kj_uint32)k;
}
}  // namespace kj
