// Fuzzing the geometry objects with bad input (run in the sanitizer build too): random meshes,
// BVHs and hash grids with out-of-range or extreme indices, NaN, infinite and huge points,
// degenerate radii, and queries with NaN, infinite and negative arguments. Each build either
// succeeds or throws a User error naming the object; each launch over a built object either
// runs, answering in range, or is refused with such an error — never a crash, a hang or a result
// outside the object.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/hash_grid.hpp"
#include "kjit/runtime/mesh.hpp"
#include "mesh_kernels.hpp"
#include "test_support.hpp"

namespace fuzz_k {
using namespace kjit::dsl;
KJIT_MODULE(geometry_bad_input)

/// How many candidates each query visits and the largest index among them (-1 for none).
KJIT_KERNEL(candidates, (Value<HashGrid> grid, Array<Vec3f> queries, Float r, Array<int> count, Array<int> largest)) {
  Int i = tid();
  auto q = hash_grid_query(grid, queries[i], r);
  Var<int32_t> j = 0, n = 0, top = -1;
  While([&] { return hash_grid_query_next(q, j); }, [&] {
    n = n + 1;
    top = max(Int(top), Int(j));
  });
  count[i] = n;
  largest[i] = top;
}
}  // namespace fuzz_k

using namespace kjit;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// A float a fuzzer would pick: ordinary values mostly, then the edges of the type.
float wild_float(std::mt19937& rng) {
  static const float edges[] = {kNan, kInf, -kInf, 0.0f, -0.0f, 1e38f, -1e38f, 1e-38f, 1e-45f,
                                std::numeric_limits<float>::max(), 3e9f, -3e9f};
  std::uniform_int_distribution<int> pick(0, 9);
  if (pick(rng) < 8) return std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng);
  return edges[std::uniform_int_distribution<size_t>(0, std::size(edges) - 1)(rng)];
}

vec3f wild_vec(std::mt19937& rng, bool finite_mostly) {
  auto c = [&] {
    return finite_mostly && std::uniform_int_distribution<int>(0, 9)(rng) < 9
               ? std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng)
               : wild_float(rng);
  };
  return vec3f(c(), c(), c());
}

/// The text of the User error f throws ("" when it runs), requiring it to name `object`.
std::string refusal(const std::function<void()>& f, const std::string& object) {
  std::string e = test::user_error(f);
  if (e == "no error") return "";
  CHECK_MESSAGE(e.find(object) != std::string::npos, e);
  return e;
}

}  // namespace

TEST_CASE("fuzz: random bad meshes and bad queries are refused naming the mesh, or answered in range") {
  test::ScopedEnv checked("KJIT_BOUNDS_CHECK", "1");  // a read past an array would be reported, not done
  std::mt19937 rng(20261207);
  int built = 0, refused = 0, launches = 0;
  for (int trial = 0; trial < 250; ++trial) {
    CAPTURE(trial);
    const int np = std::uniform_int_distribution<int>(trial % 2 ? 0 : 1, 12)(rng);
    // Every other trial's indices are corrupt (any count, any values); the rest are valid.
    const bool wild_indices = trial % 2 == 1;
    const int ni = wild_indices ? std::uniform_int_distribution<int>(0, 24)(rng) : 3 * std::uniform_int_distribution<int>(1, 8)(rng);
    std::vector<vec3f> points(static_cast<size_t>(np));
    const bool wild_points = trial % 5 == 0;
    for (vec3f& p : points) p = wild_vec(rng, !wild_points);
    std::vector<int32_t> indices(static_cast<size_t>(ni));
    for (int32_t& x : indices) {
      const int kind = wild_indices ? std::uniform_int_distribution<int>(0, 19)(rng) : 19;
      x = kind == 0 ? std::numeric_limits<int32_t>::min()
          : kind == 1 ? std::numeric_limits<int32_t>::max()
          : kind == 2 ? -1
          : kind == 3 ? np
                      : std::uniform_int_distribution<int32_t>(0, std::max(0, np - 1))(rng);
    }
    NdArray pts = from_vector(points), idx = from_vector(indices);
    Mesh mesh;
    if (!refusal([&] { mesh = Mesh(pts, idx); }, "kjit::Mesh").empty()) {
      ++refused;
      continue;
    }
    ++built;
    const int faces = ni / 3;
    // Queries: wild points, distances and rays against the built mesh.
    const int nq = 7;
    std::vector<vec3f> qs(nq), dirs(nq);
    for (int i = 0; i < nq; ++i) qs[size_t(i)] = wild_vec(rng, i % 2 == 0), dirs[size_t(i)] = wild_vec(rng, i % 3 != 0);
    dirs[0] = vec3f(0, 0, 0);  // no direction at all
    NdArray q = from_vector(qs), d = from_vector(dirs);
    NdArray face = zeros<int32_t>({nq}), uvr = zeros<vec3f>({nq});
    NdArray rface = zeros<int32_t>({nq}), tuv = zeros<vec3f>({nq}), sign = zeros<float>({nq}), normal = zeros<vec3f>({nq});
    const float max_dist = wild_float(rng);
    REQUIRE(refusal([&] { launch(meshk::closest, nq, mesh, q, max_dist, face, uvr); }, "kjit::Mesh") == "");
    REQUIRE(refusal([&] { launch(meshk::ray, nq, mesh, q, d, wild_float(rng), rface, tuv, sign, normal); }, "kjit::Mesh") == "");
    launches += 2;
    for (int32_t f : face.to_vector<int32_t>()) CHECK((f >= -1 && f < faces));
    for (int32_t f : rface.to_vector<int32_t>()) CHECK((f >= -1 && f < faces));
    // The points go bad after the build: refit refuses, or keeps answering in range.
    NdArray moved = from_vector(std::vector<vec3f>(size_t(np), wild_vec(rng, false)));
    pts.copy_from(moved);
    if (refusal([&] { mesh.refit(); }, "kjit::Mesh").empty()) {
      REQUIRE(refusal([&] { launch(meshk::closest, nq, mesh, q, max_dist, face, uvr); }, "kjit::Mesh") == "");
      for (int32_t f : face.to_vector<int32_t>()) CHECK((f >= -1 && f < faces));
    }
    mesh.release();
    CHECK(refusal([&] { launch(meshk::closest, nq, mesh, q, max_dist, face, uvr); }, "kjit::Mesh") != "");
  }
  MESSAGE(built << " meshes built, " << refused << " refused, " << launches << " query launches");
  CHECK(built > 30);
  CHECK(refused > 30);
}

