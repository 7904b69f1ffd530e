// Forward-value cases: quaternions, transforms and spatial vectors.
#include "forward_cases.hpp"

#include <algorithm>
#include <tuple>

namespace kjit::test {

using ir::Scalar;
using ir::Type;
using namespace ref;

namespace {
Lanes axis(int a) { Lanes e{0, 0, 0}; e[size_t(a)] = 1; return e; }
/// qk qj qi with each angle taken by axis index (Warp's quat_from_euler).
Lanes from_euler(const Lanes& e, int i, int j, int k) {
  return qmul(qmul(axis_angle(axis(k), e[size_t(k)]), axis_angle(axis(j), e[size_t(j)])), axis_angle(axis(i), e[size_t(i)]));
}
/// The rotation (as a matrix) of q; compares rotations independently of the sign of q.
double rotation_error(const Lanes& a, const Lanes& b) { return diff(qmatrix(a), qmatrix(b)); }
Lanes m44(const Lanes& r, const Lanes& p) {
  Lanes m(16, 0.0);
  for (int i = 0; i < 3; ++i) { for (int j = 0; j < 3; ++j) m[size_t(4 * i + j)] = r[size_t(3 * i + j)]; m[size_t(4 * i + 3)] = p[size_t(i)]; }
  m[15] = 1;
  return m;
}
Lanes rot_of(const Lanes& m) { Lanes r; for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) r.push_back(m[size_t(4 * i + j)]); return r; }
Lanes top(const Lanes& v) { return slice(v, 0, 3); }
Lanes bottom(const Lanes& v) { return slice(v, 3, 3); }
/// The smallest distance of segments p1-q1, p2-q2: a convex quadratic over [0, 1]^2, least at
/// its interior critical point or on a side (a clamped projection).
double segment_distance(const Lanes& p1, const Lanes& q1, const Lanes& p2, const Lanes& q2) {
  Lanes d1 = sub(q1, p1), d2 = sub(q2, p2);
  auto at = [](const Lanes& p, const Lanes& d, double u) { return add(p, scale(d, u)); };
  auto proj = [](const Lanes& p, const Lanes& d, const Lanes& x) { return std::min(1.0, std::max(0.0, dot(sub(x, p), d) / dot(d, d))); };
  auto dist = [](const Lanes& a, const Lanes& b) { return std::sqrt(dot(sub(a, b), sub(a, b))); };
  double best = 1e300;
  for (double u : {0.0, 1.0}) {
    best = std::min(best, dist(at(p1, d1, u), at(p2, d2, proj(p2, d2, at(p1, d1, u)))));
    best = std::min(best, dist(at(p2, d2, u), at(p1, d1, proj(p1, d1, at(p2, d2, u)))));
  }
  double a = dot(d1, d1), b = dot(d1, d2), e = dot(d2, d2), den = a * e - b * b, c = dot(d1, sub(p1, p2)), f = dot(d2, sub(p1, p2));
  double s = (b * f - c * e) / den, t = (a * f - b * c) / den;
  if (s >= 0 && s <= 1 && t >= 0 && t <= 1) best = std::min(best, dist(at(p1, d1, s), at(p2, d2, t)));
  return best;
}
/// Separating axes of two triangles in general position: both normals and the nine cross
/// products of their edges; they meet exactly when none separates them.
double triangles_meet(const Inputs& in) {
  std::vector<Lanes> axes{cross(sub(in[1], in[0]), sub(in[2], in[0])), cross(sub(in[4], in[3]), sub(in[5], in[3]))};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) axes.push_back(cross(sub(in[size_t((i + 1) % 3)], in[size_t(i)]), sub(in[size_t(3 + (j + 1) % 3)], in[size_t(3 + j)])));
  for (const Lanes& ax : axes) {
    double alo = 1e300, ahi = -1e300, blo = 1e300, bhi = -1e300;
    for (int k = 0; k < 3; ++k) {
      alo = std::min(alo, dot(ax, in[size_t(k)])); ahi = std::max(ahi, dot(ax, in[size_t(k)]));
      blo = std::min(blo, dot(ax, in[size_t(3 + k)])); bhi = std::max(bhi, dot(ax, in[size_t(3 + k)]));
    }
    if (ahi < blo || bhi < alo) return 0;
  }
  return 1;
}
}  // namespace

