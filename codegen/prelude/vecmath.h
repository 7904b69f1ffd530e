// kjit prelude: vector builtins (dot, cross, length, normalize) and their adjoints.
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
template <int N, class T> KJ_FUNC T length(const vec_t<N, T>& v) { return kj::sqrt(dot(v, v)); }
template <int N, class T> KJ_FUNC void adj_length(const vec_t<N, T>& v, T ret, vec_t<N, T>& adj_v, T adj_ret) {
  if (ret > T(0)) adj_v += v * (adj_ret / ret);
}
}  // namespace kj

//@chunk normalize requires vec math
namespace kj {
template <int N, class T> KJ_FUNC vec_t<N, T> normalize(const vec_t<N, T>& v) {
  T l = kj::sqrt(dot(v, v));
  if (l > T(0)) return v / l;
  vec_t<N, T> z = {};
  return z;
}
template <int N, class T> KJ_FUNC void adj_normalize(const vec_t<N, T>& v, const vec_t<N, T>& ret, vec_t<N, T>& adj_v, const vec_t<N, T>& adj_ret) {
  T l = kj::sqrt(dot(v, v));
  if (l > T(0)) adj_v += (adj_ret - ret * dot(ret, adj_ret)) / l;
}
}  // namespace kj