TEST_CASE("fuzz: random bad boxes are refused naming the BVH, or built") {
  std::mt19937 rng(7);
  int built = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = std::uniform_int_distribution<int>(0, 9)(rng);
    std::vector<vec3f> lo(static_cast<size_t>(n)), hi(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      lo[size_t(i)] = wild_vec(rng, trial % 2 == 0);
      hi[size_t(i)] = trial % 4 == 0 ? wild_vec(rng, true) : lo[size_t(i)] + vec3f(0.5f, 0.5f, 0.5f);
    }
    Bvh b;
    if (refusal([&] { b = Bvh(from_vector(lo), from_vector(hi)); }, "kjit::Bvh").empty()) {
      ++built;
      CHECK(b.node_links().size() >= 2 + n);  // two links per node, then every item
    } else {
      ++refused;
    }
  }
  CHECK(built > 30);
  CHECK(refused > 30);
}

TEST_CASE("a hash grid refuses a radius whose inverse overflows (cells 0 * inf = NaN)") {
  HashGrid grid(4, 4, 4);
  NdArray x = from_vector(std::vector<vec3f>{vec3f(0, 0, 0), vec3f(1, 1, 1)});
  CHECK(test::user_error([&] { grid.build(x, 1e-45f); }) ==
        "kjit::HashGrid::build: radius 1.4013e-45 is too small: 1 / radius overflows float32");
  CHECK(test::user_error([&] { grid.build(x, 1e-30f); }) == "no error");  // small, but its inverse is a float
}

TEST_CASE("fuzz: hash grids with bad points, radii and dims are refused naming the grid, or queried in range") {
  test::ScopedEnv checked("KJIT_BOUNDS_CHECK", "1");
  std::mt19937 rng(99);
  int built = 0, refused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    CAPTURE(trial);
    const int dims[3] = {std::uniform_int_distribution<int>(-1, 6)(rng), std::uniform_int_distribution<int>(1, 6)(rng),
                         std::uniform_int_distribution<int>(1, 6)(rng)};
    std::optional<HashGrid> grid;
    if (!refusal([&] { grid.emplace(dims[0], dims[1], dims[2]); }, "kjit::HashGrid").empty()) {
      ++refused;
      continue;
    }
    const int n = std::uniform_int_distribution<int>(0, 40)(rng);
    std::vector<vec3f> points(static_cast<size_t>(n));
    for (vec3f& p : points) p = wild_vec(rng, trial % 3 != 0);
    NdArray x = from_vector(points);
    const float radius = wild_float(rng);
    if (!refusal([&] { grid->build(x, radius); }, "kjit::HashGrid").empty()) {
      ++refused;
      continue;
    }
    ++built;
    const int nq = 5;
    std::vector<vec3f> qs(nq);
    for (vec3f& q : qs) q = wild_vec(rng, false);
    NdArray q = from_vector(qs), count = zeros<int32_t>({nq}), largest = zeros<int32_t>({nq});
    REQUIRE(refusal([&] { launch(fuzz_k::candidates, nq, *grid, q, wild_float(rng), count, largest); }, "kjit::HashGrid") == "");
    const std::vector<int32_t> c = count.to_vector<int32_t>(), l = largest.to_vector<int32_t>();
    for (int i = 0; i < nq; ++i) {
      CHECK((c[size_t(i)] >= 0 && c[size_t(i)] <= n));  // each point at most once
      CHECK((l[size_t(i)] >= -1 && l[size_t(i)] < n));
    }
    grid->free();
    CHECK(refusal([&] { launch(fuzz_k::candidates, nq, *grid, q, 1.0f, count, largest); }, "kjit::HashGrid") != "");
  }
  MESSAGE(built << " grids built and queried, " << refused << " refused");
  CHECK(built > 30);
  CHECK(refused > 30);
}
