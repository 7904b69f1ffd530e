// Reverse-mode gradients of mesh queries with respect to the query points and rays AND the
// mesh's points, against float64 central differences of the brute-force reference (the
// closest face / first hit re-chosen at every step), at points away from face switches.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>

#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/runtime/mesh.hpp"
#include "kjit/runtime/tape.hpp"
#include "mesh_arrays.hpp"
#include "mesh_kernels.hpp"
#include "mesh_reference.hpp"
#include "strided_views.hpp"
#include "test_support.hpp"

using namespace kjit;
using namespace kjit::test::geo;

namespace {


/// The closest-point loss of kernel closest_loss, in float64 over every face.
double closest_loss_ref(const SoupMesh& m, const D3& p) {
  auto [d, f] = brute_closest(m, p);
  (void)d;
  auto uv = closest_uv(m.vertex(f, 0), m.vertex(f, 1), m.vertex(f, 2), p);
  const D3 x = eval(m, f, uv[0], uv[1]);
  const D3 e = sub(x, p);
  return dot(e, e) + 0.3 * uv[0] - 0.7 * uv[1] + 0.25 * x[0];
}

/// The ray loss of kernel ray_loss, in float64 over every face (0 on a miss).
double ray_loss_ref(const SoupMesh& m, const D3& o, const D3& d) {
  auto [t, f] = brute_ray(m, o, d, 1e6);
  if (f < 0) return 0;
  double u = 0, v = 0;  // the float64 watertight test's barycentrics on the face hit
  ray_face(m, f, o, d, &u, &v);
  const D3 a = m.vertex(f, 0);
  const D3 n = cross(sub(m.vertex(f, 1), a), sub(m.vertex(f, 2), a));
  const double ln = std::sqrt(dot(n, n));
  return t + 0.4 * u - 0.6 * v + (0.5 * n[0] - 0.3 * n[1] + 0.2 * n[2]) / ln;
}

/// `count` random query points whose closest point lies inside one face of `m`, away from its
/// edges (u, v and 1 - u - v over 0.02), and stays on that face when a coordinate moves by 2h:
/// u and v are those of one face (on an edge or a vertex each face sharing it has its own).
std::vector<vec3f> stable_queries(const SoupMesh& m, size_t count, unsigned seed, double h) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.4f, 1.4f);
  std::vector<vec3f> qs;
  while (qs.size() < count) {
    vec3f p(u(rng), u(rng), u(rng));
    if (stable_closest(m, {p.c[0], p.c[1], p.c[2]}, h)) qs.push_back(p);
  }
  return qs;
}

/// Central difference of f along one coordinate of a float64 value.
double central(const std::function<double(double)>& f, double x, double h) { return (f(x + h) - f(x - h)) / (2 * h); }

}  // namespace

