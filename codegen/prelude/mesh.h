// kjit prelude: mesh — the discrete half of the mesh and BVH queries (which face is closest;
// the box and watertight triangle tests of the ray queries, whose first-hit walks are in
// mesh_rays.h): BVH traversal over the node arrays kjit::Bvh / kjit::Mesh build, laid out as
// kjit/dsl/mesh.hpp's Mesh struct documents. No gradient flows here: the
// DSL recomputes the continuous results from the face's vertices (kjit/dsl/mesh.hpp).
//@chunk mesh requires vec array fma
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

/// Vertex k (0, 1, 2) of face f, as stored.
KJ_FUNC const vec_t<3, float>& mesh_face_point(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                               kj_int32 f, int k) {
  return elem(points, elem(indices, 3 * kj_int64(f) + k));
}

/// The point of face f closest to p.
template <class S>
KJ_FUNC vec_t<3, S> mesh_face_closest(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices, kj_int32 f,
                                      const vec_t<3, S>& p) {
  const vec_t<3, S> a = mesh_vec<S>(mesh_face_point(points, indices, f, 0));
  const vec_t<3, S> b = mesh_vec<S>(mesh_face_point(points, indices, f, 1));
  const vec_t<3, S> c = mesh_vec<S>(mesh_face_point(points, indices, f, 2));
  S u, v;
  triangle_closest(a, b, c, p, u, v);
  return a * u + b * v + c * (S(1) - u - v);
}

/// Squared distance from p to face f's closest point.
template <class S>
KJ_FUNC S mesh_face_dist2(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices, kj_int32 f,
                          const vec_t<3, S>& p) {
  const vec_t<3, S> q = mesh_face_closest(points, indices, f, p) - p;
  return mesh_dot(q, q);
}

/// The closest-face traversal's hook that widens nothing: mesh_closest_face's.
struct MeshClosestOnly {
  template <class S> KJ_FUNC S bound(S best, kj_int32) { return best; }
  template <class S> KJ_FUNC void seen(kj_int32, S, S) {}
  template <class S> KJ_FUNC void left_out(S) {}
};

/// The face whose closest point is nearest to p, strictly within max_dist (ties: the first the
/// traversal meets), or -1 when no face is that close. `wide` may open more of the tree than the
/// answer needs, for a query that gathers the faces near the closest one in the same walk:
/// boxes are opened while their distance is within wide.bound(best, face) (at least best),
/// wide.seen(k, key, best) sees every face measured (k: its position in the item lists; key: the
/// larger of its squared distance and its leaf box's) and wide.left_out(d2) every box or face
/// measured and not kept. The answer is the plain traversal's whatever `wide` opens: only the
/// boxes that traversal would open (distance within best when popped; a child's box lies in
/// its parent's, so it is never nearer) may change the best face.
template <class S, class Wide>
KJ_FUNC kj_int32 mesh_closest_walk(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                   const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                   const vec_t<3, S>& p, S max_dist, Wide& wide) {
  if (!nodes.data || !(max_dist >= S(0))) return -1;
  S best = max_dist * max_dist;
  kj_int32 face = -1;
  S bound = wide.bound(best, face);
  kj_int32 stack[kBvhStack];
  S near[kBvhStack];  // each stacked box's distance, measured when it was pushed
  int top = 0;
  stack[top] = 0;
  near[top++] = bvh_box_dist2(bounds, 0, p);
  while (top > 0) {
    --top;
    const S box = near[top];
    if (box > bound) { wide.left_out(box); continue; }  // a nearer face was found since
    const bool live = box <= best;  // a box the plain traversal opens
    const kj_int32 n = stack[top];
    const kj_int32 l = elem(nodes, 2 * kj_int64(n)), r = elem(nodes, 2 * kj_int64(n) + 1);
    if (l < 0) {  // a leaf: its items are nodes[-l - 1 .. -l - 1 + r)
      for (kj_int32 k = -l - 1; k < -l - 1 + r; ++k) {
        const kj_int32 f = elem(nodes, kj_int64(k));
        const S d2 = mesh_face_dist2(points, indices, f, p);
        if (live && d2 < best) { best = d2; face = f; bound = wide.bound(best, face); }
        wide.seen(k, mesh_max(d2, box), bound);
      }
      continue;
    }
    const S dl = bvh_box_dist2(bounds, l, p), dr = bvh_box_dist2(bounds, r, p);
    // The nearer child is popped first, so that `best` shrinks early.
    const bool left_first = dl <= dr;
    const kj_int32 near_n = left_first ? l : r, far_n = left_first ? r : l;
    const S near_d = left_first ? dl : dr, far_d = left_first ? dr : dl;
    if (far_d <= bound) { stack[top] = far_n; near[top++] = far_d; } else wide.left_out(far_d);
    if (near_d <= bound) { stack[top] = near_n; near[top++] = near_d; } else wide.left_out(near_d);
  }
  return face;
}

