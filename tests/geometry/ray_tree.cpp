// kjit::Mesh's ray tree (the Mesh struct's bvh_rays, which mesh_query_ray walks): the same face,
// t, u, v, sign and normal, bit for bit, as the binary tree's traversal (the same mesh with
// bvh_rays left out) on random and adversarial rays — ties between faces at equal t, rays along
// the axes, through vertices and edges, in face planes — over tiny, huge and degenerate meshes;
// and a refit mesh's (the tree dropped) on its moved points. These meshes are small: the cases
// lower the size rule (KJIT_MESH_RAY_TREE_MIN_FACES) to give them a ray tree; the rule's own
// case checks its default and its errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "mesh_arrays.hpp"
#include "mesh_kernels.hpp"
#include "mesh_reference.hpp"

using namespace kjit;
using namespace kjit::test::geo;

namespace {

/// A g x g grid over [-1, 1]^2 split into triangles as the ray benchmark's height field, at
/// height 0 (flat: rays along -z through a vertex or an edge meet several faces at the same t)
/// or at bumpy heights.
SoupMesh grid(int g, bool flat) {
  SoupMesh m;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> h(-0.2f, 0.2f);
  for (int i = 0; i <= g; ++i)
    for (int j = 0; j <= g; ++j) {
      m.points.push_back(2.0f * float(i) / float(g) - 1.0f);
      m.points.push_back(2.0f * float(j) / float(g) - 1.0f);
      m.points.push_back(flat ? 0.0f : h(rng));
    }
  for (int i = 0; i < g; ++i)
    for (int j = 0; j < g; ++j) {
      const int32_t a = i * (g + 1) + j, b = a + g + 1, c = a + 1, d = b + 1;
      m.indices.insert(m.indices.end(), {a, b, c, c, b, d});
    }
  return m;
}

/// The mesh scaled by s (points), for tiny and huge coordinates.
SoupMesh scaled(SoupMesh m, float s) {
  for (float& p : m.points) p *= s;
  return m;
}

vec3f point(const SoupMesh& m, int32_t i) {
  return vec3f(m.points[3 * size_t(i)], m.points[3 * size_t(i) + 1], m.points[3 * size_t(i) + 2]);
}

/// Rays at mesh m (of size about `s`): random ones, ones along the axes (direction components
/// exactly 0), ones aimed exactly at vertices and at edge midpoints (from above and from random
/// sides), ones in the plane z = 0 and just off it, and ones starting at vertices.
void adversarial_rays(const SoupMesh& m, float s, std::mt19937& rng, std::vector<vec3f>& starts, std::vector<vec3f>& dirs) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto add = [&](vec3f o, vec3f d) {
    starts.push_back(o * s);
    dirs.push_back(d);
  };
  for (int i = 0; i < 400; ++i) {
    const vec3f o(3 * u(rng), 3 * u(rng), 3 * u(rng)), x(0.8f * u(rng), 0.8f * u(rng), 0.8f * u(rng));
    add(o, x - o);
  }
  for (int i = 0; i < 300; ++i) {
    vec3f d(0, 0, 0);
    d.c[i % 3] = (i / 3) % 2 ? 1.0f : -1.0f;
    vec3f o(u(rng), u(rng), u(rng));
    o.c[i % 3] = -3.0f * d.c[i % 3];
    add(o, d);
  }
  for (int i = 0; i < 200; ++i) {  // in the plane z = 0 (the flat grid's), and 1e-7 above it
    const vec3f o(-3.0f, u(rng), i % 2 ? 1e-7f : 0.0f);
    add(o, vec3f(1.0f, 0.3f * u(rng), 0.0f));
  }
  const int32_t np = int32_t(m.points.size() / 3);
  for (int i = 0; i < 300; ++i) {
    const vec3f v = point(m, int32_t(rng() % uint32_t(np)));
    const int32_t f = int32_t(rng() % uint32_t(m.faces()));
    const vec3f e = (point(m, m.indices[3 * size_t(f)]) + point(m, m.indices[3 * size_t(f) + 1])) * 0.5f;
    const vec3f x = i % 2 ? v : e;
    const vec3f above = x + vec3f(0.0f, 0.0f, 2.0f * s), side = x + vec3f(3 * u(rng), 3 * u(rng), 3 * u(rng)) * s;
    starts.push_back(above);
    dirs.push_back(x - above);
    starts.push_back(side);
    dirs.push_back(x - side);
    starts.push_back(v);  // from a vertex
    dirs.push_back(vec3f(u(rng), u(rng), u(rng)));
  }
}

struct RayResults {
  std::vector<int32_t> face;
  std::vector<vec3f> tuv, normal;
  std::vector<float> sign;
};

