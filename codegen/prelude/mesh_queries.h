// kjit prelude: mesh_queries — the discrete halves of the mesh and BVH queries beyond the
// closest face and the first hit (kjit/dsl/mesh_queries.hpp): the furthest face, ray hit counts,
// inside/outside signs, and the leaf walks that the box and ray loops of mesh_query_aabb and
// bvh_query_aabb / bvh_query_ray resume from. No gradient flows here.
//@chunk mesh_queries requires mesh_rays math
namespace kj {
/// The length of the sign rays: finite (a box the ray misses reports an entry past it, which an
/// infinite length would not), and past any float32 mesh.
constexpr float kMeshRayFar = 3.0e38f;

/// Vertex k (0, 1, 2) of face f.
template <class S>
KJ_FUNC vec_t<3, S> mesh_face_vertex(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices, kj_int32 f,
                                     int k) {
  return mesh_vec<S>(mesh_face_point(points, indices, f, k));
}

/// Squared distance from p to the farthest corner of node n's box.
template <class S>
KJ_FUNC S bvh_box_far2(const array_t<vec_t<3, float> >& bounds, kj_int32 n, const vec_t<3, S>& p) {
  const vec_t<3, float>& lo = elem(bounds, 2 * kj_int64(n));
  const vec_t<3, float>& hi = elem(bounds, 2 * kj_int64(n) + 1);
  S d2 = S(0);
  for (int i = 0; i < 3; ++i) {
    const S d = mesh_max(p.c[i] - S(lo.c[i]), S(hi.c[i]) - p.c[i]);
    d2 += d * d;
  }
  return d2;
}

/// The face with the vertex furthest from p, strictly further than min_dist (ties: the first the
/// traversal meets), or -1. The furthest point of a triangle is one of its vertices.
template <class S>
KJ_FUNC kj_int32 mesh_furthest_face(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                    const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                    const vec_t<3, S>& p, S min_dist) {
  if (!nodes.data || min_dist != min_dist) return -1;
  S best = min_dist > S(0) ? min_dist * min_dist : S(-1);
  kj_int32 face = -1;
  kj_int32 stack[kBvhStack];
  S far[kBvhStack];
  int top = 0;
  stack[top] = 0;
  far[top++] = bvh_box_far2(bounds, 0, p);
  while (top > 0) {
    --top;
    if (!(far[top] > best)) continue;
    const kj_int32 n = stack[top];
    const kj_int32 l = elem(nodes, 2 * kj_int64(n)), r = elem(nodes, 2 * kj_int64(n) + 1);
    if (l < 0) {
      for (kj_int32 k = -l - 1; k < -l - 1 + r; ++k) {
        const kj_int32 f = elem(nodes, kj_int64(k));
        for (int c = 0; c < 3; ++c) {
          const vec_t<3, S> q = mesh_face_vertex<S>(points, indices, f, c) - p;
          const S d2 = mesh_dot(q, q);
          if (d2 > best) { best = d2; face = f; }
        }
      }
      continue;
    }
    const S fl = bvh_box_far2(bounds, l, p), fr = bvh_box_far2(bounds, r, p);
    const bool left_first = fl >= fr;  // the farther box is popped first
    const kj_int32 first = left_first ? l : r, second = left_first ? r : l;
    const S first_d = left_first ? fl : fr, second_d = left_first ? fr : fl;
    if (second_d > best) { stack[top] = second; far[top++] = second_d; }
    if (first_d > best) { stack[top] = first; far[top++] = first_d; }
  }
  return face;
}

/// How many faces the ray o + t d meets at t in [0, max_t) (each face once; a ray through a
/// shared edge or vertex meets each face there that rounding lets it meet), or, with `any`,
/// 1 as soon as one is met.
template <class S>
KJ_FUNC kj_int32 mesh_ray_hits(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                               const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                               const vec_t<3, S>& o, const vec_t<3, S>& d, S max_t, bool any) {
  if (!nodes.data || !(max_t > S(0))) return 0;
  vec_t<3, S> inv;
  const S t_root = ray_root_enter(bounds, o, d, max_t, inv);
  const WoopRay<S> ray(o, d);
  kj_int32 hits = 0;
  kj_int32 stack[kBvhStack];
  int top = 0;
  if (t_root <= max_t) stack[top++] = 0;
  while (top > 0) {
    const kj_int32 n = stack[--top];
    const kj_int32 l = elem(nodes, 2 * kj_int64(n)), r = elem(nodes, 2 * kj_int64(n) + 1);
    if (l < 0) {
      for (kj_int32 k = -l - 1; k < -l - 1 + r; ++k) {
        const kj_int32 f = elem(nodes, kj_int64(k));
        S t;
        if (ray_triangle(ray, mesh_face_point(points, indices, f, 0), mesh_face_point(points, indices, f, 1),
                         mesh_face_point(points, indices, f, 2), max_t, t)) {
          if (any) return 1;
          ++hits;
        }
      }
      continue;
    }
    if (bvh_box_enter(bounds, r, o, inv, max_t) <= max_t) stack[top++] = r;
    if (bvh_box_enter(bounds, l, o, inv, max_t) <= max_t) stack[top++] = l;
  }
  return hits;
}

/// mesh_ray_hits counting every face (mesh_query_ray_count_intersections).
template <class S>
KJ_FUNC kj_int32 mesh_ray_count(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                const vec_t<3, S>& o, const vec_t<3, S>& d, S max_t) {
  return mesh_ray_hits(points, indices, bounds, nodes, o, d, max_t, false);
}
/// mesh_ray_hits stopping at the first face met (mesh_query_ray_anyhit): 1 or 0.
template <class S>
KJ_FUNC kj_int32 mesh_ray_any(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                              const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                              const vec_t<3, S>& o, const vec_t<3, S>& d, S max_t) {
  return mesh_ray_hits(points, indices, bounds, nodes, o, d, max_t, true);
}

/// Whether the ray o + t d (t >= 0) first meets a face from behind (its clockwise side): 1, or
/// 0 when it meets one from the front or meets none.
template <class S>
KJ_FUNC int mesh_ray_enters_behind(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                   const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                   const vec_t<3, S>& o, const vec_t<3, S>& d) {
  const kj_int32 f = mesh_first_hit(points, indices, bounds, nodes, array_t<kj_int32>(), o, d, S(kMeshRayFar));
  if (f < 0) return 0;
  S t, u, v, det;  // the side the watertight test saw (the face was hit, so det is not 0)
  return ray_triangle_woop(WoopRay<S>(o, d), mesh_face_point(points, indices, f, 0), mesh_face_point(points, indices, f, 1),
                           mesh_face_point(points, indices, f, 2), t, u, v, det) && det < S(0) ? 1 : 0;
}

/// The sign of mesh_query_point (Warp's default): -1 when at least two of the rays along +x, +y
/// and +z from p first meet a face from behind, else 1 (a majority vote: one ray through a hole
/// or along an edge does not flip the answer).
template <class S>
KJ_FUNC S mesh_sign_rays(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                         const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                         const vec_t<3, S>& p) {
  int votes = 0;
  for (int axis = 0; axis < 3; ++axis) {
    vec_t<3, S> d;
    for (int i = 0; i < 3; ++i) d.c[i] = S(i == axis ? 1 : 0);
    votes += mesh_ray_enters_behind(points, indices, bounds, nodes, p, d);
  }
  return votes >= 2 ? S(-1) : S(1);
}

/// The sign of mesh_query_point_sign_parity: -1 when a ray from p crosses the faces an odd number
/// of times, else 1. The ray runs along a fixed direction off the axes, so that it rarely meets an
/// edge or vertex of a mesh aligned with them.
template <class S>
KJ_FUNC S mesh_sign_parity(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                           const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                           const vec_t<3, S>& p) {
  vec_t<3, S> d;
  d.c[0] = S(0.5773126f);
  d.c[1] = S(0.5774912f);
  d.c[2] = S(0.5773778f);
  return (mesh_ray_hits(points, indices, bounds, nodes, p, d, S(kMeshRayFar), false) & 1) ? S(-1) : S(1);
}

/// Adds face f's unit normal into n, weighted by the angle its closest feature to p subtends
/// within the face: 2 pi for the interior, pi for an edge, the corner's angle for a vertex (the
/// angle-weighted pseudo-normal, whose sign is right at edges and vertices too). `tol` decides
/// "on an edge / at a vertex". Slivers (|normal| under 1e-6 of the squared edges) add nothing.
template <class S>
KJ_FUNC void mesh_add_pseudo_normal(const vec_t<3, S>& a, const vec_t<3, S>& b, const vec_t<3, S>& c,
                                    const vec_t<3, S>& p, S tol, vec_t<3, S>& n) {
  const vec_t<3, S> e0 = b - a, e1 = c - a, e2 = c - b, nf = mesh_cross(e0, e1);
  const S l0 = mesh_dot(e0, e0), l1 = mesh_dot(e1, e1), l2 = mesh_dot(e2, e2);
  const S area2 = sqrt(mesh_dot(nf, nf));
  if (!(area2 > S(1e-6) * (l0 + l1 + l2))) return;
  S u, v;
  triangle_closest(a, b, c, p, u, v);
  const S w = S(1) - u - v, tol2 = tol * tol;
  const vec_t<3, S> q = a * u + b * v + c * w;
  const vec_t<3, S> qa = q - a, qb = q - b, qc = q - c;
  auto corner = [](const vec_t<3, S>& x, const vec_t<3, S>& y) {
    const S cs = mesh_dot(x, y) / sqrt(mesh_dot(x, x) * mesh_dot(y, y));
    return acos(mesh_min(mesh_max(cs, S(-1)), S(1)));
  };
  // The squared distance of q from the line of edge e through x: |x q|^2 - (e . x q)^2 / |e|^2.
  auto off_line = [](const vec_t<3, S>& xq, const vec_t<3, S>& e, S le) { const S d = mesh_dot(e, xq); return mesh_dot(xq, xq) - d * d / le; };
  S weight = S(2) * S(3.14159265358979);
  if (mesh_dot(qa, qa) < tol2) weight = corner(e0, e1);
  else if (mesh_dot(qb, qb) < tol2) weight = corner(e2, a - b);
  else if (mesh_dot(qc, qc) < tol2) weight = corner(a - c, b - c);
  else if (off_line(qa, e0, l0) < tol2 || off_line(qa, e1, l1) < tol2 || off_line(qb, e2, l2) < tol2)
    weight = S(3.14159265358979);
  n = n + nf * (weight / area2);
}

/// The tolerance of mesh_query_point_sign_normal around closest face f: epsilon times f's mean
/// edge length.
template <class S>
KJ_FUNC S mesh_sign_normal_tol(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices, kj_int32 f,
                               S epsilon) {
  const vec_t<3, S> a = mesh_face_vertex<S>(points, indices, f, 0), b = mesh_face_vertex<S>(points, indices, f, 1),
                    c = mesh_face_vertex<S>(points, indices, f, 2);
  return epsilon * (sqrt(mesh_dot(b - a, b - a)) + sqrt(mesh_dot(c - a, c - a)) + sqrt(mesh_dot(c - b, c - b))) / S(3);
}

/// The square of sqrt(d2) + tol: how far around a face at squared distance d2 from p the sign
/// gathers faces.
template <class S> KJ_FUNC S mesh_reach2(S d2, S tol) {
  const S reach = sqrt(d2) + tol;
  return reach * reach;
}

/// The sign of mesh_query_point_sign_normal for closest face f: -1 when p lies behind the
/// angle-weighted pseudo-normal of the faces as close to p as f (within epsilon times f's mean
/// edge length), else 1. The faces are gathered by a traversal of their own, in depth-first
/// order, so the answer does not depend on the order the tree holds them in. The fallback of
/// mesh_closest_sign_normal, which gathers them while it looks for f.
template <class S>
KJ_FUNC_BIG S mesh_sign_normal(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                               const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                               const vec_t<3, S>& p, kj_int32 f, S epsilon) {
  if (!nodes.data || f < 0) return S(1);
  auto vertex = [&](kj_int32 g, int k) { return mesh_face_vertex<S>(points, indices, g, k); };
  const S tol = mesh_sign_normal_tol(points, indices, f, epsilon);
  const vec_t<3, S> q = mesh_face_closest(points, indices, f, p);
  const S reach2 = mesh_reach2(mesh_dot(q - p, q - p), tol);
  vec_t<3, S> n;
  for (int i = 0; i < 3; ++i) n.c[i] = S(0);
  kj_int32 stack[kBvhStack];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const kj_int32 m = stack[--top];
    if (bvh_box_dist2(bounds, m, p) > reach2) continue;
    const kj_int32 l = elem(nodes, 2 * kj_int64(m)), r = elem(nodes, 2 * kj_int64(m) + 1);
    if (l >= 0) { stack[top++] = r; stack[top++] = l; continue; }
    for (kj_int32 k = -l - 1; k < -l - 1 + r; ++k) {
      const kj_int32 g = elem(nodes, kj_int64(k));
      if (mesh_face_dist2(points, indices, g, p) <= reach2)
        mesh_add_pseudo_normal(vertex(g, 0), vertex(g, 1), vertex(g, 2), p, tol, n);
    }
  }
  return mesh_dot(p - q, n) < S(0) ? S(-1) : S(1);
}

