// kjit prelude: rigid transforms (translation p, then rotation q) and spatial vectors
// (angular part first, then linear, as Warp) — storage, arithmetic and builtins. Adjoints
// come from the templated forward code through dual numbers (dual.h).
//@chunk transform requires quat
namespace kj {
template <class T>
struct transform_t {
  vec_t<3, T> p;
  quat_t<T> q;
};
template <class T> KJ_FUNC bool adj_nonzero(const transform_t<T>& t) { return adj_nonzero(t.p) || adj_nonzero(t.q); }
template <class T> struct caster<transform_t<T>> {
  template <class U> static KJ_FUNC transform_t<T> go(const transform_t<U>& t) { return transform_t<T>{caster<vec_t<3, T>>::go(t.p), caster<quat_t<T>>::go(t.q)}; }
};
template <class T> KJ_FUNC transform_t<T> operator+(const transform_t<T>& a, const transform_t<T>& b) { return transform_t<T>{a.p + b.p, a.q + b.q}; }
template <class T> KJ_FUNC transform_t<T> operator-(const transform_t<T>& a, const transform_t<T>& b) { return transform_t<T>{a.p - b.p, a.q - b.q}; }
template <class T> KJ_FUNC transform_t<T> operator-(const transform_t<T>& a) { return transform_t<T>{-a.p, -a.q}; }
template <class T> KJ_FUNC transform_t<T> operator+(const transform_t<T>& a) { return a; }
template <class T> KJ_FUNC transform_t<T> operator*(const transform_t<T>& a, T s) { return transform_t<T>{a.p * s, a.q * s}; }
template <class T> KJ_FUNC transform_t<T> operator*(T s, const transform_t<T>& a) { return a * s; }
template <class T> KJ_FUNC transform_t<T> operator/(const transform_t<T>& a, T s) { return transform_t<T>{a.p / s, a.q / s}; }
template <class T> KJ_FUNC transform_t<T>& operator+=(transform_t<T>& a, const transform_t<T>& b) { return a = a + b; }
template <class T> KJ_FUNC transform_t<T>& operator-=(transform_t<T>& a, const transform_t<T>& b) { return a = a - b; }
template <class T> KJ_FUNC bool operator==(const transform_t<T>& a, const transform_t<T>& b) { return a.p == b.p && a.q == b.q; }
template <class T> KJ_FUNC bool operator!=(const transform_t<T>& a, const transform_t<T>& b) { return !(a == b); }
// Component i of the seven (p, then q), through copy_bytes (core.h says why).
template <class T> KJ_FUNC T extract(const transform_t<T>& t, kj_int32 i) {
  T c[7];
  copy_bytes(c, t);
  return c[i];
}
template <class T> KJ_FUNC void adj_extract(const transform_t<T>& t, kj_int32 i, T ret, transform_t<T>& adj_t, T adj_ret) {
  T c[7];
  copy_bytes(c, adj_t);
  c[i] += adj_ret;
  copy_bytes(adj_t, c);
}
template <class T> KJ_FUNC transform_t<T> insert(transform_t<T> t, kj_int32 i, T v) {
  T c[7];
  copy_bytes(c, t);
  c[i] = v;
  copy_bytes(t, c);
  return t;
}
template <class T> KJ_FUNC void adj_insert(const transform_t<T>& t, kj_int32 i, T v, const transform_t<T>& ret, transform_t<T>& adj_t, T& adj_v, transform_t<T> adj_ret) {
  T c[7];
  copy_bytes(c, adj_ret);
  adj_v += c[i];
  c[i] = T(0);
  copy_bytes(adj_ret, c);
  adj_t += adj_ret;
}
template <class T> KJ_FUNC void adj_mul(const transform_t<T>& a, T s, const transform_t<T>& ret, transform_t<T>& adj_a, T& adj_s, const transform_t<T>& g) { adj_a += g * s; adj_s += dot(a.p, g.p) + dot(a.q, g.q); }
template <class T> KJ_FUNC void adj_mul(T s, const transform_t<T>& a, const transform_t<T>& ret, T& adj_s, transform_t<T>& adj_a, const transform_t<T>& g) { adj_a += g * s; adj_s += dot(a.p, g.p) + dot(a.q, g.q); }
template <class T> KJ_FUNC void adj_div(const transform_t<T>& a, T s, const transform_t<T>& ret, transform_t<T>& adj_a, T& adj_s, const transform_t<T>& g) { adj_a += g / s; adj_s -= (dot(ret.p, g.p) + dot(ret.q, g.q)) / s; }
}  // namespace kj

