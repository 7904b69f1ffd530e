// kjit prelude: quaternions (x, y, z, w: the real part last) — storage, arithmetic (the
// Hamilton product), and the quaternion builtins. Their adjoints come from the templated
// forward code through dual numbers (dual.h).
//@chunk quat requires vec math
namespace kj {
template <class T>
struct quat_t {
  T x, y, z, w;
};
template <class T> KJ_FUNC bool adj_nonzero(const quat_t<T>& q) { return adj_nonzero(q.x) || adj_nonzero(q.y) || adj_nonzero(q.z) || adj_nonzero(q.w); }
template <class T> struct caster<quat_t<T>> {
  template <class U> static KJ_FUNC quat_t<T> go(const quat_t<U>& q) { return quat_t<T>{static_cast<T>(q.x), static_cast<T>(q.y), static_cast<T>(q.z), static_cast<T>(q.w)}; }
};
template <class T> KJ_FUNC quat_t<T> operator+(const quat_t<T>& a, const quat_t<T>& b) { return quat_t<T>{a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w}; }
template <class T> KJ_FUNC quat_t<T> operator-(const quat_t<T>& a, const quat_t<T>& b) { return quat_t<T>{a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w}; }
template <class T> KJ_FUNC quat_t<T> operator-(const quat_t<T>& a) { return quat_t<T>{-a.x, -a.y, -a.z, -a.w}; }
template <class T> KJ_FUNC quat_t<T> operator+(const quat_t<T>& a) { return a; }
template <class T> KJ_FUNC quat_t<T> operator*(const quat_t<T>& a, T s) { return quat_t<T>{a.x * s, a.y * s, a.z * s, a.w * s}; }
template <class T> KJ_FUNC quat_t<T> operator*(T s, const quat_t<T>& a) { return a * s; }
template <class T> KJ_FUNC quat_t<T> operator/(const quat_t<T>& a, T s) { return quat_t<T>{a.x / s, a.y / s, a.z / s, a.w / s}; }
/// The Hamilton product: the rotation b, then a.
template <class T> KJ_FUNC quat_t<T> operator*(const quat_t<T>& a, const quat_t<T>& b) {
  return quat_t<T>{a.w * b.x + b.w * a.x + a.y * b.z - b.y * a.z, a.w * b.y + b.w * a.y + a.z * b.x - b.z * a.x,
                   a.w * b.z + b.w * a.z + a.x * b.y - b.x * a.y, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}
template <class T> KJ_FUNC quat_t<T>& operator+=(quat_t<T>& a, const quat_t<T>& b) { return a = a + b; }
template <class T> KJ_FUNC quat_t<T>& operator-=(quat_t<T>& a, const quat_t<T>& b) { return a = a - b; }
template <class T> KJ_FUNC bool operator==(const quat_t<T>& a, const quat_t<T>& b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }
template <class T> KJ_FUNC bool operator!=(const quat_t<T>& a, const quat_t<T>& b) { return !(a == b); }
template <class T> KJ_FUNC quat_t<T> conjugate(const quat_t<T>& q) { return quat_t<T>{-q.x, -q.y, -q.z, q.w}; }
template <class T> KJ_FUNC T dot(const quat_t<T>& a, const quat_t<T>& b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
template <class T> KJ_FUNC T length(const quat_t<T>& q) { return sqrt(dot(q, q)); }
template <class T> KJ_FUNC T length_sq(const quat_t<T>& q) { return dot(q, q); }
/// q times the reciprocal of |q| (Warp's rounding); the identity where |q| is not > 0, as Warp.
template <class T> KJ_FUNC quat_t<T> normalize(const quat_t<T>& q) {
  T l = length(q);
  if (l > T(0)) return q * (T(1) / l);
  return quat_t<T>{T(0), T(0), T(0), T(1)};
}
template <class T> KJ_FUNC vec_t<3, T> vec_part(const quat_t<T>& q) { return vec_t<3, T>{{q.x, q.y, q.z}}; }
template <class T> KJ_FUNC quat_t<T> make_quat(const vec_t<3, T>& v, T w) { return quat_t<T>{v.c[0], v.c[1], v.c[2], w}; }

// Components (the IR's extract/insert) and the adjoints of the arithmetic.
template <class T> KJ_FUNC T extract(const quat_t<T>& q, kj_int32 i) { return (&q.x)[i]; }
template <class T> KJ_FUNC void adj_extract(const quat_t<T>& q, kj_int32 i, T ret, quat_t<T>& adj_q, T adj_ret) { (&adj_q.x)[i] += adj_ret; }
template <class T> KJ_FUNC quat_t<T> insert(quat_t<T> q, kj_int32 i, T v) { (&q.x)[i] = v; return q; }
template <class T> KJ_FUNC void adj_insert(const quat_t<T>& q, kj_int32 i, T v, const quat_t<T>& ret, quat_t<T>& adj_q, T& adj_v, quat_t<T> adj_ret) {
  adj_v += (&adj_ret.x)[i];
  (&adj_ret.x)[i] = T(0);
  adj_q += adj_ret;
}
template <class T> KJ_FUNC void adj_mul(const quat_t<T>& a, const quat_t<T>& b, const quat_t<T>& ret, quat_t<T>& adj_a, quat_t<T>& adj_b, const quat_t<T>& adj_ret) {
  adj_a += adj_ret * conjugate(b);
  adj_b += conjugate(a) * adj_ret;
}
template <class T> KJ_FUNC void adj_mul(const quat_t<T>& a, T s, const quat_t<T>& ret, quat_t<T>& adj_a, T& adj_s, const quat_t<T>& adj_ret) { adj_a += adj_ret * s; adj_s += dot(a, adj_ret); }
template <class T> KJ_FUNC void adj_mul(T s, const quat_t<T>& a, const quat_t<T>& ret, T& adj_s, quat_t<T>& adj_a, const quat_t<T>& adj_ret) { adj_a += adj_ret * s; adj_s += dot(a, adj_ret); }
template <class T> KJ_FUNC void adj_div(const quat_t<T>& a, T s, const quat_t<T>& ret, quat_t<T>& adj_a, T& adj_s, const quat_t<T>& adj_ret) { adj_a += adj_ret / s; adj_s -= dot(adj_ret, ret) / s; }
template <class T> KJ_FUNC void adj_dot(const quat_t<T>& a, const quat_t<T>& b, T ret, quat_t<T>& adj_a, quat_t<T>& adj_b, T adj_ret) { adj_a += b * adj_ret; adj_b += a * adj_ret; }
template <class T> KJ_FUNC void adj_length(const quat_t<T>& q, T ret, quat_t<T>& adj_q, T adj_ret) { if (ret > T(0)) adj_q += q * (adj_ret / ret); }
template <class T> KJ_FUNC void adj_length_sq(const quat_t<T>& q, T ret, quat_t<T>& adj_q, T adj_ret) { adj_q += q * (T(2) * adj_ret); }
template <class T> KJ_FUNC void adj_normalize(const quat_t<T>& q, const quat_t<T>& ret, quat_t<T>& adj_q, const quat_t<T>& adj_ret) {
  T l = length(q);
  if (l > T(0)) adj_q += (adj_ret - ret * dot(ret, adj_ret)) / l;
}
}  // namespace kj

//@chunk quatmath requires quat cross dual mat abs length normalize
namespace kj {
/// Rotation of `angle` about `axis` (used as given: pass a unit axis).
template <class T> KJ_FUNC quat_t<T> quat_from_axis_angle(const vec_t<3, T>& axis, T angle) {
  T h = angle * T(0.5);
  return make_quat(axis * sin(h), cos(h));
}
/// The axis and angle of a unit quaternion, as Warp: the shorter rotation, angle =
/// 2 atan2(|v|, |w|) in [0, pi], the axis negated where w < 0 (q and -q give one rotation);
/// a zero axis for the identity (normalize's rule).
template <class T> struct axis_angle_t { vec_t<3, T> axis; T angle; };
template <class T> KJ_FUNC axis_angle_t<T>& operator+=(axis_angle_t<T>& a, const axis_angle_t<T>& b) { a.axis += b.axis; a.angle += b.angle; return a; }
template <class T> KJ_FUNC axis_angle_t<T> quat_to_axis_angle(const quat_t<T>& q) {
  vec_t<3, T> v = vec_part(q);
  axis_angle_t<T> r;
  r.axis = q.w < T(0) ? -normalize(v) : normalize(v);
  r.angle = T(2) * atan2(length(v), abs(q.w));
  return r;
}
template <class T> KJ_FUNC quat_t<T> quat_inverse(const quat_t<T>& q) { return conjugate(q); }
/// q p q* for a unit q (the formula Warp uses; for other q it scales the result).
/// p (2w^2 - 1) + v 2(v . p) + s (v x p) w 2, in Warp's order of operations (so float32 gives
/// its bits); s = 1 rotates by q, s = -1 by its inverse (a + (-b) rounds as a - b).
template <class T> KJ_FUNC vec_t<3, T> rotate_by(const quat_t<T>& q, const vec_t<3, T>& p, T s) {
  T c = T(2) * q.w * q.w - T(1), d = T(2) * (q.x * p.c[0] + q.y * p.c[1] + q.z * p.c[2]);
  return vec_t<3, T>{{p.c[0] * c + q.x * d + s * ((q.y * p.c[2] - q.z * p.c[1]) * q.w * T(2)),
                      p.c[1] * c + q.y * d + s * ((q.z * p.c[0] - q.x * p.c[2]) * q.w * T(2)),
                      p.c[2] * c + q.z * d + s * ((q.x * p.c[1] - q.y * p.c[0]) * q.w * T(2))}};
}
template <class T> KJ_FUNC vec_t<3, T> quat_rotate(const quat_t<T>& q, const vec_t<3, T>& p) { return rotate_by(q, p, T(1)); }
template <class T> KJ_FUNC vec_t<3, T> quat_rotate_inv(const quat_t<T>& q, const vec_t<3, T>& p) { return rotate_by(q, p, T(-1)); }
/// The rotation matrix: its columns are q rotating the unit axes (Warp's formula, so the
/// same bits; for a q that is not unit it is not orthogonal).
template <class T> KJ_FUNC mat_t<3, 3, T> quat_to_matrix(const quat_t<T>& q) {
  mat_t<3, 3, T> m;
  for (int j = 0; j < 3; ++j) {
    vec_t<3, T> e = {{T(0), T(0), T(0)}};
    e.c[j] = T(1);
    vec_t<3, T> col = rotate_by(q, e, T(1));
    for (int i = 0; i < 3; ++i) m.c[i][j] = col.c[i];
  }
  return m;
}
/// The unit quaternion of a rotation matrix (the upper-left 3x3 of a 4x4) as Warp computes
/// it: from the trace where it is >= 0, else from the largest diagonal element (the first of
/// equals); then normalized (no sign is chosen for w).
template <int N, class T> KJ_FUNC quat_t<T> quat_from_matrix(const mat_t<N, N, T>& m) {
  const T(*a)[N] = m.c;
  T tr = a[0][0] + a[1][1] + a[2][2];
  quat_t<T> q;
  if (tr >= T(0)) {
    T h = sqrt(tr + T(1)), k = T(0.5) / h;
    q = quat_t<T>{(a[2][1] - a[1][2]) * k, (a[0][2] - a[2][0]) * k, (a[1][0] - a[0][1]) * k, T(0.5) * h};
  } else {
    int d = a[1][1] > a[0][0] ? 1 : 0;
    if (a[2][2] > a[d][d]) d = 2;
    // Component d from the diagonal, the others from the off-diagonal pairs' sums (a sum
    // of two rounds the same either way round) and w from a difference.
    int u = (d + 1) % 3, v = (d + 2) % 3;
    T h = sqrt((a[d][d] - (a[u][u] + a[v][v])) + T(1)), k = T(0.5) / h;
    T* c = &q.x;
    c[d] = T(0.5) * h;
    c[u] = (a[u][d] + a[d][u]) * k;
    c[v] = (a[v][d] + a[d][v]) * k;
    q.w = (a[v][u] - a[u][v]) * k;
  }
  return normalize(q);
}
/// The rotation of angle e[a] about coordinate axis a.
template <class T> KJ_FUNC quat_t<T> axis_rotation(int a, T angle) {
  vec_t<3, T> axis = {{T(0), T(0), T(0)}};
  axis.c[a] = T(1);
  return quat_from_axis_angle(axis, angle);
}
/// Rotations about the fixed axes i, then j, then k (extrinsic): q = qk qj qi, with the
/// angles indexed by axis (e[0] about X); for i == k, e[i] serves both.
template <class T> KJ_FUNC quat_t<T> quat_from_euler(const vec_t<3, T>& e, int i, int j, int k) {
  return axis_rotation(k, e.c[k]) * axis_rotation(j, e.c[j]) * axis_rotation(i, e.c[i]);
}
/// Roll about X, then pitch about Y, then yaw about Z (fixed axes): the product of the three
/// axis rotations multiplied out, in Warp's order of operations (so float32 gives its bits).
template <class T> KJ_FUNC quat_t<T> quat_rpy(T roll, T pitch, T yaw) {
  T cy = cos(yaw * T(0.5)), sy = sin(yaw * T(0.5)), cr = cos(roll * T(0.5)), sr = sin(roll * T(0.5));
  T cp = cos(pitch * T(0.5)), sp = sin(pitch * T(0.5));
  return quat_t<T>{cy * sr * cp - sy * cr * sp, cy * cr * sp + sy * sr * cp, sy * cr * cp - cy * sr * sp,
                   cy * cr * cp + sy * sr * sp};
}
/// The inverse of quat_from_euler for Tait-Bryan sequences (angles indexed by axis); for
/// proper Euler sequences (i == k) e[i], e[j] and e[3 - i - j] hold the three angles.
template <class T> KJ_FUNC_BIG vec_t<3, T> quat_to_euler(const quat_t<T>& q, int i, int j, int k) {
  mat_t<3, 3, T> R = quat_to_matrix(q);
  vec_t<3, T> e = {{T(0), T(0), T(0)}};
  if (i != k) {
    T s = ((j - i + 3) % 3 == 1) ? T(1) : T(-1);  // parity of (i, j, k)
    T sb = -s * R.c[k][i];
    sb = sb > T(1) ? T(1) : (sb < T(-1) ? T(-1) : sb);
    e.c[j] = asin(sb);
    if (abs(sb) < T(0.9999999)) {
      e.c[i] = atan2(s * R.c[k][j], R.c[k][k]);
      e.c[k] = atan2(s * R.c[j][i], R.c[i][i]);
    } else {  // gimbal lock: only the sum or difference of the outer angles is determined
      e.c[i] = T(0);
      e.c[k] = atan2(-s * R.c[i][j], R.c[j][j]);
    }
  } else {
    int m = 3 - i - j;
    T s = ((j - i + 3) % 3 == 1) ? T(1) : T(-1);  // parity of (i, j, m)
    T cb = R.c[i][i];
    cb = cb > T(1) ? T(1) : (cb < T(-1) ? T(-1) : cb);
    e.c[j] = acos(cb);
    e.c[i] = atan2(R.c[i][j], s * R.c[i][m]);
    e.c[m] = atan2(R.c[j][i], -s * R.c[m][i]);
  }
  return e;
}
/// Roll, pitch and yaw (the angles of quat_rpy) straight from the components, as Warp: the
/// pitch's sine is clamped to [-1, 1] (a NaN to -1, as clamp). Near gimbal lock, roll and yaw
/// lose accuracy (quat_to_euler(q, 0, 1, 2) handles it).
template <class T> KJ_FUNC vec_t<3, T> quat_to_rpy(const quat_t<T>& q) {
  T x = q.x, y = q.y, z = q.z, w = q.w;
  T sp = T(2) * (w * y - z * x);
  sp = sp > T(1) ? T(1) : (sp < T(-1) ? T(-1) : sp);  // asin maps a NaN to asin(-1)
  return vec_t<3, T>{{atan2(T(2) * (w * x + y * z), T(1) - T(2) * (x * x + y * y)), asin(sp),
                      atan2(T(2) * (w * z + x * y), T(1) - T(2) * (y * y + z * z))}};
}
/// Spherical interpolation from q0 (t = 0) towards q1 (t = 1), as Warp: q0 r^t, r = q0* q1
/// taken with w >= 0 (the shorter arc: t = 1 gives q1 or -q1), through r's axis and angle.
template <class T> KJ_FUNC quat_t<T> quat_slerp(const quat_t<T>& q0, const quat_t<T>& q1, T t) {
  quat_t<T> r = conjugate(q0) * q1;
  vec_t<3, T> v = vec_part(r), axis = normalize(v);
  if (r.w < T(0)) axis = -axis;
  return q0 * quat_from_axis_angle(axis, t * (T(2) * atan2(length(v), abs(r.w))));
}
/// The same function over dual numbers (adjoint and tangent): r^t's vector part written as
/// v sin(t a) / |v| with its limit v t / w at v = 0, where the axis form's derivative is lost
/// (a zero axis); a = atan2(|v|, w), r with w >= 0.
template <class T> KJ_FUNC quat_t<dual<T>> quat_slerp(const quat_t<dual<T>>& q0, const quat_t<dual<T>>& q1, dual<T> t) {
  using D = dual<T>;
  quat_t<D> r = conjugate(q0) * q1;
  if (r.w < D(0)) r = -r;
  vec_t<3, D> v = vec_part(r);
  D lv = length(v), a = atan2(lv, r.w);
  D k = lv > D(0) ? sin(t * a) / lv : t / r.w;
  return q0 * make_quat(v * k, cos(t * a));
}
/// The twist of q about a unit axis: the rotation about `axis` in q's swing-twist split
/// (normalize gives the identity where that part is zero).
template <class T> KJ_FUNC quat_t<T> quat_twist(const vec_t<3, T>& axis, const quat_t<T>& q) {
  return normalize(make_quat(axis * dot(axis, vec_part(q)), q.w));
}
template <class T> KJ_FUNC T quat_twist_angle(const vec_t<3, T>& axis, const quat_t<T>& q) { return T(2) * atan2(abs(dot(axis, vec_part(q))), q.w); }
template <class T> KJ_FUNC T quat_twist_angle_signed(const vec_t<3, T>& axis, const quat_t<T>& q) { return T(2) * atan2(dot(axis, vec_part(q)), q.w); }

// Adjoints. The common small ones are written out (they compile faster than dual sweeps);
// the rest run the same templated code over dual numbers.
/// quat_rotate (sign = 1) and quat_rotate_inv (sign = -1): r = p (2w^2 - 1) + sign 2w (v x p)
/// + 2 v (v . p).
template <class T> KJ_FUNC void adj_rotate(const quat_t<T>& q, const vec_t<3, T>& p, T sign, quat_t<T>& adj_q, vec_t<3, T>& adj_p, const vec_t<3, T>& g) {
  vec_t<3, T> v = vec_part(q);
  T vg = dot(v, g), vp = dot(v, p), w2 = T(2) * q.w;
  adj_p += g * (w2 * q.w - T(1)) + cross(g, v) * (sign * w2) + v * (T(2) * vg);
  vec_t<3, T> adj_v = cross(p, g) * (sign * w2) + p * (T(2) * vg) + g * (T(2) * vp);
  adj_q += make_quat(adj_v, T(4) * q.w * dot(p, g) + sign * T(2) * dot(cross(v, p), g));
}
template <class T> KJ_FUNC void adj_quat_rotate(const quat_t<T>& q, const vec_t<3, T>& p, const vec_t<3, T>&, quat_t<T>& adj_q, vec_t<3, T>& adj_p, const vec_t<3, T>& g) { adj_rotate(q, p, T(1), adj_q, adj_p, g); }
template <class T> KJ_FUNC void adj_quat_rotate_inv(const quat_t<T>& q, const vec_t<3, T>& p, const vec_t<3, T>&, quat_t<T>& adj_q, vec_t<3, T>& adj_p, const vec_t<3, T>& g) { adj_rotate(q, p, T(-1), adj_q, adj_p, g); }
/// Column j is q rotating axis j: the rotation's adjoint, column by column.
template <class T> KJ_FUNC void adj_quat_to_matrix(const quat_t<T>& q, const mat_t<3, 3, T>&, quat_t<T>& adj_q, const mat_t<3, 3, T>& G) {
  for (int j = 0; j < 3; ++j) {
    vec_t<3, T> e = {{T(0), T(0), T(0)}}, adj_e = e;
    e.c[j] = T(1);
    adj_rotate(q, e, T(1), adj_q, adj_e, vec_t<3, T>{{G.c[0][j], G.c[1][j], G.c[2][j]}});
  }
}
template <class T> KJ_FUNC void adj_quat_from_axis_angle(const vec_t<3, T>& a, T angle, const quat_t<T>&, vec_t<3, T>& adj_a, T& adj_angle, const quat_t<T>& g) {
  T h = angle * T(0.5), s = sin(h), c = cos(h);
  vec_t<3, T> gv = vec_part(g);
  adj_a += gv * s;
  adj_angle += (dot(a, gv) * c - g.w * s) * T(0.5);
}
template <class T> KJ_FUNC void adj_quat_to_axis_angle(const quat_t<T>& q, const axis_angle_t<T>&, quat_t<T>& adj_q, const axis_angle_t<T>& g) { adj_dual([](const dual_of<quat_t<T>>& x) { return quat_to_axis_angle(x); }, q, adj_q, g); }
template <class T> KJ_FUNC void adj_quat_inverse(const quat_t<T>& q, const quat_t<T>&, quat_t<T>& adj_q, const quat_t<T>& g) { adj_q += conjugate(g); }
template <int N, class T> KJ_FUNC void adj_quat_from_matrix(const mat_t<N, N, T>& m, const quat_t<T>&, mat_t<N, N, T>& adj_m, const quat_t<T>& g) { adj_dual([](const dual_of<mat_t<N, N, T>>& x) { return quat_from_matrix(x); }, m, adj_m, g); }
template <class T> KJ_FUNC void adj_quat_from_euler(const vec_t<3, T>& e, kj_int32 i, kj_int32 j, kj_int32 k, const quat_t<T>&, vec_t<3, T>& adj_e, const quat_t<T>& g) { adj_dual([&](const dual_of<vec_t<3, T>>& x) { return quat_from_euler(x, i, j, k); }, e, adj_e, g); }
template <class T> KJ_FUNC void adj_quat_rpy(T r, T p, T y, const quat_t<T>&, T& adj_r, T& adj_p, T& adj_y, const quat_t<T>& g) { adj_dual([](const dual_of<T>& a, const dual_of<T>& b, const dual_of<T>& c) { return quat_rpy(a, b, c); }, r, p, y, adj_r, adj_p, adj_y, g); }
template <class T> KJ_FUNC void adj_quat_to_euler(const quat_t<T>& q, kj_int32 i, kj_int32 j, kj_int32 k, const vec_t<3, T>&, quat_t<T>& adj_q, const vec_t<3, T>& g) { adj_dual([&](const dual_of<quat_t<T>>& x) { return quat_to_euler(x, i, j, k); }, q, adj_q, g); }
template <class T> KJ_FUNC void adj_quat_to_rpy(const quat_t<T>& q, const vec_t<3, T>&, quat_t<T>& adj_q, const vec_t<3, T>& g) { adj_dual([](const dual_of<quat_t<T>>& x) { return quat_to_rpy(x); }, q, adj_q, g); }
template <class T> KJ_FUNC void adj_quat_slerp(const quat_t<T>& a, const quat_t<T>& b, T t, const quat_t<T>&, quat_t<T>& adj_a, quat_t<T>& adj_b, T& adj_t, const quat_t<T>& g) { adj_dual([](const dual_of<quat_t<T>>& x, const dual_of<quat_t<T>>& y, const dual_of<T>& z) { return quat_slerp(x, y, z); }, a, b, t, adj_a, adj_b, adj_t, g); }
template <class T> KJ_FUNC void adj_quat_twist(const vec_t<3, T>& a, const quat_t<T>& q, const quat_t<T>&, vec_t<3, T>& adj_a, quat_t<T>& adj_q, const quat_t<T>& g) { adj_dual([](const dual_of<vec_t<3, T>>& x, const dual_of<quat_t<T>>& y) { return quat_twist(x, y); }, a, q, adj_a, adj_q, g); }
template <class T> KJ_FUNC void adj_quat_twist_angle(const vec_t<3, T>& a, const quat_t<T>& q, T, vec_t<3, T>& adj_a, quat_t<T>& adj_q, T g) { adj_dual([](const dual_of<vec_t<3, T>>& x, const dual_of<quat_t<T>>& y) { return quat_twist_angle(x, y); }, a, q, adj_a, adj_q, g); }
template <class T> KJ_FUNC void adj_quat_twist_angle_signed(const vec_t<3, T>& a, const quat_t<T>& q, T, vec_t<3, T>& adj_a, quat_t<T>& adj_q, T g) { adj_dual([](const dual_of<vec_t<3, T>>& x, const dual_of<quat_t<T>>& y) { return quat_twist_angle_signed(x, y); }, a, q, adj_a, adj_q, g); }
}  // namespace kj