/// The faces near the closest one, gathered during the closest-face traversal
/// (mesh_closest_walk's hook): the traversal opens every box within the reach of the best face
/// so far (its distance plus its tolerance), and up to kNear faces within that reach are kept
/// with their key (squared distance, at least their leaf box's); anything measured and not kept
/// lowers `missed`. The reach of the final face can exceed an earlier one (a larger face has a
/// larger tolerance): the gathering is complete when nothing left out is within it.
template <class S>
struct MeshNearFaces {
  static constexpr int kNear = 8;
  const array_t<vec_t<3, float> >& points;
  const array_t<kj_int32>& indices;
  S epsilon;
  S missed = S(3.0e38f);
  int count = 0;
  bool overflow = false;
  kj_int32 at[kNear];  // positions in the item lists
  S key[kNear];

  KJ_FUNC MeshNearFaces(const array_t<vec_t<3, float> >& pts, const array_t<kj_int32>& idx, S eps)
      : points(pts), indices(idx), epsilon(eps) {}

  KJ_FUNC S bound(S best, kj_int32 face) {
    return face < 0 ? best : mesh_reach2(best, mesh_sign_normal_tol(points, indices, face, epsilon));
  }
  KJ_FUNC void seen(kj_int32 k, S d2, S within) {
    if (d2 > within) { left_out(d2); return; }
    if (count == kNear) {  // drop the entries the reach has shrunk past
      int kept = 0;
      for (int i = 0; i < count; ++i) {
        if (key[i] > within) { left_out(key[i]); continue; }
        at[kept] = at[i];
        key[kept++] = key[i];
      }
      count = kept;
      if (count == kNear) { overflow = true; return; }
    }
    at[count] = k;
    key[count++] = d2;
  }
  KJ_FUNC void left_out(S d2) { missed = mesh_min(missed, d2); }
};