/// The face whose closest point is nearest to p, strictly within max_dist (ties: the first the
/// traversal meets), or -1 when no face is that close. Warp's mesh_query_point_no_sign's
/// discrete part.
template <class S>
KJ_FUNC kj_int32 mesh_closest_face(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                   const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                   const vec_t<3, S>& p, S max_dist) {
  MeshClosestOnly plain;
  return mesh_closest_walk(points, indices, bounds, nodes, p, max_dist, plain);
}

/// One axis of the ray/box slab test: narrows [t0, t1] to where the ray (origin o, 1/d inv on
/// this axis) lies between lo and hi. bvh_box_enter and ray_boxes_enter share it, so that the
/// ray tree's boxes give the binary tree's entry parameters bit for bit.
template <class S>
KJ_FUNC void ray_slab(S lo, S hi, S o, S inv, S tmax, S& t0, S& t1) {
  S a = (lo - o) * inv, b = (hi - o) * inv;
  if (a != a) a = -tmax - S(1);  // 0 * inf: the ray runs in the box's face plane
  if (b != b) b = tmax + S(1);
  t0 = mesh_max(t0, mesh_min(a, b));
  // Each slab's exit widened by 1 + 2 gamma(3) of float32 (Ize, "Robust BVH Ray Traversal"):
  // the rounded slab distances could otherwise shut out a box that a ray through a vertex or
  // edge on its boundary only touches, and the watertight test would never see its faces.
  t1 = mesh_min(t1, mesh_max(a, b) * S(1.00000072));
}

/// What a box test returns for a box the ray misses within [0, tmax]: past tmax.
template <class S> KJ_FUNC S ray_box_missed(S tmax) { return tmax + (tmax > S(0) ? tmax : S(1)); }

/// Ray parameter at which the ray (o, 1/d per axis) enters node n's box, or a value past
/// `tmax` when it misses the box within [0, tmax].
template <class S>
KJ_FUNC S bvh_box_enter(const array_t<vec_t<3, float> >& bounds, kj_int32 n, const vec_t<3, S>& o,
                        const vec_t<3, S>& inv, S tmax) {
  const vec_t<3, float>& lo = elem(bounds, 2 * kj_int64(n));
  const vec_t<3, float>& hi = elem(bounds, 2 * kj_int64(n) + 1);
  S t0 = S(0), t1 = tmax;
  for (int i = 0; i < 3; ++i) ray_slab(S(lo.c[i]), S(hi.c[i]), o.c[i], inv.c[i], tmax, t0, t1);
  return t0 <= t1 ? t0 : ray_box_missed(tmax);
}

/// |x| for the dominant-axis choice (a comparison, so -0 and 0 are alike).
template <class S> KJ_FUNC S mesh_abs(S x) { return x < S(0) ? -x : x; }
/// a*b - c*d with the rounding error of c*d recovered by an fma (Kahan's difference of
/// products): the edge functions' sign stays right for a ray passing close to an edge.
template <class S> KJ_FUNC S mesh_diff_product(S a, S b, S c, S d) {
  const S cd = c * d;
  return kj::fma(a, b, -cd) + kj::fma(-c, d, cd);
}

/// A ray set up for Woop, Benthin and Wald's watertight test (below): its axes permuted so that
/// its largest component is z (x and y swapped when it is negative, to keep the winding), the
/// shear that makes it run along +z, and its origin in the permuted axes. Computed once a ray,
/// not once a triangle: the divisions and the axis choice depend on the ray alone.
template <class S>
struct WoopRay {
  int kx, ky, kz;
  S sx, sy, sz, ox, oy, oz;
  WoopRay() = default;
  KJ_FUNC WoopRay(const vec_t<3, S>& o, const vec_t<3, S>& d) {
    kz = 0;
    S big = mesh_abs(d.c[0]);
    if (mesh_abs(d.c[1]) > big) { kz = 1; big = mesh_abs(d.c[1]); }
    if (mesh_abs(d.c[2]) > big) kz = 2;
    kx = kz == 2 ? 0 : kz + 1;
    ky = kx == 2 ? 0 : kx + 1;
    if (d.c[kz] < S(0)) { const int k = kx; kx = ky; ky = k; }
    sx = d.c[kx] / d.c[kz];
    sy = d.c[ky] / d.c[kz];
    sz = S(1) / d.c[kz];
    ox = o.c[kx];
    oy = o.c[ky];
    oz = o.c[kz];
  }
};

