// kjit prelude: mesh — the discrete half of the mesh and BVH queries (which face is closest,
// which face a ray hits first): BVH traversal over the node arrays kjit::Bvh / kjit::Mesh
// build, laid out as kjit/dsl/mesh.hpp's Mesh struct documents. No gradient flows here: the
// DSL recomputes the continuous results from the face's vertices (kjit/dsl/mesh.hpp).
//@chunk mesh requires vec array
namespace kj {
/// The deepest a traversal's stack gets: the builder keeps every leaf at most 48 levels below
/// the root (SAH splits, median splits where SAH could go deeper), and a traversal holds at
/// most one node per level and the two children it just pushed.
constexpr int kBvhStack = 64;

template <class S> KJ_FUNC S mesh_min(S a, S b) { return a < b ? a : b; }
template <class S> KJ_FUNC S mesh_max(S a, S b) { return a < b ? b : a; }
template <class S> KJ_FUNC vec_t<3, S> mesh_vec(const vec_t<3, float>& v) {
  vec_t<3, S> r;
  for (int i = 0; i < 3; ++i) r.c[i] = S(v.c[i]);
  return r;
}
template <class S> KJ_FUNC S mesh_dot(const vec_t<3, S>& a, const vec_t<3, S>& b) {
  return a.c[0] * b.c[0] + a.c[1] * b.c[1] + a.c[2] * b.c[2];
}
template <class S> KJ_FUNC vec_t<3, S> mesh_cross(const vec_t<3, S>& a, const vec_t<3, S>& b) {
  vec_t<3, S> r;
  r.c[0] = a.c[1] * b.c[2] - a.c[2] * b.c[1];
  r.c[1] = a.c[2] * b.c[0] - a.c[0] * b.c[2];
  r.c[2] = a.c[0] * b.c[1] - a.c[1] * b.c[0];
  return r;
}

/// Squared distance from p to the box of node n (0 inside).
template <class S>
KJ_FUNC S bvh_box_dist2(const array_t<vec_t<3, float> >& bounds, kj_int32 n, const vec_t<3, S>& p) {
  const vec_t<3, float>& lo = elem(bounds, 2 * kj_int64(n));
  const vec_t<3, float>& hi = elem(bounds, 2 * kj_int64(n) + 1);
  S d2 = S(0);
  for (int i = 0; i < 3; ++i) {
    S d = mesh_max(mesh_max(S(lo.c[i]) - p.c[i], p.c[i] - S(hi.c[i])), S(0));
    d2 += d * d;
  }
  return d2;
}

/// Barycentrics (u, v) of the point of triangle (a, b, c) closest to p: the point is
/// u a + v b + (1 - u - v) c. Ericson's regions, rounded as Warp's closest_point_to_triangle; a
/// triangle of no area whose region test falls through takes the closest of its three edges.
/// kjit/dsl/mesh.hpp's triangle_closest_uv computes the same point, differentiably.
template <class S>
KJ_FUNC void triangle_closest(const vec_t<3, S>& a, const vec_t<3, S>& b, const vec_t<3, S>& c,
                              const vec_t<3, S>& p, S& u, S& v) {
  const vec_t<3, S> ab = b - a, ac = c - a, ap = p - a;
  const S d1 = mesh_dot(ab, ap), d2 = mesh_dot(ac, ap);
  if (d1 <= S(0) && d2 <= S(0)) { u = S(1); v = S(0); return; }
  const vec_t<3, S> bp = p - b;
  const S d3 = mesh_dot(ab, bp), d4 = mesh_dot(ac, bp);
  if (d3 >= S(0) && d4 <= d3) { u = S(0); v = S(1); return; }
  const S vc = d1 * d4 - d3 * d2;
  if (vc <= S(0) && d1 >= S(0) && d3 <= S(0) && d1 - d3 > S(0)) { v = d1 / (d1 - d3); u = S(1) - v; return; }
  const vec_t<3, S> cp = p - c;
  const S d5 = mesh_dot(ab, cp), d6 = mesh_dot(ac, cp);
  if (d6 >= S(0) && d5 <= d6) { u = S(0); v = S(0); return; }
  const S vb = d5 * d2 - d1 * d6;
  if (vb <= S(0) && d2 >= S(0) && d6 <= S(0) && d2 - d6 > S(0)) { v = S(0); u = S(1) - d2 / (d2 - d6); return; }
  const S va = d3 * d6 - d5 * d4;
  if (va <= S(0) && (d4 - d3) >= S(0) && (d5 - d6) >= S(0) && (d4 - d3) + (d5 - d6) > S(0)) {
    const S w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    v = S(1) - w; u = S(1) - v - w; return;  // u is 0 but for rounding, as Warp's
  }
  // den is |ab x ac|^2 = |ab|^2 |ac|^2 sin^2(angle at a): below 1e-6 of |ab|^2 |ac|^2 (a
  // sliver under 0.06 degrees, or no area) vb / den and vc / den are rounding noise, in
  // float32 as in float64, so the closest of the edges AB, AC, BC is taken instead (each
  // parameter clamped to [0, 1]; a zero-length edge takes 0): off by at most the sliver's width.
  const S den = va + vb + vc;
  const S lab = mesh_dot(ab, ab), lac = mesh_dot(ac, ac);
  if (den > S(1e-6) * lab * lac) {  // rounded as Warp's: the reciprocal, then two products
    const S inv = S(1) / den;
    v = vb * inv; u = S(1) - v - vc * inv; return;
  }
  const vec_t<3, S> bc = c - b;
  const S lbc = mesh_dot(bc, bc);
  const S t0 = lab > S(0) ? mesh_min(mesh_max(d1 / lab, S(0)), S(1)) : S(0);
  const S t1 = lac > S(0) ? mesh_min(mesh_max(d2 / lac, S(0)), S(1)) : S(0);
  const S t2 = lbc > S(0) ? mesh_min(mesh_max(mesh_dot(bc, bp) / lbc, S(0)), S(1)) : S(0);
  const vec_t<3, S> e0 = ap - ab * t0, e1 = ap - ac * t1, e2 = bp - bc * t2;
  const S q0 = mesh_dot(e0, e0), q1 = mesh_dot(e1, e1), q2 = mesh_dot(e2, e2);
  if (q0 <= q1 && q0 <= q2) { u = S(1) - t0; v = t0; }
  else if (q1 <= q2) { u = S(1) - t1; v = S(0); }
  else { u = S(0); v = S(1) - t2; }
}

/// Squared distance from p to face f's closest point.
template <class S>
KJ_FUNC S mesh_face_dist2(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices, kj_int32 f,
                          const vec_t<3, S>& p) {
  const vec_t<3, S> a = mesh_vec<S>(elem(points, elem(indices, 3 * kj_int64(f))));
  const vec_t<3, S> b = mesh_vec<S>(elem(points, elem(indices, 3 * kj_int64(f) + 1)));
  const vec_t<3, S> c = mesh_vec<S>(elem(points, elem(indices, 3 * kj_int64(f) + 2)));
  S u, v;
  triangle_closest(a, b, c, p, u, v);
  const vec_t<3, S> q = a * u + b * v + c * (S(1) - u - v) - p;
  return mesh_dot(q, q);
}

/// The face whose closest point is nearest to p, strictly within max_dist (ties: the first the
/// traversal meets), or -1 when no face is that close. Warp's mesh_query_point_no_sign's
/// discrete part.
template <class S>
KJ_FUNC kj_int32 mesh_closest_face(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                   const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                   const vec_t<3, S>& p, S max_dist) {
  if (!nodes.data || !(max_dist >= S(0))) return -1;
  S best = max_dist * max_dist;
  kj_int32 face = -1;
  kj_int32 stack[kBvhStack];
  S near[kBvhStack];  // each stacked box's distance, measured when it was pushed
  int top = 0;
  stack[top] = 0;
  near[top++] = bvh_box_dist2(bounds, 0, p);
  while (top > 0) {
    --top;
    if (near[top] > best) continue;  // a nearer face was found since
    const kj_int32 n = stack[top];
    const kj_int32 l = elem(nodes, 2 * kj_int64(n)), r = elem(nodes, 2 * kj_int64(n) + 1);
    if (l < 0) {  // a leaf: its items are nodes[-l - 1 .. -l - 1 + r)
      for (kj_int32 k = -l - 1; k < -l - 1 + r; ++k) {
        const kj_int32 f = elem(nodes, kj_int64(k));
        const S d2 = mesh_face_dist2(points, indices, f, p);
        if (d2 < best) { best = d2; face = f; }
      }
      continue;
    }
    const S dl = bvh_box_dist2(bounds, l, p), dr = bvh_box_dist2(bounds, r, p);
    // The nearer child is popped first, so that `best` shrinks early.
    const bool left_first = dl <= dr;
    const kj_int32 near_n = left_first ? l : r, far_n = left_first ? r : l;
    const S near_d = left_first ? dl : dr, far_d = left_first ? dr : dl;
    if (far_d <= best) { stack[top] = far_n; near[top++] = far_d; }
    if (near_d <= best) { stack[top] = near_n; near[top++] = near_d; }
  }
  return face;
}

/// Ray parameter at which the ray (o, 1/d per axis) enters node n's box, or a value past
/// `tmax` when it misses the box within [0, tmax].
template <class S>
KJ_FUNC S bvh_box_enter(const array_t<vec_t<3, float> >& bounds, kj_int32 n, const vec_t<3, S>& o,
                        const vec_t<3, S>& inv, S tmax) {
  const vec_t<3, float>& lo = elem(bounds, 2 * kj_int64(n));
  const vec_t<3, float>& hi = elem(bounds, 2 * kj_int64(n) + 1);
  S t0 = S(0), t1 = tmax;
  for (int i = 0; i < 3; ++i) {
    S a = (S(lo.c[i]) - o.c[i]) * inv.c[i], b = (S(hi.c[i]) - o.c[i]) * inv.c[i];
    if (a != a) a = -tmax - S(1);  // 0 * inf: the ray runs in the box's face plane
    if (b != b) b = tmax + S(1);
    t0 = mesh_max(t0, mesh_min(a, b));
    t1 = mesh_min(t1, mesh_max(a, b));
  }
  return t0 <= t1 ? t0 : tmax + (tmax > S(0) ? tmax : S(1));
}

/// Möller–Trumbore: whether the ray o + t d meets triangle (a, b, c) at t in [0, tmax), and t.
/// The DSL's ray_triangle_tuv computes the same t, u, v differentiably.
template <class S>
KJ_FUNC bool ray_triangle(const vec_t<3, S>& o, const vec_t<3, S>& d, const vec_t<3, S>& a, const vec_t<3, S>& b,
                          const vec_t<3, S>& c, S tmax, S& t) {
  const vec_t<3, S> e1 = b - a, e2 = c - a;
  const vec_t<3, S> q = mesh_cross(d, e2);
  const S det = mesh_dot(e1, q);
  if (det == S(0) || det != det) return false;
  const S inv = S(1) / det;
  const vec_t<3, S> s = o - a;
  const S v = mesh_dot(s, q) * inv;
  if (!(v >= S(0) && v <= S(1))) return false;
  const vec_t<3, S> r = mesh_cross(s, e1);
  const S w = mesh_dot(d, r) * inv;
  if (!(w >= S(0) && v + w <= S(1))) return false;
  t = mesh_dot(e2, r) * inv;
  return t >= S(0) && t < tmax;
}

/// The face the ray o + t d (t in [0, max_t)) meets first, or -1. Warp's mesh_query_ray's
/// discrete part.
template <class S>
KJ_FUNC kj_int32 mesh_first_hit(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                const vec_t<3, S>& o, const vec_t<3, S>& d, S max_t) {
  if (!nodes.data || !(max_t > S(0))) return -1;
  vec_t<3, S> inv;
  for (int i = 0; i < 3; ++i) inv.c[i] = S(1) / d.c[i];
  S best = max_t;
  kj_int32 face = -1;
  kj_int32 stack[kBvhStack];
  S enter[kBvhStack];  // where the ray enters each stacked box: skipped once a hit is nearer
  int top = 0;
  const S t_root = bvh_box_enter(bounds, 0, o, inv, best);
  if (t_root <= best) { stack[top] = 0; enter[top++] = t_root; }
  while (top > 0) {
    --top;
    const kj_int32 n = stack[top];
    if (enter[top] > best) continue;
    const kj_int32 l = elem(nodes, 2 * kj_int64(n)), r = elem(nodes, 2 * kj_int64(n) + 1);
    if (l < 0) {
      for (kj_int32 k = -l - 1; k < -l - 1 + r; ++k) {
        const kj_int32 f = elem(nodes, kj_int64(k));
        const vec_t<3, S> a = mesh_vec<S>(elem(points, elem(indices, 3 * kj_int64(f))));
        const vec_t<3, S> b = mesh_vec<S>(elem(points, elem(indices, 3 * kj_int64(f) + 1)));
        const vec_t<3, S> c = mesh_vec<S>(elem(points, elem(indices, 3 * kj_int64(f) + 2)));
        S t;
        if (ray_triangle(o, d, a, b, c, best, t)) { best = t; face = f; }
      }
      continue;
    }
    const S tl = bvh_box_enter(bounds, l, o, inv, best), tr = bvh_box_enter(bounds, r, o, inv, best);
    const bool left_first = tl <= tr;  // the nearer box is popped first
    const kj_int32 near_n = left_first ? l : r, far_n = left_first ? r : l;
    const S near_t = left_first ? tl : tr, far_t = left_first ? tr : tl;
    if (far_t <= best) { stack[top] = far_n; enter[top++] = far_t; }
    if (near_t <= best) { stack[top] = near_n; enter[top++] = near_t; }
  }
  return face;
}
}  // namespace kj