TEST_CASE("mesh_query_point_no_sign: gradients in the query points and the mesh's points against float64 central differences") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);  // dense arrays: the adjoint lane functions too
  SoupMesh m = sphere_mesh(1);
  const double h = 1e-4;
  const std::vector<vec3f> qs = stable_queries(m, 37, 11, h);
  const int n = int(qs.size());
  NdArray mesh_points = points_of(m);
  mesh_points.requires_grad();
  Mesh mesh(mesh_points, from_vector(m.indices));
  NdArray pts = from_vector(qs), out = zeros<float>({n}), g_pts = zeros<vec3f>({n});
  std::vector<float> seeds(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) seeds[size_t(i)] = 1.0f + 0.01f * float(i);
  launch(meshk::closest_loss, n, mesh, pts, out);
  const std::vector<float> loss = out.to_vector<float>();
  for (int i = 0; i < n; ++i)
    CHECK(loss[size_t(i)] == doctest::Approx(closest_loss_ref(m, {qs[size_t(i)].c[0], qs[size_t(i)].c[1], qs[size_t(i)].c[2]})).epsilon(1e-4));
  // The mesh has no floating value of its own: its adjoint is {}; the points' gradient goes
  // to their own buffer.
  launch_adjoint(meshk::closest_loss, n, {mesh, pts, out}, {{}, g_pts, from_vector(seeds)});
  const std::vector<vec3f> gp = g_pts.to_vector<vec3f>();
  const std::vector<vec3f> gm = test::read_array<vec3f>(mesh_points.grad());
  // With respect to each query point.
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      D3 p = {qs[size_t(i)].c[0], qs[size_t(i)].c[1], qs[size_t(i)].c[2]};
      const double ref = seeds[size_t(i)] * central([&](double x) { D3 e = p; e[size_t(k)] = x; return closest_loss_ref(m, e); }, p[size_t(k)], h);
      CAPTURE(i);
      CAPTURE(k);
      CHECK(gp[size_t(i)].c[k] == doctest::Approx(ref).epsilon(2e-3).scale(1));
    }
  }
  // With respect to the mesh's points: the sum over the queries, each point coordinate moved.
  int nonzero = 0;
  for (size_t j = 0; j < m.points.size(); ++j) {
    auto total = [&](double x) {
      SoupMesh moved = m;
      moved.points[j] = float(x);  // the reference reads float points: step in float
      double s = 0;
      for (int i = 0; i < n; ++i) s += seeds[size_t(i)] * closest_loss_ref(moved, {qs[size_t(i)].c[0], qs[size_t(i)].c[1], qs[size_t(i)].c[2]});
      return s;
    };
    const double x0 = m.points[j];
    const float hp = 1e-3f;
    const double ref = (total(double(float(x0 + hp))) - total(double(float(x0 - hp)))) / (double(float(x0 + hp)) - double(float(x0 - hp)));
    CAPTURE(j);
    CHECK(gm[j / 3].c[j % 3] == doctest::Approx(ref).epsilon(1e-2).scale(1));
    nonzero += std::fabs(ref) > 1e-3;
  }
  CHECK(nonzero > 10);  // the queries reach many of the mesh's points
}

TEST_CASE("mesh_query_ray: gradients of t, u, v and the normal in the ray and the mesh's points against float64 central differences") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  SoupMesh m = sphere_mesh(1);
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-0.6f, 0.6f);
  std::vector<vec3f> starts, dirs;
  const double h = 1e-4;
  while (starts.size() < 29) {
    // Along each axis, both ways: every dominant axis and sign of the watertight test's
    // permutation (its selects carry the gradient to the right components).
    const int axis = int(starts.size() % 3);
    const float side = starts.size() % 2 ? 2.5f : -2.5f;
    vec3f o(u(rng), u(rng), u(rng)), d(0.3f * u(rng), 0.3f * u(rng), 0.3f * u(rng));
    o.c[axis] = side;
    d.c[axis] = side > 0 ? -1.0f : 1.0f;
    D3 od = {o.c[0], o.c[1], o.c[2]}, dd = {d.c[0], d.c[1], d.c[2]};
    auto [t0, f0] = brute_ray(m, od, dd, 1e6);
    (void)t0;
    if (f0 < 0 || edge_margin(m, f0, od, dd) < 0.02) continue;  // away from edges: no face switch
    starts.push_back(o);
    dirs.push_back(d);
  }
  const int n = int(starts.size());
  NdArray mesh_points = points_of(m);
  mesh_points.requires_grad();
  Mesh mesh(mesh_points, from_vector(m.indices));
  NdArray s = from_vector(starts), d = from_vector(dirs), out = zeros<float>({n});
  NdArray gs = zeros<vec3f>({n}), gd = zeros<vec3f>({n});
  std::vector<float> seeds(static_cast<size_t>(n), 1.0f);
  launch(meshk::ray_loss, n, mesh, s, d, out);
  launch_adjoint(meshk::ray_loss, n, {mesh, s, d, out}, {{}, gs, gd, from_vector(seeds)});
  const std::vector<float> loss = out.to_vector<float>();
  const std::vector<vec3f> G[2] = {gs.to_vector<vec3f>(), gd.to_vector<vec3f>()};
  const std::vector<vec3f> gm = test::read_array<vec3f>(mesh_points.grad());
  for (int i = 0; i < n; ++i) {
    D3 o = {starts[size_t(i)].c[0], starts[size_t(i)].c[1], starts[size_t(i)].c[2]};
    D3 dd = {dirs[size_t(i)].c[0], dirs[size_t(i)].c[1], dirs[size_t(i)].c[2]};
    CAPTURE(i);
    CHECK(loss[size_t(i)] == doctest::Approx(ray_loss_ref(m, o, dd)).epsilon(1e-4));
    for (int which = 0; which < 2; ++which)
      for (int k = 0; k < 3; ++k) {
        const double ref = central([&](double x) {
          D3 a = o, b = dd;
          (which ? b : a)[size_t(k)] = x;
          return ray_loss_ref(m, a, b);
        }, (which ? dd : o)[size_t(k)], h);
        CAPTURE(which);
        CAPTURE(k);
        CHECK(G[which][size_t(i)].c[k] == doctest::Approx(ref).epsilon(2e-3).scale(1));
      }
  }
  int nonzero = 0;
  for (size_t j = 0; j < m.points.size(); ++j) {
    auto total = [&](double x) {
      SoupMesh moved = m;
      moved.points[j] = float(x);
      double t = 0;
      for (int i = 0; i < n; ++i)
        t += ray_loss_ref(moved, {starts[size_t(i)].c[0], starts[size_t(i)].c[1], starts[size_t(i)].c[2]},
                          {dirs[size_t(i)].c[0], dirs[size_t(i)].c[1], dirs[size_t(i)].c[2]});
      return t;
    };
    const double x0 = m.points[j];
    const float hp = 1e-3f;
    const double xp = double(float(x0 + hp)), xm = double(float(x0 - hp));
    const double ref = (total(xp) - total(xm)) / (xp - xm);
    CAPTURE(j);
    CHECK(gm[j / 3].c[j % 3] == doctest::Approx(ref).epsilon(1e-2).scale(1));
    nonzero += std::fabs(ref) > 1e-3;
  }
  CHECK(nonzero > 5);
}