/// Sets KJIT_MESH_RAY_TREE_MIN_FACES for its lifetime (unset again after).
struct MinFaces {
  explicit MinFaces(const char* v) { setenv("KJIT_MESH_RAY_TREE_MIN_FACES", v, 1); }
  ~MinFaces() { unsetenv("KJIT_MESH_RAY_TREE_MIN_FACES"); }
};

/// meshk::ray over the rays with the mesh's kernel-side struct `view`.
RayResults cast(const dsl::Mesh& view, const std::vector<vec3f>& starts, const std::vector<vec3f>& dirs, float max_t) {
  const int n = int(starts.size());
  NdArray face = zeros<int32_t>({n}), tuv = zeros<vec3f>({n}), sign = zeros<float>({n}), normal = zeros<vec3f>({n});
  launch(meshk::ray, n, view, from_vector(starts), from_vector(dirs), max_t, face, tuv, sign, normal);
  return {face.to_vector<int32_t>(), tuv.to_vector<vec3f>(), normal.to_vector<vec3f>(), sign.to_vector<float>()};
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Casts the rays through the mesh's ray tree and through its binary tree; checks every
/// result bit for bit and returns the hits.
int check_same_as_binary(const Mesh& mesh, const std::vector<vec3f>& starts, const std::vector<vec3f>& dirs, float max_t) {
  const dsl::Mesh wide = mesh.view();
  REQUIRE(wide.bvh_rays.data != nullptr);
  REQUIRE(wide.bvh_rays.shape[0] > 0);
  dsl::Mesh binary = wide;
  binary.bvh_rays = NdArray();
  const RayResults a = cast(wide, starts, dirs, max_t), b = cast(binary, starts, dirs, max_t);
  int hits = 0, differ = 0;
  for (size_t i = 0; i < a.face.size(); ++i) {
    hits += a.face[i] >= 0;
    differ += a.face[i] != b.face[i];
  }
  CHECK(differ == 0);
  CHECK(same_bits(a.face, b.face));
  CHECK(same_bits(a.tuv, b.tuv));
  CHECK(same_bits(a.sign, b.sign));
  CHECK(same_bits(a.normal, b.normal));
  return hits;
}

}  // namespace

TEST_CASE("mesh_query_ray through the ray tree: bit-identical to the binary tree's traversal on adversarial rays") {
  const MinFaces every_mesh("0");
  std::mt19937 rng(11);
  struct Case {
    std::string name;
    SoupMesh mesh;
    float scale;
  };
  std::vector<Case> cases = {{"flat grid", grid(24, true), 1.0f},
                             {"bumpy grid", grid(40, false), 1.0f},
                             {"random soup (degenerate faces mixed in)", random_soup(rng, 3000), 1.0f},
                             {"sphere", sphere_mesh(4), 1.0f},
                             {"tiny flat grid", scaled(grid(16, true), 1e-6f), 1e-6f},
                             {"huge sphere", scaled(sphere_mesh(3), 1e6f), 1e6f},
                             {"two faces (the root a leaf)", grid(1, true), 1.0f},
                             {"three faces", random_soup(rng, 3), 1.0f}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Mesh mesh(points_of(c.mesh), from_vector(c.mesh.indices));
    std::vector<vec3f> starts, dirs;
    adversarial_rays(c.mesh, c.scale, rng, starts, dirs);
    const int hits = check_same_as_binary(mesh, starts, dirs, 1.0e30f);
    // A short max_t: hits past it pruned.
    const int short_hits = check_same_as_binary(mesh, starts, dirs, 2.5f * c.scale);
    MESSAGE(c.name << ": " << c.mesh.faces() << " faces (ray tree " << mesh.view().bvh_rays.shape[0] * 4 / c.mesh.faces()
                   << " bytes a face), " << starts.size() << " rays, " << hits << " hits (" << short_hits
                   << " within 2.5 x the mesh's size), bit-identical");
    CHECK(hits > int(starts.size()) / 5);
  }
}

/// How many of the mesh's BVH leaves hold 1, 2, 3, 4 faces ([0] for other sizes).
std::vector<int> leaf_sizes(const Mesh& mesh) {
  const std::vector<int32_t> links = mesh.node_links().to_vector<int32_t>();
  std::vector<int> sizes(5, 0);
  // Node n's links are links[2n], links[2n + 1]; a leaf's first is negative, its second its count.
  std::vector<int32_t> stack = {0};
  while (!stack.empty()) {
    const int32_t n = stack.back();
    stack.pop_back();
    const int32_t l = links[2 * size_t(n)], r = links[2 * size_t(n) + 1];
    if (l < 0) {
      ++sizes[r >= 1 && r <= 4 ? size_t(r) : 0];
      continue;
    }
    stack.push_back(l);
    stack.push_back(r);
  }
  return sizes;
}