//@chunk transformmath requires transform quatmath dual
namespace kj {
/// The composition (a * b applies b first): (a.q b.p + a.p, a.q b.q). The `*` operator on
/// transforms is this product.
template <class T> KJ_FUNC transform_t<T> transform_multiply(const transform_t<T>& a, const transform_t<T>& b) {
  return transform_t<T>{quat_rotate(a.q, b.p) + a.p, a.q * b.q};
}
template <class T> KJ_FUNC transform_t<T> operator*(const transform_t<T>& a, const transform_t<T>& b) { return transform_multiply(a, b); }
/// (a.q b.p + a.p, a.q b.q): the rotation's adjoint and the quaternion product's.
template <class T> KJ_FUNC void adj_mul(const transform_t<T>& a, const transform_t<T>& b, const transform_t<T>&, transform_t<T>& adj_a, transform_t<T>& adj_b, const transform_t<T>& g) {
  adj_a.p += g.p;
  adj_rotate(a.q, b.p, T(1), adj_a.q, adj_b.p, g.p);
  adj_a.q += g.q * conjugate(b.q);
  adj_b.q += conjugate(a.q) * g.q;
}
template <class T> KJ_FUNC vec_t<3, T> transform_get_translation(const transform_t<T>& t) { return t.p; }
template <class T> KJ_FUNC quat_t<T> transform_get_rotation(const transform_t<T>& t) { return t.q; }
template <class T> KJ_FUNC transform_t<T> transform_set_translation(transform_t<T> t, const vec_t<3, T>& p) { t.p = p; return t; }
template <class T> KJ_FUNC transform_t<T> transform_set_rotation(transform_t<T> t, const quat_t<T>& q) { t.q = q; return t; }
template <class T> KJ_FUNC transform_t<T> transform_inverse(const transform_t<T>& t) {
  quat_t<T> qi = conjugate(t.q);
  return transform_t<T>{-quat_rotate(qi, t.p), qi};
}
template <class T> KJ_FUNC vec_t<3, T> transform_point(const transform_t<T>& t, const vec_t<3, T>& p) { return quat_rotate(t.q, p) + t.p; }
template <class T> KJ_FUNC vec_t<3, T> transform_vector(const transform_t<T>& t, const vec_t<3, T>& v) { return quat_rotate(t.q, v); }
template <class T> KJ_FUNC vec_t<3, T> transform_point(const mat_t<4, 4, T>& m, const vec_t<3, T>& p) {
  vec_t<3, T> r;
  for (int i = 0; i < 3; ++i) r.c[i] = m.c[i][0] * p.c[0] + m.c[i][1] * p.c[1] + m.c[i][2] * p.c[2] + m.c[i][3];
  return r;
}
template <class T> KJ_FUNC vec_t<3, T> transform_vector(const mat_t<4, 4, T>& m, const vec_t<3, T>& v) {
  vec_t<3, T> r;
  for (int i = 0; i < 3; ++i) r.c[i] = m.c[i][0] * v.c[0] + m.c[i][1] * v.c[1] + m.c[i][2] * v.c[2];
  return r;
}
template <class T> KJ_FUNC mat_t<4, 4, T> transform_compose(const vec_t<3, T>& p, const quat_t<T>& q, const vec_t<3, T>& s) {
  mat_t<3, 3, T> r = quat_to_matrix(q);
  mat_t<4, 4, T> m = {};
  for (int i = 0; i < 3; ++i) { for (int j = 0; j < 3; ++j) m.c[i][j] = r.c[i][j] * s.c[j]; m.c[i][3] = p.c[i]; }
  m.c[3][3] = T(1);
  return m;
}
template <class T> KJ_FUNC mat_t<4, 4, T> transform_to_matrix(const transform_t<T>& t) {
  mat_t<3, 3, T> r = quat_to_matrix(t.q);
  mat_t<4, 4, T> m = {};
  for (int i = 0; i < 3; ++i) { for (int j = 0; j < 3; ++j) m.c[i][j] = r.c[i][j]; m.c[i][3] = t.p.c[i]; }
  m.c[3][3] = T(1);
  return m;
}
template <class T> KJ_FUNC transform_t<T> transform_from_matrix(const mat_t<4, 4, T>& m) {
  return transform_t<T>{vec_t<3, T>{{m.c[0][3], m.c[1][3], m.c[2][3]}}, quat_from_matrix(m)};
}
/// Position, rotation and (positive) scale of T R S; the inverse of transform_compose.
template <class T> struct decomposed_t { vec_t<3, T> position; quat_t<T> rotation; vec_t<3, T> scale; };
template <class T> KJ_FUNC decomposed_t<T>& operator+=(decomposed_t<T>& a, const decomposed_t<T>& b) { a.position += b.position; a.rotation += b.rotation; a.scale += b.scale; return a; }
template <class T> KJ_FUNC decomposed_t<T> transform_decompose(const mat_t<4, 4, T>& m) {
  decomposed_t<T> d;
  mat_t<3, 3, T> r;
  for (int j = 0; j < 3; ++j) {
    T s = sqrt(m.c[0][j] * m.c[0][j] + m.c[1][j] * m.c[1][j] + m.c[2][j] * m.c[2][j]);
    d.scale.c[j] = s;
    for (int i = 0; i < 3; ++i) r.c[i][j] = s > T(0) ? m.c[i][j] / s : T(i == j ? 1 : 0);
  }
  for (int i = 0; i < 3; ++i) d.position.c[i] = m.c[i][3];
  d.rotation = quat_from_matrix(r);
  return d;
}
template <int N, class T> KJ_FUNC vec_t<3, T> spatial_top(const vec_t<N, T>& a) { return vec_t<3, T>{{a.c[0], a.c[1], a.c[2]}}; }
template <int N, class T> KJ_FUNC vec_t<3, T> spatial_bottom(const vec_t<N, T>& a) { return vec_t<3, T>{{a.c[3], a.c[4], a.c[5]}}; }
template <class T> KJ_FUNC vec_t<6, T> spatial_vector(const vec_t<3, T>& w, const vec_t<3, T>& v) { return vec_t<6, T>{{w.c[0], w.c[1], w.c[2], v.c[0], v.c[1], v.c[2]}}; }
/// Twist (w, v) from the source frame to the destination: (R w, R v + p x R w).
template <class T> KJ_FUNC vec_t<6, T> transform_twist(const transform_t<T>& t, const vec_t<6, T>& x) {
  vec_t<3, T> w = quat_rotate(t.q, spatial_top(x));
  return spatial_vector(w, quat_rotate(t.q, spatial_bottom(x)) + cross(t.p, w));
}
/// Wrench (tau, f): (R tau + p x R f, R f).
template <class T> KJ_FUNC vec_t<6, T> transform_wrench(const transform_t<T>& t, const vec_t<6, T>& x) {
  vec_t<3, T> f = quat_rotate(t.q, spatial_bottom(x));
  return spatial_vector(quat_rotate(t.q, spatial_top(x)) + cross(t.p, f), f);
}
template <class T> KJ_FUNC T spatial_dot(const vec_t<6, T>& a, const vec_t<6, T>& b) { return dot(a, b); }
/// Twist x twist: (w_a x w_b, v_a x w_b + w_a x v_b).
template <class T> KJ_FUNC vec_t<6, T> spatial_cross(const vec_t<6, T>& a, const vec_t<6, T>& b) {
  vec_t<3, T> wa = spatial_top(a), va = spatial_bottom(a), wb = spatial_top(b), vb = spatial_bottom(b);
  return spatial_vector(cross(wa, wb), cross(va, wb) + cross(wa, vb));
}
/// Twist x wrench: (w_a x tau_b + v_a x f_b, w_a x f_b).
template <class T> KJ_FUNC vec_t<6, T> spatial_cross_dual(const vec_t<6, T>& a, const vec_t<6, T>& b) {
  vec_t<3, T> wa = spatial_top(a), va = spatial_bottom(a), tb = spatial_top(b), fb = spatial_bottom(b);
  return spatial_vector(cross(wa, tb) + cross(va, fb), cross(wa, fb));
}
/// The 6x6 block matrix [[r, 0], [s, r]].
template <class T> KJ_FUNC mat_t<6, 6, T> spatial_adjoint(const mat_t<3, 3, T>& r, const mat_t<3, 3, T>& s) {
  mat_t<6, 6, T> m = {};
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) { m.c[i][j] = r.c[i][j]; m.c[i + 3][j + 3] = r.c[i][j]; m.c[i + 3][j] = s.c[i][j]; }
  return m;
}
/// The linear velocity of a point at offset r: v + w x r.
template <class T> KJ_FUNC vec_t<3, T> velocity_at_point(const vec_t<6, T>& qd, const vec_t<3, T>& r) { return spatial_bottom(qd) + cross(spatial_top(qd), r); }