/// mesh_query_point_sign_normal's discrete part in one traversal: the closest face strictly
/// within max_dist as mesh_closest_face finds it, and the sign mesh_sign_normal gives it, encoded
/// as one int32: -1 for no face, f for face f with sign 1, -(f + 2) for face f with sign -1.
/// The faces within reach are summed in the order of their positions in the item lists (the
/// order of mesh_sign_normal's depth-first walk over the trees kjit builds), so the sign has the
/// same bits as that walk's; where the gathering was incomplete (more than kNear faces within
/// reach, or a face or box left out that the final reach covers) that walk runs instead.
template <class S>
KJ_FUNC kj_int32 mesh_closest_sign_normal(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                                          const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                          const vec_t<3, S>& p, S max_dist, S epsilon) {
  MeshNearFaces<S> near(points, indices, epsilon);
  const kj_int32 f = mesh_closest_walk(points, indices, bounds, nodes, p, max_dist, near);
  if (f < 0) return -1;
  S sign;
  const S tol = mesh_sign_normal_tol(points, indices, f, epsilon);
  const vec_t<3, S> q = mesh_face_closest(points, indices, f, p);
  const S reach2 = mesh_reach2(mesh_dot(q - p, q - p), tol);  // near.bound's for f
  if (near.overflow || near.missed <= reach2) {
    sign = mesh_sign_normal(points, indices, bounds, nodes, p, f, epsilon);
  } else {
    // Insertion sort by position: at most kNear entries.
    for (int i = 1; i < near.count; ++i)
      for (int j = i; j > 0 && near.at[j - 1] > near.at[j]; --j) {
        const kj_int32 k = near.at[j]; near.at[j] = near.at[j - 1]; near.at[j - 1] = k;
        const S d = near.key[j]; near.key[j] = near.key[j - 1]; near.key[j - 1] = d;
      }
    auto vertex = [&](kj_int32 g, int k) { return mesh_face_vertex<S>(points, indices, g, k); };
    vec_t<3, S> n;
    for (int i = 0; i < 3; ++i) n.c[i] = S(0);
    for (int i = 0; i < near.count; ++i) {
      if (near.key[i] > reach2) continue;
      const kj_int32 g = elem(nodes, kj_int64(near.at[i]));
      mesh_add_pseudo_normal(vertex(g, 0), vertex(g, 1), vertex(g, 2), p, tol, n);
    }
    sign = mesh_dot(p - q, n) < S(0) ? S(-1) : S(1);
  }
  return sign < S(0) ? -(f + 2) : f;
}