TEST_CASE("the ray tree's leaf test (a leaf's faces as lanes): leaves of one to four faces, ties inside a leaf, "
          "degenerate faces") {
  // The cpu tests a leaf's faces on the lanes of one vector (lanes past its faces read the
  // words after their rows, and must never hit); ties between faces at equal t inside a leaf go
  // to the first, as the binary traversal's face by face test. Faces repeated with their own
  // indices (two and three copies, whose equal centres put them mostly in one leaf) tie at
  // every hit; degenerate faces (a repeated vertex, collinear points) are never hit.
  const MinFaces every_mesh("0");
  std::mt19937 rng(21);
  const SoupMesh base = grid(14, false), soup = random_soup(rng, 600);
  SoupMesh m;
  m.points = base.points;
  std::vector<int> copies;  // of each of the grid's faces in m, how many m holds
  for (int f = 0; f < base.faces(); ++f)
    for (int copy = 0; copy < 1 + f % 3; ++copy) {
      m.indices.insert(m.indices.end(), base.indices.begin() + 3 * f, base.indices.begin() + 3 * f + 3);
      copies.push_back(1 + f % 3);
    }
  const int32_t shift = int32_t(m.points.size() / 3);
  for (size_t i = 0; i < soup.points.size(); ++i)  // beside the grid (x + 3), not over it
    m.points.push_back(soup.points[i] + (i % 3 == 0 ? 3.0f : 0.0f));
  for (int32_t i : soup.indices) m.indices.push_back(i + shift);
  Mesh mesh(points_of(m), from_vector(m.indices));
  const std::vector<int> sizes = leaf_sizes(mesh);
  CAPTURE(sizes[1]);
  CAPTURE(sizes[2]);
  CAPTURE(sizes[3]);
  CAPTURE(sizes[4]);
  CHECK(sizes[0] == 0);
  for (int k = 1; k <= 4; ++k) CHECK(sizes[size_t(k)] > 10);
  std::vector<vec3f> starts, dirs;
  adversarial_rays(m, 1.0f, rng, starts, dirs);
  const size_t adversarial = starts.size();
  for (int f = 0; f < m.faces(); f += 3) {  // at every third face's centre, from above
    const vec3f c = (point(m, m.indices[3 * size_t(f)]) + point(m, m.indices[3 * size_t(f) + 1]) +
                     point(m, m.indices[3 * size_t(f) + 2])) * (1.0f / 3.0f);
    starts.push_back(c + vec3f(0.01f * float(f % 5), 0.0f, 3.0f));
    dirs.push_back(c - starts.back());
  }
  const int hits = check_same_as_binary(mesh, starts, dirs, 1.0e30f);
  CHECK(hits > int(starts.size()) / 2);
  // The rays at the centres of repeated faces: ties inside a leaf, decided as the binary walk's.
  const RayResults r = cast(mesh.view(), starts, dirs, 1.0e30f);
  int tied = 0;
  for (size_t i = adversarial; i < starts.size(); ++i)
    tied += r.face[i] >= 0 && size_t(r.face[i]) < copies.size() && copies[size_t(r.face[i])] > 1;
  CHECK(tied > 100);
  MESSAGE(sizes[1] << ", " << sizes[2] << ", " << sizes[3] << ", " << sizes[4] << " leaves of 1-4 faces; " << hits
                   << " hits of " << starts.size() << " rays, " << tied << " on a repeated face");
}

