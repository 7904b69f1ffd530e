// kjit prelude: the pure geometric builtins of Warp's "Geometry: misc" group — the closest
// points of two segments (differentiable: its adjoint and tangent run the same templated code
// on dual numbers) and the triangle-triangle overlap test (a yes/no answer, no gradient).
//@chunk edge_edge requires vec math dual fma
namespace kj {
/// a*b - c*d; float32 and float64 keep the rounding error of c*d (an fma recovers it), which
/// decides the sign of a*e - b*b for nearly parallel edges.
KJ_FUNC float edge_diff_product(float a, float b, float c, float d) { float cd = c * d; return kj::fma(a, b, -cd) + kj::fma(-c, d, cd); }
KJ_FUNC double edge_diff_product(double a, double b, double c, double d) { double cd = c * d; return kj::fma(a, b, -cd) + kj::fma(-c, d, cd); }
template <class T> KJ_FUNC dual<T> edge_diff_product(dual<T> a, dual<T> b, dual<T> c, dual<T> d) { return a * b - c * d; }
/// x held constant: its value without its tangent (the plain value for plain scalars).
template <class T> KJ_FUNC T edge_frozen(T x) { return x; }
template <class T> KJ_FUNC dual<T> edge_frozen(dual<T> x) { return dual<T>(x.v, T(0)); }
template <class T> KJ_FUNC T edge_unit_clamp(T x) { return x < T(0) ? T(0) : x > T(1) ? T(1) : x; }
/// The value of a plain or dual scalar, for the thresholds.
template <class T> KJ_FUNC T edge_value(T x) { return x; }
template <class T> KJ_FUNC T edge_value(dual<T> x) { return x.v; }

/// Closest points of segments p1-q1 and p2-q2: (s, t, distance) with the points p1 + s (q1 - p1)
/// and p2 + t (q2 - p2), s and t in [0, 1]. A segment whose squared length is at most epsilon
/// is a point (its parameter 0). Parallel segments take s = 0 (then clamp), as Warp 1.19.
/// Nearly parallel ones (sin^2 of the angle below 1e-6, where 1/denominator amplifies rounding)
/// hold the unclamped s constant for derivatives: bounded gradients, as Warp's damped adjoint.
template <class T, class E>
KJ_FUNC_BIG vec_t<3, T> closest_point_edge_edge(const vec_t<3, T>& p1, const vec_t<3, T>& q1, const vec_t<3, T>& p2, const vec_t<3, T>& q2, E epsilon) {
  const vec_t<3, T> d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const T a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
  const bool point1 = edge_value(a) <= edge_value(T(epsilon)), point2 = edge_value(e) <= edge_value(T(epsilon));
  T s = T(0), t = T(0);
  if (point1 && !point2) {
    t = edge_unit_clamp(f / e);
  } else if (point2 && !point1) {
    s = edge_unit_clamp(-dot(d1, r) / a);
  } else if (!point1) {
    const T b = dot(d1, d2), c = dot(d1, r);
    const T denom = edge_diff_product(a, e, b, b);
    T s0 = T(0);
    if (edge_value(denom) > edge_value(T(0))) {
      T unclamped = edge_diff_product(b, f, c, e) / denom;
      if (!(edge_value(denom) > edge_value(T(1e-6) * a * e))) unclamped = edge_frozen(unclamped);
      s0 = edge_unit_clamp(unclamped);
    }
    const T t0 = (b * s0 + f) / e;
    if (edge_value(t0) < edge_value(T(0))) {
      s = edge_unit_clamp(-c / a);
    } else if (edge_value(t0) > edge_value(T(1))) {
      s = edge_unit_clamp((b - c) / a);
      t = T(1);
    } else {
      s = s0;
      t = t0;
    }
  }
  const vec_t<3, T> gap = (p2 + d2 * t) - (p1 + d1 * s);
  return vec_t<3, T>{{s, t, sqrt(dot(gap, gap))}};
}
/// Reverse rule: one dual sweep per input lane (12), epsilon has no gradient (a threshold).
template <class T>
KJ_FUNC_BIG void adj_closest_point_edge_edge(const vec_t<3, T>& p1, const vec_t<3, T>& q1, const vec_t<3, T>& p2, const vec_t<3, T>& q2, T epsilon,
                                             const vec_t<3, T>&, vec_t<3, T>& adj_p1, vec_t<3, T>& adj_q1, vec_t<3, T>& adj_p2,
                                             vec_t<3, T>& adj_q2, T&, const vec_t<3, T>& adj_ret) {
  const vec_t<3, T>* in[4] = {&p1, &q1, &p2, &q2};
  vec_t<3, T>* out[4] = {&adj_p1, &adj_q1, &adj_p2, &adj_q2};
  KJ_NO_UNROLL for (int k = 0; k < 12; ++k) {
    dual_of<vec_t<3, T>> x[4];
    for (int j = 0; j < 4; ++j) x[j] = seed(*in[j], j == k / 3 ? k % 3 : -1);
    lane_add(*out[k / 3], k % 3, tangent_dot(closest_point_edge_edge(x[0], x[1], x[2], x[3], epsilon), adj_ret));
  }
}
}  // namespace kj