/// Woop, Benthin and Wald's watertight ray/triangle test (JCGT 2013, "Watertight Ray/Triangle
/// Intersection"), the test Warp's mesh ray queries use, for the ray `ray` set up: the vertices
/// are moved to the ray's origin, permuted and sheared so that the ray runs along +z through the
/// origin, and the 2D edge functions U, V, W of the sheared triangle decide the hit. The
/// vertices are read component by component in the permuted order (their float32 values, as
/// S). An edge function that is exactly 0 is recomputed in float64, so a ray through a shared
/// edge or vertex sees the same signs from every face there: it hits at least one of them (no
/// leak through a closed mesh), and a face whose edge functions are all 0 (the ray in its
/// plane) is missed. Returns whether the ray's line meets the triangle on the ray's side (t >= 0
/// up to the sign of 0), with t, the barycentrics (u weighs a, v weighs b) and det = U + V + W
/// (positive when the triangle is counter-clockwise as seen along the ray: its front). The DSL's
/// ray face result (kjit/dsl/mesh.hpp) computes the same t, u, v differentiably, operation for
/// operation.
template <class S>
KJ_FUNC bool ray_triangle_woop(const WoopRay<S>& ray, const vec_t<3, float>& a, const vec_t<3, float>& b,
                               const vec_t<3, float>& c, S& t, S& u, S& v, S& det) {
  const S az = S(a.c[ray.kz]) - ray.oz, bz = S(b.c[ray.kz]) - ray.oz, cz = S(c.c[ray.kz]) - ray.oz;
  const S ax = (S(a.c[ray.kx]) - ray.ox) - ray.sx * az, ay = (S(a.c[ray.ky]) - ray.oy) - ray.sy * az;
  const S bx = (S(b.c[ray.kx]) - ray.ox) - ray.sx * bz, by = (S(b.c[ray.ky]) - ray.oy) - ray.sy * bz;
  const S cx = (S(c.c[ray.kx]) - ray.ox) - ray.sx * cz, cy = (S(c.c[ray.ky]) - ray.oy) - ray.sy * cz;
  S eu = mesh_diff_product(cx, by, cy, bx), ev = mesh_diff_product(ax, cy, ay, cx),
    ew = mesh_diff_product(bx, ay, by, ax);
  if (eu == S(0) || ev == S(0) || ew == S(0)) {  // on an edge's line: decide in float64
    eu = S(double(cx) * double(by) - double(cy) * double(bx));
    ev = S(double(ax) * double(cy) - double(ay) * double(cx));
    ew = S(double(bx) * double(ay) - double(by) * double(ax));
  }
  if ((eu < S(0) || ev < S(0) || ew < S(0)) && (eu > S(0) || ev > S(0) || ew > S(0))) return false;
  det = eu + ev + ew;
  if (det == S(0)) return false;
  const S tt = eu * (ray.sz * az) + ev * (ray.sz * bz) + ew * (ray.sz * cz);
  if ((det < S(0) ? -tt : tt) < S(0)) return false;  // behind the origin (t's sign is tt's times det's)
  const S inv = S(1) / det;
  u = eu * inv;
  v = ev * inv;
  t = tt * inv;
  return true;
}

/// Whether the ray meets triangle (a, b, c) at t in [0, tmax), and t: the watertight test
/// above, with the bound Warp's traversals apply.
template <class S>
KJ_FUNC bool ray_triangle(const WoopRay<S>& ray, const vec_t<3, float>& a, const vec_t<3, float>& b,
                          const vec_t<3, float>& c, S tmax, S& t) {
  S u, v, det;
  return ray_triangle_woop(ray, a, b, c, t, u, v, det) && t >= S(0) && t < tmax;
}

/// Where the ray o + t d (t in [0, max_t)) enters the BVH's root box (past max_t: missed), and
/// in `inv` the inverse direction the box tests take: how every first-hit walk starts.
template <class S>
KJ_FUNC S ray_root_enter(const array_t<vec_t<3, float> >& bounds, const vec_t<3, S>& o, const vec_t<3, S>& d, S max_t,
                         vec_t<3, S>& inv) {
  for (int i = 0; i < 3; ++i) inv.c[i] = S(1) / d.c[i];
  return bvh_box_enter(bounds, 0, o, inv, max_t);
}

}  // namespace kj