TEST_CASE("mesh_query_ray on some threads, each ray its own max_t: the interleaved walks against brute force") {
  // A forward lane function casts its lanes' rays in one call that interleaves their walks of
  // the ray tree (mesh_first_hit_lanes); here under a per-thread condition (a third of the lanes
  // off), with max_t from 0 and below (no hit) to past the mesh, and in blocks of lanes that a
  // launch of 1000 threads leaves partly empty.
  const MinFaces every_mesh("0");
  std::mt19937 rng(14);
  const SoupMesh m = grid(40, false);
  Mesh mesh(points_of(m), from_vector(m.indices));
  REQUIRE(mesh.view().bvh_rays.shape[0] > 0);
  std::uniform_real_distribution<float> u(-1.2f, 1.2f), lim(-0.5f, 4.0f);
  const int n = 1000;
  std::vector<vec3f> starts, dirs;
  std::vector<float> max_t;
  for (int i = 0; i < n; ++i) {
    starts.push_back(vec3f(u(rng), u(rng), 2.0f));
    dirs.push_back(vec3f(0.3f * u(rng), 0.3f * u(rng), -1.0f));
    max_t.push_back(i % 7 == 0 ? 0.0f : lim(rng));
  }
  NdArray face = zeros<int32_t>({n}), t = zeros<float>({n});
  launch(meshk::ray_some, n, mesh, from_vector(starts), from_vector(dirs), from_vector(max_t), face, t);
  const std::vector<int32_t> fs = face.to_vector<int32_t>();
  const std::vector<float> ts = t.to_vector<float>();
  int hits = 0, misses = 0;
  for (int i = 0; i < n; ++i) {
    CAPTURE(i);
    if (i % 3 == 0) {
      CHECK(fs[size_t(i)] == -2);
      CHECK(ts[size_t(i)] == -2.0f);
      continue;
    }
    const D3 o = {starts[size_t(i)].c[0], starts[size_t(i)].c[1], starts[size_t(i)].c[2]};
    const D3 d = {dirs[size_t(i)].c[0], dirs[size_t(i)].c[1], dirs[size_t(i)].c[2]};
    auto [bt, bf] = brute_ray(m, o, d, std::max(0.0, double(max_t[size_t(i)])));
    if (bf >= 0 && (edge_margin(m, bf, o, d) < 1e-4 || std::fabs(bt - max_t[size_t(i)]) < 1e-4)) continue;  // rounding decides
    if (bf < 0) {
      ++misses;
      CHECK(fs[size_t(i)] == -1);
      continue;
    }
    ++hits;
    CHECK(fs[size_t(i)] == bf);
    CHECK(std::fabs(ts[size_t(i)] - bt) <= 1e-5 * (1 + bt));
  }
  MESSAGE(hits << " hits, " << misses << " misses");
  CHECK(hits > n / 10);
  CHECK(misses > n / 10);
}

TEST_CASE("mesh_query_ray after refit: the ray tree dropped, the moved points, the binary traversal's results") {
  const MinFaces every_mesh("0");
  std::mt19937 rng(12);
  const SoupMesh m = grid(30, false);
  NdArray points = points_of(m);
  Mesh mesh(points, from_vector(m.indices));
  std::vector<vec3f> starts, dirs;
  adversarial_rays(m, 1.0f, rng, starts, dirs);
  check_same_as_binary(mesh, starts, dirs, 1.0e30f);
  REQUIRE(mesh.view().bvh_rays.shape[0] > 0);
  // Move every point (a shear and a lift), refit: the ray tree (copies of the built vertices)
  // goes, and rays walk the refit BVH over the moved points.
  std::vector<vec3f> moved = points.to_vector<vec3f>();
  for (vec3f& p : moved) p = vec3f(p.c[0] + 0.3f * p.c[2], p.c[1], p.c[2] * 1.5f + 0.25f);
  points.copy_from(from_vector(moved));
  mesh.refit();
  CHECK(mesh.view().bvh_rays.data == nullptr);
  CHECK(mesh.view().bvh_rays.shape[0] == 0);
  // A mesh built over the moved points has a ray tree again, with the binary walk's results.
  const Mesh rebuilt(points, from_vector(m.indices));
  const int hits = check_same_as_binary(rebuilt, starts, dirs, 1.0e30f);
  CHECK(hits > int(starts.size()) / 5);
  // The refit mesh's hits are on the moved surface: straight down onto the grid's centre area
  // meets z near the moved height there (0.25 + 1.5 h, |h| <= 0.2).
  const RayResults r = cast(mesh.view(), {vec3f(0.1f, 0.2f, 5.0f)}, {vec3f(0.0f, 0.0f, -1.0f)}, 1.0e30f);
  REQUIRE(r.face[0] >= 0);
  CHECK(5.0f - r.tuv[0].c[0] >= 0.25f - 0.31f);
  CHECK(5.0f - r.tuv[0].c[0] <= 0.25f + 0.31f);
}

TEST_CASE("the ray tree's size rule: meshes below KJIT_MESH_RAY_TREE_MIN_FACES (default 131,072) walk the binary tree") {
  const SoupMesh m = grid(30, false);  // 1,800 faces
  const Mesh plain(points_of(m), from_vector(m.indices));
  CHECK(plain.view().bvh_rays.data == nullptr);
  {
    const MinFaces at("1800");
    const Mesh with(points_of(m), from_vector(m.indices));
    CHECK(with.view().bvh_rays.shape[0] > 0);
  }
  {
    const MinFaces above("1801");
    const Mesh without(points_of(m), from_vector(m.indices));
    CHECK(without.view().bvh_rays.data == nullptr);
  }
  for (const char* bad : {"-1", "many", "12k", ""}) {
    CAPTURE(bad);
    const MinFaces rule(bad);
    try {
      Mesh mesh(points_of(m), from_vector(m.indices));
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::User);
      CHECK(std::string(e.what()) == std::string("KJIT_MESH_RAY_TREE_MIN_FACES='") + bad +
                                         "' is not a non-negative integer (the fewest faces a kjit::Mesh writes a ray tree for)");
    }
  }
}