//@chunk tri_tri requires vec cross
namespace kj {
/// Signed distances (times |n|) of a, b, c to the plane through o with normal n; those
/// below 1e-6 in magnitude count as on the plane (Warp's absolute coplanarity tolerance).
template <class T>
KJ_FUNC vec_t<3, T> tri_plane_sides(const vec_t<3, T>& n, const vec_t<3, T>& o, const vec_t<3, T>& a, const vec_t<3, T>& b, const vec_t<3, T>& c) {
  const T w = dot(n, o);
  vec_t<3, T> d{{dot(n, a) - w, dot(n, b) - w, dot(n, c) - w}};
  for (int i = 0; i < 3; ++i) if (d.c[i] < T(1e-6) && d.c[i] > T(-1e-6)) d.c[i] = T(0);
  return d;
}
/// The interval that the triangle with projected vertices p and plane sides d cuts from the
/// two planes' common line: the two edges from the vertex alone on its side meet the plane at
/// p_k + (p_o - p_k) d_k / (d_k - d_o). Returns false when all three lie in the plane.
template <class T>
KJ_FUNC bool tri_line_interval(const vec_t<3, T>& p, const vec_t<3, T>& d, T& lo, T& hi) {
  int k;
  if (d.c[0] * d.c[1] > T(0)) k = 2;
  else if (d.c[0] * d.c[2] > T(0)) k = 1;
  else if (d.c[1] * d.c[2] > T(0) || d.c[0] != T(0)) k = 0;
  else if (d.c[1] != T(0)) k = 1;
  else if (d.c[2] != T(0)) k = 2;
  else return false;
  const int i = (k + 1) % 3, j = (k + 2) % 3;
  // The lone vertex's side differs from both others' (or they are on the plane): d_k - d_i != 0.
  lo = p.c[k] + (p.c[i] - p.c[k]) * (d.c[k] / (d.c[k] - d.c[i]));
  hi = p.c[k] + (p.c[j] - p.c[k]) * (d.c[k] / (d.c[k] - d.c[j]));
  if (lo > hi) { T x = lo; lo = hi; hi = x; }
  return true;
}
/// 2-D orientation of c against the line a->b, in the coordinates (u, v) of the projection.
template <class T> KJ_FUNC T tri_orient2(T au, T av, T bu, T bv, T cu, T cv) { return (bu - au) * (cv - av) - (bv - av) * (cu - au); }
/// Do the closed 2-D segments a-b and c-d meet (touching counts)?
template <class T>
KJ_FUNC bool tri_segments_meet(T au, T av, T bu, T bv, T cu, T cv, T du, T dv) {
  const T o1 = tri_orient2(au, av, bu, bv, cu, cv), o2 = tri_orient2(au, av, bu, bv, du, dv);
  const T o3 = tri_orient2(cu, cv, du, dv, au, av), o4 = tri_orient2(cu, cv, du, dv, bu, bv);
  if (((o1 > T(0) && o2 < T(0)) || (o1 < T(0) && o2 > T(0))) && ((o3 > T(0) && o4 < T(0)) || (o3 < T(0) && o4 > T(0)))) return true;
  // Collinear touching: an endpoint on the other segment.
  auto within = [](T xu, T xv, T yu, T yv, T zu, T zv) {
    return (zu >= (xu < yu ? xu : yu)) && (zu <= (xu < yu ? yu : xu)) && (zv >= (xv < yv ? xv : yv)) && (zv <= (xv < yv ? yv : xv));
  };
  return (o1 == T(0) && within(au, av, bu, bv, cu, cv)) || (o2 == T(0) && within(au, av, bu, bv, du, dv)) ||
         (o3 == T(0) && within(cu, cv, du, dv, au, av)) || (o4 == T(0) && within(cu, cv, du, dv, bu, bv));
}
/// Is the 2-D point x strictly inside triangle abc (either winding)?
template <class T>
KJ_FUNC bool tri_point_inside(T xu, T xv, T au, T av, T bu, T bv, T cu, T cv) {
  const T e0 = tri_orient2(au, av, bu, bv, xu, xv), e1 = tri_orient2(bu, bv, cu, cv, xu, xv), e2 = tri_orient2(cu, cv, au, av, xu, xv);
  return (e0 > T(0) && e1 > T(0) && e2 > T(0)) || (e0 < T(0) && e1 < T(0) && e2 < T(0));
}
/// Coplanar triangles: drop the axis along which the normal n is largest, then two triangles
/// overlap when an edge of one meets an edge of the other or one holds a vertex of the other.
template <class T>
KJ_FUNC_BIG int tri_tri_coplanar(const vec_t<3, T>& n, const vec_t<3, T>* v, const vec_t<3, T>* u) {
  const T ax = n.c[0] < T(0) ? -n.c[0] : n.c[0], ay = n.c[1] < T(0) ? -n.c[1] : n.c[1], az = n.c[2] < T(0) ? -n.c[2] : n.c[2];
  const int drop = (ax > ay && ax > az) ? 0 : (ay >= az ? 1 : 2);
  const int iu = drop == 0 ? 1 : 0, iv = drop == 2 ? 1 : 2;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      if (tri_segments_meet(v[a].c[iu], v[a].c[iv], v[(a + 1) % 3].c[iu], v[(a + 1) % 3].c[iv],
                            u[b].c[iu], u[b].c[iv], u[(b + 1) % 3].c[iu], u[(b + 1) % 3].c[iv])) return 1;
  if (tri_point_inside(v[0].c[iu], v[0].c[iv], u[0].c[iu], u[0].c[iv], u[1].c[iu], u[1].c[iv], u[2].c[iu], u[2].c[iv])) return 1;
  if (tri_point_inside(u[0].c[iu], u[0].c[iv], v[0].c[iu], v[0].c[iv], v[1].c[iu], v[1].c[iv], v[2].c[iu], v[2].c[iv])) return 1;
  return 0;
}
/// 1 when triangles (v0, v1, v2) and (u0, u1, u2) intersect or touch, else 0 (Moller's
/// interval test: each triangle must straddle the other's plane, then their intervals on the
/// planes' common line must overlap).
template <class T>
KJ_FUNC_BIG kj_int32 intersect_tri_tri(const vec_t<3, T>& v0, const vec_t<3, T>& v1, const vec_t<3, T>& v2,
                                       const vec_t<3, T>& u0, const vec_t<3, T>& u1, const vec_t<3, T>& u2) {
  const vec_t<3, T> nv = cross(v1 - v0, v2 - v0);
  const vec_t<3, T> du = tri_plane_sides(nv, v0, u0, u1, u2);
  if ((du.c[0] > T(0) && du.c[1] > T(0) && du.c[2] > T(0)) || (du.c[0] < T(0) && du.c[1] < T(0) && du.c[2] < T(0))) return 0;
  const vec_t<3, T> nu = cross(u1 - u0, u2 - u0);
  const vec_t<3, T> dv = tri_plane_sides(nu, u0, v0, v1, v2);
  if ((dv.c[0] > T(0) && dv.c[1] > T(0) && dv.c[2] > T(0)) || (dv.c[0] < T(0) && dv.c[1] < T(0) && dv.c[2] < T(0))) return 0;
  // Project onto the axis where the common line's direction is largest.
  const vec_t<3, T> line = cross(nv, nu);
  int axis = 0;
  T best = line.c[0] < T(0) ? -line.c[0] : line.c[0];
  for (int i = 1; i < 3; ++i) {
    const T m = line.c[i] < T(0) ? -line.c[i] : line.c[i];
    if (m > best) { best = m; axis = i; }
  }
  T vlo = T(0), vhi = T(0), ulo = T(0), uhi = T(0);
  const vec_t<3, T> pv{{v0.c[axis], v1.c[axis], v2.c[axis]}}, pu{{u0.c[axis], u1.c[axis], u2.c[axis]}};
  const vec_t<3, T> v[3] = {v0, v1, v2}, u[3] = {u0, u1, u2};
  if (!tri_line_interval(pv, dv, vlo, vhi)) return tri_tri_coplanar(nv, v, u);
  if (!tri_line_interval(pu, du, ulo, uhi)) return tri_tri_coplanar(nv, v, u);
  return (vhi < ulo || uhi < vlo) ? 0 : 1;
}
}  // namespace kj