std::vector<FwdCase> geometry_cases() {
  std::vector<FwdCase> c;
  const double t32 = 2e-5;
  c.push_back({"quat_from_axis_angle", {Unit3(), S(-3, 3)}, [](const Inputs& in) { return axis_angle(in[0], in[1][0]); }});
  for (auto [i, j, k] : {std::tuple{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {0, 2, 0}})
    c.push_back({"quat_from_euler", {V(3, -3, 3), Int({double(i)}), Int({double(j)}), Int({double(k)})},
                 [](const Inputs& in) { return from_euler(in[0], int(in[1][0]), int(in[2][0]), int(in[3][0])); }, nullptr, t32});
  c.push_back({"quat_from_matrix", {R3()}, nullptr, [](const Inputs& in, const Lanes& q) { return diff(qmatrix(q), in[0]); }, t32, 1e-10});
  c.push_back({"quat_from_matrix", {R4()}, nullptr, [](const Inputs& in, const Lanes& q) { return diff(qmatrix(q), rot_of(in[0])); }, t32, 1e-10});
  c.push_back({"quat_rpy", {S(-3, 3), S(-1.5, 1.5), S(-3, 3)}, [](const Inputs& in) { return from_euler({in[0][0], in[1][0], in[2][0]}, 0, 1, 2); }, nullptr, t32});
  c.push_back({"quat_inverse", {Q()}, [](const Inputs& in) { return qconj(in[0]); }});
  c.push_back({"quat_rotate", {Q(), V(3)}, [](const Inputs& in) { return qrotate(in[0], in[1]); }, nullptr, t32});
  c.push_back({"quat_rotate_inv", {Q(), V(3)}, [](const Inputs& in) { return qrotate(qconj(in[0]), in[1]); }, nullptr, t32});
  // Warp's slerp takes the shorter arc: towards -q1 where q0 . q1 < 0.
  c.push_back({"quat_slerp", {Q(), Q(), S(0, 1)}, [](const Inputs& in) {
                 Lanes q1 = dot(in[0], in[1]) < 0 ? scale(in[1], -1) : in[1];
                 double th = std::acos(std::min(1.0, std::max(-1.0, dot(in[0], q1))));
                 double t = in[2][0];
                 return scale(add(scale(in[0], std::sin((1 - t) * th)), scale(q1, std::sin(t * th))), 1 / std::sin(th));
               }, nullptr, 1e-4, 1e-9});
  c.push_back({"quat_to_axis_angle", {Q()}, [](const Inputs& in) {
                 Lanes v = slice(in[0], 0, 3);  // Warp's: the shorter rotation
                 double s = std::sqrt(dot(v, v)), w = in[0][3];
                 return concat(scale(v, (w < 0 ? -1 : 1) / s), Lanes{2 * std::atan2(s, std::fabs(w))});
               }, nullptr, t32});
  for (auto [i, j, k] : {std::tuple{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}, {2, 0, 1}, {1, 0, 2}})
    c.push_back({"quat_to_euler", {Q(), Int({double(i)}), Int({double(j)}), Int({double(k)})}, nullptr,
                 [](const Inputs& in, const Lanes& e) { return rotation_error(from_euler(e, int(in[1][0]), int(in[2][0]), int(in[3][0])), in[0]); },
                 t32, 1e-10});
  // Proper Euler sequences: e[i], e[j], e[3 - i - j] hold the three angles.
  c.push_back({"quat_to_euler", {Q(), Int({0}), Int({1}), Int({0})}, nullptr, [](const Inputs& in, const Lanes& e) {
                 Lanes q = qmul(qmul(axis_angle(axis(0), e[2]), axis_angle(axis(1), e[1])), axis_angle(axis(0), e[0]));
                 return rotation_error(q, in[0]);
               }, t32, 1e-10});
  c.push_back({"quat_to_matrix", {Q()}, [](const Inputs& in) { return qmatrix(in[0]); }});
  c.push_back({"quat_to_rpy", {Q()}, nullptr, [](const Inputs& in, const Lanes& e) { return rotation_error(from_euler(e, 0, 1, 2), in[0]); }, t32, 1e-10});
  c.push_back({"quat_twist", {Unit3(), Q()}, [](const Inputs& in) {
                 Lanes a = in[0], v = slice(in[1], 0, 3);
                 Lanes t = concat(scale(a, dot(a, v)), Lanes{in[1][3]});
                 return scale(t, 1 / std::sqrt(dot(t, t)));
               }, nullptr, t32});
  c.push_back({"quat_twist_angle", {Unit3(), Q()}, [](const Inputs& in) { return Lanes{2 * std::atan2(std::fabs(dot(in[0], slice(in[1], 0, 3))), in[1][3])}; }, nullptr, t32});
  c.push_back({"quat_twist_angle_signed", {Unit3(), Q()}, [](const Inputs& in) { return Lanes{2 * std::atan2(dot(in[0], slice(in[1], 0, 3)), in[1][3])}; }, nullptr, t32});

  // Transforms: (p, q).
  c.push_back({"transform_get_translation", {T()}, [](const Inputs& in) { return slice(in[0], 0, 3); }});
  c.push_back({"transform_get_rotation", {T()}, [](const Inputs& in) { return slice(in[0], 3, 4); }});
  c.push_back({"transform_set_translation", {T(), V(3)}, [](const Inputs& in) { return concat(in[1], slice(in[0], 3, 4)); }});
  c.push_back({"transform_set_rotation", {T(), Q()}, [](const Inputs& in) { return concat(slice(in[0], 0, 3), in[1]); }});
  c.push_back({"transform_multiply", {T(), T()}, [](const Inputs& in) {
                 return concat(add(qrotate(slice(in[0], 3, 4), slice(in[1], 0, 3)), slice(in[0], 0, 3)), qmul(slice(in[0], 3, 4), slice(in[1], 3, 4)));
               }, nullptr, t32});
  c.push_back({"transform_inverse", {T()}, [](const Inputs& in) {
                 Lanes qi = qconj(slice(in[0], 3, 4));
                 return concat(scale(qrotate(qi, slice(in[0], 0, 3)), -1), qi);
               }, nullptr, t32});
  c.push_back({"transform_point", {T(), V(3)}, [](const Inputs& in) { return add(qrotate(slice(in[0], 3, 4), in[1]), slice(in[0], 0, 3)); }, nullptr, t32});
  c.push_back({"transform_vector", {T(), V(3)}, [](const Inputs& in) { return qrotate(slice(in[0], 3, 4), in[1]); }, nullptr, t32});
  c.push_back({"transform_point", {M(4, 4), V(3)}, [](const Inputs& in) { return slice(matmul(in[0], 4, 4, concat(in[1], Lanes{1}), 1), 0, 3); }});
  c.push_back({"transform_vector", {M(4, 4), V(3)}, [](const Inputs& in) { return slice(matmul(in[0], 4, 4, concat(in[1], Lanes{0}), 1), 0, 3); }});
  c.push_back({"transform_to_matrix", {T()}, [](const Inputs& in) { return m44(qmatrix(slice(in[0], 3, 4)), slice(in[0], 0, 3)); }, nullptr, t32});
  c.push_back({"transform_from_matrix", {R4()}, nullptr, [](const Inputs& in, const Lanes& t) {
                 return std::max(diff(slice(t, 0, 3), Lanes{in[0][3], in[0][7], in[0][11]}), diff(qmatrix(slice(t, 3, 4)), rot_of(in[0])));
               }, t32, 1e-10});
  c.push_back({"transform_compose", {V(3), Q(), V(3, 0.5, 2)}, [](const Inputs& in) {
                 Lanes r = qmatrix(in[1]);
                 for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) r[size_t(3 * i + j)] *= in[2][size_t(j)];
                 return m44(r, in[0]);
               }, nullptr, t32});
  c.push_back({"transform_decompose", {TRS()}, nullptr, [](const Inputs& in, const Lanes& d) {
                 Lanes p = slice(d, 0, 3), q = slice(d, 3, 4), s = slice(d, 7, 3), r = qmatrix(q);
                 for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) r[size_t(3 * i + j)] *= s[size_t(j)];
                 return diff(m44(r, p), in[0]);
               }, t32, 1e-10});

  // Spatial vectors (angular, linear).
  c.push_back({"spatial_top", {V(6)}, [](const Inputs& in) { return top(in[0]); }});
  c.push_back({"spatial_bottom", {V(6)}, [](const Inputs& in) { return bottom(in[0]); }});
  c.push_back({"spatial_dot", {V(6), V(6)}, [](const Inputs& in) { return Lanes{dot(in[0], in[1])}; }});
  c.push_back({"spatial_cross", {V(6), V(6)}, [](const Inputs& in) {
                 return concat(cross(top(in[0]), top(in[1])), add(cross(bottom(in[0]), top(in[1])), cross(top(in[0]), bottom(in[1]))));
               }});
  c.push_back({"spatial_cross_dual", {V(6), V(6)}, [](const Inputs& in) {
                 return concat(add(cross(top(in[0]), top(in[1])), cross(bottom(in[0]), bottom(in[1]))), cross(top(in[0]), bottom(in[1])));
               }});
  c.push_back({"spatial_adjoint", {M(3, 3), M(3, 3)}, [](const Inputs& in) {
                 Lanes m(36, 0.0);
                 for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) {
                   m[size_t(6 * i + j)] = m[size_t(6 * (i + 3) + j + 3)] = in[0][size_t(3 * i + j)];
                   m[size_t(6 * (i + 3) + j)] = in[1][size_t(3 * i + j)];
                 }
                 return m;
               }});
  c.push_back({"transform_twist", {T(), V(6)}, [](const Inputs& in) {
                 Lanes q = slice(in[0], 3, 4), p = slice(in[0], 0, 3), w = qrotate(q, top(in[1]));
                 return concat(w, add(qrotate(q, bottom(in[1])), cross(p, w)));
               }, nullptr, t32});
  c.push_back({"transform_wrench", {T(), V(6)}, [](const Inputs& in) {
                 Lanes q = slice(in[0], 3, 4), p = slice(in[0], 0, 3), f = qrotate(q, bottom(in[1]));
                 return concat(add(qrotate(q, top(in[1])), cross(p, f)), f);
               }, nullptr, t32});
  c.push_back({"velocity_at_point", {V(6), V(3)}, [](const Inputs& in) { return add(bottom(in[0]), cross(top(in[0]), in[1])); }});
  // Pure geometry: (s, t, distance) must name two points at the oracle's smallest distance;
  // random triangles around the origin (a third of them meet) against separating axes.
  c.push_back({"closest_point_edge_edge", {V(3), V(3), V(3), V(3), Sfix({1e-6})}, nullptr, [](const Inputs& in, const Lanes& r) {
                 double named = std::sqrt(dot(sub(add(in[2], scale(sub(in[3], in[2]), r[1])), add(in[0], scale(sub(in[1], in[0]), r[0]))),
                                              sub(add(in[2], scale(sub(in[3], in[2]), r[1])), add(in[0], scale(sub(in[1], in[0]), r[0])))));
                 double range = std::max({0.0, -r[0], r[0] - 1, -r[1], r[1] - 1});
                 return std::abs(named - r[2]) + std::abs(r[2] - segment_distance(in[0], in[1], in[2], in[3])) + range;
               }, 1e-5, 1e-11});
  c.push_back({"intersect_tri_tri", {V(3), V(3), V(3), V(3), V(3), V(3)}, [](const Inputs& in) { return Lanes{triangles_meet(in)}; }});
  return c;
}

}  // namespace kjit::test