// Adjoints: the same templated code over dual numbers (the linear ones directly).
template <class T> KJ_FUNC void adj_transform_get_translation(const transform_t<T>& t, const vec_t<3, T>&, transform_t<T>& adj_t, const vec_t<3, T>& g) { adj_t.p += g; }
template <class T> KJ_FUNC void adj_transform_get_rotation(const transform_t<T>& t, const quat_t<T>&, transform_t<T>& adj_t, const quat_t<T>& g) { adj_t.q += g; }
template <class T> KJ_FUNC void adj_transform_set_translation(const transform_t<T>&, const vec_t<3, T>&, const transform_t<T>&, transform_t<T>& adj_t, vec_t<3, T>& adj_p, const transform_t<T>& g) { adj_t.q += g.q; adj_p += g.p; }
template <class T> KJ_FUNC void adj_transform_set_rotation(const transform_t<T>&, const quat_t<T>&, const transform_t<T>&, transform_t<T>& adj_t, quat_t<T>& adj_q, const transform_t<T>& g) { adj_t.p += g.p; adj_q += g.q; }
template <class T> KJ_FUNC void adj_transform_multiply(const transform_t<T>& a, const transform_t<T>& b, const transform_t<T>& r, transform_t<T>& adj_a, transform_t<T>& adj_b, const transform_t<T>& g) { adj_mul(a, b, r, adj_a, adj_b, g); }
/// (-rotate(q*, p), q*).
template <class T> KJ_FUNC void adj_transform_inverse(const transform_t<T>& t, const transform_t<T>&, transform_t<T>& adj_t, const transform_t<T>& g) {
  quat_t<T> adj_qi = g.q;
  adj_rotate(conjugate(t.q), t.p, T(1), adj_qi, adj_t.p, -g.p);
  adj_t.q += conjugate(adj_qi);
}
template <class T> KJ_FUNC void adj_transform_point(const transform_t<T>& t, const vec_t<3, T>& p, const vec_t<3, T>&, transform_t<T>& adj_t, vec_t<3, T>& adj_p, const vec_t<3, T>& g) {
  adj_t.p += g;
  adj_rotate(t.q, p, T(1), adj_t.q, adj_p, g);
}
template <class T> KJ_FUNC void adj_transform_vector(const transform_t<T>& t, const vec_t<3, T>& v, const vec_t<3, T>&, transform_t<T>& adj_t, vec_t<3, T>& adj_v, const vec_t<3, T>& g) {
  adj_rotate(t.q, v, T(1), adj_t.q, adj_v, g);
}
/// A 4x4 matrix applied to (p, 1) (a point) or (v, 0) (a vector).
template <class T> KJ_FUNC void adj_transform_point(const mat_t<4, 4, T>& m, const vec_t<3, T>& p, const vec_t<3, T>&, mat_t<4, 4, T>& adj_m, vec_t<3, T>& adj_p, const vec_t<3, T>& g) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) { adj_m.c[i][j] += g.c[i] * p.c[j]; adj_p.c[j] += g.c[i] * m.c[i][j]; }
    adj_m.c[i][3] += g.c[i];
  }
}
template <class T> KJ_FUNC void adj_transform_vector(const mat_t<4, 4, T>& m, const vec_t<3, T>& v, const vec_t<3, T>&, mat_t<4, 4, T>& adj_m, vec_t<3, T>& adj_v, const vec_t<3, T>& g) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) { adj_m.c[i][j] += g.c[i] * v.c[j]; adj_v.c[j] += g.c[i] * m.c[i][j]; }
}
template <class T> KJ_FUNC void adj_transform_to_matrix(const transform_t<T>& t, const mat_t<4, 4, T>&, transform_t<T>& adj_t, const mat_t<4, 4, T>& g) { adj_dual([](const dual_of<transform_t<T>>& x) { return transform_to_matrix(x); }, t, adj_t, g); }
template <class T> KJ_FUNC void adj_transform_from_matrix(const mat_t<4, 4, T>& m, const transform_t<T>&, mat_t<4, 4, T>& adj_m, const transform_t<T>& g) { adj_dual([](const dual_of<mat_t<4, 4, T>>& x) { return transform_from_matrix(x); }, m, adj_m, g); }
template <class T> KJ_FUNC void adj_transform_compose(const vec_t<3, T>& p, const quat_t<T>& q, const vec_t<3, T>& s, const mat_t<4, 4, T>&, vec_t<3, T>& adj_p, quat_t<T>& adj_q, vec_t<3, T>& adj_s, const mat_t<4, 4, T>& g) { adj_dual([](const dual_of<vec_t<3, T>>& x, const dual_of<quat_t<T>>& y, const dual_of<vec_t<3, T>>& z) { return transform_compose(x, y, z); }, p, q, s, adj_p, adj_q, adj_s, g); }
template <class T> KJ_FUNC void adj_transform_decompose(const mat_t<4, 4, T>& m, const decomposed_t<T>&, mat_t<4, 4, T>& adj_m, const decomposed_t<T>& g) { adj_dual([](const dual_of<mat_t<4, 4, T>>& x) { return transform_decompose(x); }, m, adj_m, g); }
template <class T> KJ_FUNC void adj_transform_twist(const transform_t<T>& t, const vec_t<6, T>& x, const vec_t<6, T>&, transform_t<T>& adj_t, vec_t<6, T>& adj_x, const vec_t<6, T>& g) { adj_dual([](const dual_of<transform_t<T>>& a, const dual_of<vec_t<6, T>>& b) { return transform_twist(a, b); }, t, x, adj_t, adj_x, g); }
template <class T> KJ_FUNC void adj_transform_wrench(const transform_t<T>& t, const vec_t<6, T>& x, const vec_t<6, T>&, transform_t<T>& adj_t, vec_t<6, T>& adj_x, const vec_t<6, T>& g) { adj_dual([](const dual_of<transform_t<T>>& a, const dual_of<vec_t<6, T>>& b) { return transform_wrench(a, b); }, t, x, adj_t, adj_x, g); }
template <class T> KJ_FUNC void adj_spatial_top(const vec_t<6, T>&, const vec_t<3, T>&, vec_t<6, T>& adj_a, const vec_t<3, T>& g) { for (int i = 0; i < 3; ++i) adj_a.c[i] += g.c[i]; }
template <class T> KJ_FUNC void adj_spatial_bottom(const vec_t<6, T>&, const vec_t<3, T>&, vec_t<6, T>& adj_a, const vec_t<3, T>& g) { for (int i = 0; i < 3; ++i) adj_a.c[i + 3] += g.c[i]; }
template <class T> KJ_FUNC void adj_spatial_dot(const vec_t<6, T>& a, const vec_t<6, T>& b, T, vec_t<6, T>& adj_a, vec_t<6, T>& adj_b, T g) { adj_a += b * g; adj_b += a * g; }
template <class T> KJ_FUNC void adj_spatial_cross(const vec_t<6, T>& a, const vec_t<6, T>& b, const vec_t<6, T>&, vec_t<6, T>& adj_a, vec_t<6, T>& adj_b, const vec_t<6, T>& g) { adj_dual([](const dual_of<vec_t<6, T>>& x, const dual_of<vec_t<6, T>>& y) { return spatial_cross(x, y); }, a, b, adj_a, adj_b, g); }
template <class T> KJ_FUNC void adj_spatial_cross_dual(const vec_t<6, T>& a, const vec_t<6, T>& b, const vec_t<6, T>&, vec_t<6, T>& adj_a, vec_t<6, T>& adj_b, const vec_t<6, T>& g) { adj_dual([](const dual_of<vec_t<6, T>>& x, const dual_of<vec_t<6, T>>& y) { return spatial_cross_dual(x, y); }, a, b, adj_a, adj_b, g); }
template <class T> KJ_FUNC void adj_spatial_adjoint(const mat_t<3, 3, T>&, const mat_t<3, 3, T>&, const mat_t<6, 6, T>&, mat_t<3, 3, T>& adj_r, mat_t<3, 3, T>& adj_s, const mat_t<6, 6, T>& g) {
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) { adj_r.c[i][j] += g.c[i][j] + g.c[i + 3][j + 3]; adj_s.c[i][j] += g.c[i + 3][j]; }
}
template <class T> KJ_FUNC void adj_velocity_at_point(const vec_t<6, T>& qd, const vec_t<3, T>& r, const vec_t<3, T>&, vec_t<6, T>& adj_qd, vec_t<3, T>& adj_r, const vec_t<3, T>& g) {
  adj_dual([](const dual_of<vec_t<6, T>>& x, const dual_of<vec_t<3, T>>& y) { return velocity_at_point(x, y); }, qd, r, adj_qd, adj_r, g);
}
}  // namespace kj