/// The end of node n's subtree in the depth-first layout kjit/dsl/mesh.hpp documents: a subtree
/// is a contiguous range of nodes that starts at its root, so it ends after the leaf reached by
/// always taking the later child.
KJ_FUNC kj_int32 bvh_subtree_end(const array_t<kj_int32>& nodes, kj_int32 n) {
  for (;;) {
    const kj_int32 l = elem(nodes, 2 * kj_int64(n)), r = elem(nodes, 2 * kj_int64(n) + 1);
    if (l < 0) return n + 1;
    n = l < r ? r : l;
  }
}

/// Whether node n's box overlaps the box [lo, hi] (touching counts).
template <class S>
KJ_FUNC bool bvh_box_overlaps(const array_t<vec_t<3, float> >& bounds, kj_int32 n, const vec_t<3, S>& lo,
                              const vec_t<3, S>& hi) {
  const vec_t<3, float>& a = elem(bounds, 2 * kj_int64(n));
  const vec_t<3, float>& b = elem(bounds, 2 * kj_int64(n) + 1);
  for (int i = 0; i < 3; ++i)
    if (!(S(a.c[i]) <= hi.c[i] && lo.c[i] <= S(b.c[i]))) return false;
  return true;
}

/// The next leaf after leaf `after` (-1: from the start), in depth-first order, whose box
/// overlaps [lo, hi]; -1 when none is left. A walk without a stack: a box that misses skips its
/// subtree, so a query can resume from the leaf it stopped at (mesh_query_aabb_next).
template <class S>
KJ_FUNC kj_int32 bvh_next_leaf_box(const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                   const vec_t<3, S>& lo, const vec_t<3, S>& hi, kj_int32 after) {
  if (!nodes.data) return -1;
  const kj_int32 end = bvh_subtree_end(nodes, 0);
  kj_int32 n = after < 0 ? 0 : after + 1;
  while (n < end) {
    if (!bvh_box_overlaps(bounds, n, lo, hi)) { n = bvh_subtree_end(nodes, n); continue; }
    if (elem(nodes, 2 * kj_int64(n)) < 0) return n;
    ++n;  // the first child follows its parent
  }
  return -1;
}