// Forward mode through the mesh's points (a Mesh's tangent is a dsl::Mesh whose points field
// holds their direction; the fields left unset are zero directions): the tangents of both
// losses in random directions of the query and of every mesh point satisfy the dot-product
// identity with the reverse-mode gradients, <J v, w> = <v, J^T w>.
TEST_CASE("mesh queries in forward mode: tangents in the mesh's points and the query match the adjoints (dot-product identity)") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  SoupMesh m = sphere_mesh(1);
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), v(-0.6f, 0.6f);
  auto random_vecs = [&](size_t n) {
    std::vector<vec3f> r(n);
    for (vec3f& x : r) x = vec3f(u(rng), u(rng), u(rng));
    return r;
  };
  const int n = 23;
  std::vector<vec3f> pts(static_cast<size_t>(n)), starts(static_cast<size_t>(n)), dirs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    pts[size_t(i)] = vec3f(1.5f * u(rng), 1.5f * u(rng), 1.5f * u(rng));
    // Along each axis, both ways (every branch of the watertight test's axis permutation).
    starts[size_t(i)] = vec3f(v(rng), v(rng), v(rng));
    dirs[size_t(i)] = vec3f(0.3f * v(rng), 0.3f * v(rng), 0.3f * v(rng));
    starts[size_t(i)].c[i % 3] = i % 2 ? 2.5f : -2.5f;
    dirs[size_t(i)].c[i % 3] = i % 2 ? -1.0f : 1.0f;
  }
  const size_t np = m.points.size() / 3;
  const std::vector<vec3f> dpoints = random_vecs(np), dpts = random_vecs(size_t(n)), dstarts = random_vecs(size_t(n)),
                           ddirs = random_vecs(size_t(n));
  std::vector<float> w(static_cast<size_t>(n));
  for (float& x : w) x = u(rng);
  auto dot_all = [](const std::vector<vec3f>& a, const std::vector<vec3f>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += double(a[i].c[0]) * b[i].c[0] + double(a[i].c[1]) * b[i].c[1] + double(a[i].c[2]) * b[i].c[2];
    return s;
  };
  auto dot_w = [&](const NdArray& t) {
    const std::vector<float> jt = t.to_vector<float>();
    double s = 0;
    for (int i = 0; i < n; ++i) s += double(jt[size_t(i)]) * w[size_t(i)];
    return s;
  };
  // Set up again for each subcase (doctest reruns the case from the top): fresh gradients.
  NdArray mesh_points = points_of(m);
  mesh_points.requires_grad();
  Mesh mesh(mesh_points, from_vector(m.indices));
  NdArray dpoints_array = from_vector(dpoints);  // a struct's ArrayRef does not keep its array alive
  kjit::dsl::Mesh dmesh;
  dmesh.points = dpoints_array;
  SUBCASE("closest points") {
    NdArray p = from_vector(pts), out = zeros<float>({n}), dout = zeros<float>({n}), gp = zeros<vec3f>({n});
    launch_tangent(meshk::closest_loss, n, {mesh, p, out}, {dmesh, from_vector(dpts), dout});
    launch_adjoint(meshk::closest_loss, n, {mesh, p, out}, {{}, gp, from_vector(w)});
    const double jv = dot_w(dout);
    const double vjw = dot_all(dpts, gp.to_vector<vec3f>()) + dot_all(dpoints, test::read_array<vec3f>(mesh_points.grad()));
    CHECK(std::fabs(jv) > 1e-2);  // the directions do move the loss
    CHECK(jv == doctest::Approx(vjw).epsilon(1e-4));
    // Only the mesh's points moving: the query's part alone must not be what agrees.
    NdArray dout2 = zeros<float>({n});
    launch_tangent(meshk::closest_loss, n, {mesh, p, out}, {dmesh, {}, dout2});
    CHECK(dot_w(dout2) == doctest::Approx(dot_all(dpoints, test::read_array<vec3f>(mesh_points.grad()))).epsilon(1e-4));
  }
  SUBCASE("rays") {
    NdArray s = from_vector(starts), d = from_vector(dirs), out = zeros<float>({n}), dout = zeros<float>({n});
    NdArray gs = zeros<vec3f>({n}), gd = zeros<vec3f>({n});
    launch_tangent(meshk::ray_loss, n, {mesh, s, d, out}, {dmesh, from_vector(dstarts), from_vector(ddirs), dout});
    launch_adjoint(meshk::ray_loss, n, {mesh, s, d, out}, {{}, gs, gd, from_vector(w)});
    const double jv = dot_w(dout);
    const double vjw = dot_all(dstarts, gs.to_vector<vec3f>()) + dot_all(ddirs, gd.to_vector<vec3f>()) +
                       dot_all(dpoints, test::read_array<vec3f>(mesh_points.grad()));
    CHECK(std::fabs(jv) > 1e-2);
    CHECK(jv == doctest::Approx(vjw).epsilon(1e-4));
  }
}