/// The same walk for the leaves whose box the ray o + t d meets at some t in [0, max_t].
template <class S>
KJ_FUNC kj_int32 bvh_next_leaf_ray(const array_t<vec_t<3, float> >& bounds, const array_t<kj_int32>& nodes,
                                   const vec_t<3, S>& o, const vec_t<3, S>& d, S max_t, kj_int32 after) {
  if (!nodes.data || !(max_t >= S(0))) return -1;
  vec_t<3, S> inv;
  for (int i = 0; i < 3; ++i) inv.c[i] = S(1) / d.c[i];
  const kj_int32 end = bvh_subtree_end(nodes, 0);
  kj_int32 n = after < 0 ? 0 : after + 1;
  while (n < end) {
    if (!(bvh_box_enter(bounds, n, o, inv, max_t) <= max_t)) { n = bvh_subtree_end(nodes, n); continue; }
    if (elem(nodes, 2 * kj_int64(n)) < 0) return n;
    ++n;
  }
  return -1;
}
}  // namespace kj

//@chunk mesh_winding requires mesh math status
// The generalized winding number of a mesh built with winding-number support (Barill et al.'s
// fast winding number, first order): far from a node the node's triangles count as one dipole.
namespace kj {
/// The status a winding-number query reports on a mesh without its data (beside the status
/// chunk's codes; the runtime's list of codes names it).
constexpr kj_int32 kStatusNoWindingData = 0x7fff0004;

/// The solid angle triangle (a, b, c) subtends at p, signed: positive where the triangle turns
/// counter-clockwise seen from p (Van Oosterom and Strackee).
template <class S>
KJ_FUNC S triangle_solid_angle(const vec_t<3, S>& a0, const vec_t<3, S>& b0, const vec_t<3, S>& c0, const vec_t<3, S>& p) {
  const vec_t<3, S> a = a0 - p, b = b0 - p, c = c0 - p;
  const S la = sqrt(mesh_dot(a, a)), lb = sqrt(mesh_dot(b, b)), lc = sqrt(mesh_dot(c, c));
  const S num = mesh_dot(a, mesh_cross(b, c));
  const S den = la * lb * lc + mesh_dot(a, b) * lc + mesh_dot(b, c) * la + mesh_dot(c, a) * lb;
  return S(2) * atan2(num, den);
}

/// The winding number of the mesh around p: 1 inside a closed mesh whose faces turn
/// counter-clockwise seen from outside, 0 outside. `winding` holds three vec3f per node (the sum
/// of its triangles' area vectors, their area-weighted centre, and the radius of a ball about
/// that centre holding them); a node whose centre is further than `accuracy` radii from p counts
/// as a dipole, the others are opened down to exact solid angles. A mesh without the data
/// reports it (the launch fails naming the query) and answers 0.
template <class S>
KJ_FUNC S mesh_winding_number(const array_t<vec_t<3, float> >& points, const array_t<kj_int32>& indices,
                              const array_t<kj_int32>& nodes, const array_t<vec_t<3, float> >& winding,
                              const vec_t<3, S>& p, S accuracy, const launch_bounds_t& dim, kj_int64 thread,
                              const char* where) {
  (void)where;
  if (!nodes.data) return S(0);
  if (!winding.data || winding.shape[0] < 3 * kj_int64(bvh_subtree_end(nodes, 0))) {
    report_fault(dim, kStatusNoWindingData, thread, 0, 0, 0, 0);
    return S(0);
  }
  S omega = S(0);
  kj_int32 stack[kBvhStack];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const kj_int32 n = stack[--top];
    const vec_t<3, S> area = mesh_vec<S>(elem(winding, 3 * kj_int64(n)));
    const vec_t<3, S> d = mesh_vec<S>(elem(winding, 3 * kj_int64(n) + 1)) - p;
    const S radius = S(elem(winding, 3 * kj_int64(n) + 2).c[0]);
    const S r2 = mesh_dot(d, d);
    if (r2 > accuracy * accuracy * radius * radius) {
      omega += mesh_dot(area, d) / (r2 * sqrt(r2));  // the dipole's solid angle
      continue;
    }
    const kj_int32 l = elem(nodes, 2 * kj_int64(n)), r = elem(nodes, 2 * kj_int64(n) + 1);
    if (l >= 0) { stack[top++] = r; stack[top++] = l; continue; }
    for (kj_int32 k = -l - 1; k < -l - 1 + r; ++k) {
      const kj_int32 f = elem(nodes, kj_int64(k));
      omega += triangle_solid_angle(mesh_face_vertex<S>(points, indices, f, 0), mesh_face_vertex<S>(points, indices, f, 1),
                                    mesh_face_vertex<S>(points, indices, f, 2), p);
    }
  }
  return omega / (S(4) * S(3.14159265358979));
}
}  // namespace kj