// check_gradients on kernels taking a mesh: the kernel form checks the query points (the mesh
// passes through as an object), the tape form the mesh's own points, refitting the BVH on each
// run as a program that moves them must.
TEST_CASE("check_gradients works on kernels taking a mesh: query points (kernel form), mesh points (tape form)") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  SoupMesh m = sphere_mesh(1);
  const std::vector<vec3f> qs = stable_queries(m, 19, 31, 4e-3);
  const int n = int(qs.size());
  NdArray mesh_points = points_of(m);
  Mesh mesh(mesh_points, from_vector(m.indices));
  // After the mesh copied the handle: the buffer is the memory's, the mesh's copy sees it.
  mesh_points.requires_grad();
  NdArray pts = from_vector(qs);
  GradCheckOptions o;
  o.step = 1e-3;
  o.max_elements = n;
  SUBCASE("kernel form: the query points, adjoint, tangent and dot-product identity") {
    GradCheckReport r = check_gradients(meshk::closest_loss, n, {mesh, pts, zeros<float>({n})}, o);
    MESSAGE(r.str());
    CHECK(r.passed());
    REQUIRE(r.params.size() == 1);
    CHECK(r.params[0].name == "pts");
    CHECK(r.params[0].checked == 3 * n);
    CHECK(r.tangents.size() == 2);  // tangent and dot rows of pts
  }
  SUBCASE("tape form: the mesh's points, refit on every run") {
    NdArray loss = zeros<float>({1});
    auto program = [&](Tape&) {  // recorded on the tape check_gradients gives it
      mesh.refit();
      loss.zero();
      launch(meshk::closest_total, n, mesh, pts, loss);
    };
    GradCheckReport r = check_gradients(program, loss, {mesh_points}, o);
    MESSAGE(r.str());
    CHECK(r.passed());
    REQUIRE(r.params.size() == 1);
    CHECK(r.params[0].checked == int64_t(m.points.size()));  // every coordinate of every point
    CHECK(r.params[0].max_abs_error < 1e-2);
  }
}
