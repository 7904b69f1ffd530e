// kjit::Mesh and kjit::Bvh as objects: the tree's invariants (every item in one leaf, every
// box holding its children), refit after points move, and the errors for bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "bvh_build.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "mesh_kernels.hpp"
#include "test_support.hpp"

using namespace kjit;

namespace {

bool inside(const vec3f& lo, const vec3f& hi, const vec3f& l2, const vec3f& h2) {
  for (int a = 0; a < 3; ++a)
    if (l2.c[a] < lo.c[a] || h2.c[a] > hi.c[a]) return false;
  return true;
}

/// Checks the tree over boxes lo/hi: links in range, every item once, boxes nested, depth
/// within kBvhMaxDepth (the traversals' stack bound); returns the depth.
int check_tree(const detail::BvhTree& t, const std::vector<vec3f>& lo, const std::vector<vec3f>& hi) {
  const int64_t n = int64_t(lo.size());
  int64_t leaves = 0;
  REQUIRE(int64_t(t.links.size()) == 2 * t.nodes + n);
  std::vector<int> seen(size_t(n), 0);
  std::vector<int> depth(size_t(t.nodes), 0);
  int max_depth = 0;
  for (int64_t node = 0; node < t.nodes; ++node) {
    const int32_t l = t.links[size_t(2 * node)], r = t.links[size_t(2 * node + 1)];
    const vec3f& blo = t.bounds[size_t(2 * node)];
    const vec3f& bhi = t.bounds[size_t(2 * node + 1)];
    max_depth = std::max(max_depth, depth[size_t(node)]);
    if (l < 0) {
      ++leaves;
      REQUIRE(r >= 1);
      REQUIRE(r <= detail::kBvhLeafItems);
      REQUIRE(-l - 1 >= 2 * t.nodes);
      REQUIRE(-l - 1 + r <= int64_t(t.links.size()));
      for (int32_t k = -l - 1; k < -l - 1 + r; ++k) {
        const int32_t item = t.links[size_t(k)];
        REQUIRE(item >= 0);
        REQUIRE(item < n);
        ++seen[size_t(item)];
        CHECK(inside(blo, bhi, lo[size_t(item)], hi[size_t(item)]));
      }
    } else {
      REQUIRE(l > node);  // children follow their parent: refit runs backwards
      REQUIRE(r > l);
      REQUIRE(r < t.nodes);
      depth[size_t(l)] = depth[size_t(r)] = depth[size_t(node)] + 1;
      CHECK(inside(blo, bhi, t.bounds[size_t(2 * l)], t.bounds[size_t(2 * l + 1)]));
      CHECK(inside(blo, bhi, t.bounds[size_t(2 * r)], t.bounds[size_t(2 * r + 1)]));
    }
  }
  for (int64_t i = 0; i < n; ++i) CHECK(seen[size_t(i)] == 1);
  CHECK(t.nodes == 2 * leaves - 1);  // a binary tree: every inner node has two children
  CHECK(max_depth <= detail::kBvhMaxDepth);
  return max_depth;
}

std::vector<vec3f> random_boxes(std::mt19937& rng, int64_t n, std::vector<vec3f>& hi, bool same_centre) {
  std::uniform_real_distribution<float> u(-10, 10), s(0, 0.5f);
  std::vector<vec3f> lo(static_cast<size_t>(n));
  hi.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    for (int a = 0; a < 3; ++a) {
      const float c = same_centre ? 1.0f : u(rng), h = s(rng);
      lo[size_t(i)].c[a] = c - h;
      hi[size_t(i)].c[a] = c + h;
    }
  }
  return lo;
}

}  // namespace

TEST_CASE("the BVH builder: every item in one leaf, boxes nested, depth bounded, at sizes around the leaf size and the parallel threshold") {
  std::mt19937 rng(7);
  for (int64_t n : {1, 2, 4, 5, 8, 9, 17, 1000, 65535, 65536, 200003}) {
    for (bool same : {false, true}) {  // all centres equal: the splits still halve
      CAPTURE(n);
      CAPTURE(same);
      std::vector<vec3f> hi, lo = random_boxes(rng, n, hi, same);
      detail::BvhTree t = detail::bvh_build(lo.data(), hi.data(), n);
      check_tree(t, lo, hi);
      if (n >= 65536) {  // the parallel build is the same tree as the one thread's
        detail::BvhTree serial = detail::bvh_build(lo.data(), hi.data(), n, false);
        CHECK(serial.links == t.links);
        CHECK(serial.bounds == t.bounds);
      }
      // Refit after moving every box: still nested.
      for (auto& v : lo) v.c[0] += 1.5f;
      for (auto& v : hi) v.c[0] += 1.5f;
      detail::bvh_refit(t, lo.data(), hi.data());
      check_tree(t, lo, hi);
    }
  }
}

TEST_CASE("the BVH builder keeps a tree within the traversal stack where SAH alone would not: exponentially spaced boxes") {
  // Centres at 1.5^k: binning puts all but the largest few in the lowest bin, so each SAH split
  // would peel a few items off (a tree hundreds of levels deep); past a depth the builder
  // splits at the median instead. 400 distinct positions (the float range), repeated.
  for (int64_t n : {400, 4000, 100000}) {
    CAPTURE(n);
    std::vector<vec3f> lo(static_cast<size_t>(n)), hi(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const float x = std::pow(1.5f, float(i % 400 - 200));
      lo[size_t(i)] = vec3f(x, 0, 0);
      hi[size_t(i)] = vec3f(x, 1, 1);
    }
    detail::BvhTree t = detail::bvh_build(lo.data(), hi.data(), n);
    const int depth = check_tree(t, lo, hi);
    CHECK(depth > int(std::ceil(std::log2(double(n)))));  // deeper than median splits: SAH ran
    MESSAGE(n << " boxes: depth " << depth);
  }
}

TEST_CASE("kjit::Mesh and kjit::Bvh refuse bad input with errors naming the object and the array") {
  NdArray pts = from_vector(std::vector<vec3f>{vec3f(0, 0, 0), vec3f(1, 0, 0), vec3f(0, 1, 0)});
  NdArray idx = from_vector(std::vector<int32_t>{0, 1, 2});
  CHECK(test::user_error([&] { Mesh m(pts, from_vector(std::vector<int32_t>{0, 1, 3})); }) ==
        "kjit::Mesh: indices[2] = 3 is outside the points array (3 points)");
  CHECK(test::user_error([&] { Mesh m(pts, from_vector(std::vector<int32_t>{0, -1, 2})); }) ==
        "kjit::Mesh: indices[1] = -1 is outside the points array (3 points)");
  CHECK(test::user_error([&] { Mesh m(pts, from_vector(std::vector<int32_t>{0, 1})); }) ==
        "kjit::Mesh: indices has 2 entries; a mesh needs three per triangle and at least one triangle");
  CHECK(test::user_error([&] { Mesh m(pts, zeros<int32_t>({0})); }) ==
        "kjit::Mesh: indices has 0 entries; a mesh needs three per triangle and at least one triangle");
  CHECK(test::user_error([&] { Mesh m(pts, from_vector(std::vector<float>{0, 1, 2})); }) ==
        "kjit::Mesh: indices must be a 1-D array of int32, not array1d<float32>");
  CHECK(test::user_error([&] { Mesh m(zeros<float>({3, 3}), idx); }) ==
        "kjit::Mesh: points must be a 1-D array of vec3f, not array2d<float32>");
  CHECK(test::user_error([&] { Mesh m(NdArray(), idx); }) == "kjit::Mesh: points is not an array (an empty NdArray)");
  NdArray nan_pts = from_vector(std::vector<vec3f>{vec3f(0, 0, 0), vec3f(1, NAN, 0), vec3f(0, 1, 0)});
  CHECK(test::user_error([&] { Mesh m(nan_pts, idx); }) ==
        "kjit::Mesh: points[1] has a NaN component; a mesh's points must be numbers");
  CHECK(test::user_error([&] { Mesh m(pts, idx, zeros<vec3f>({2})); }) ==
        "kjit::Mesh: velocities has 2 entries but points 3; give one velocity per point");
  // NaN introduced after the build: refit says so.
  NdArray moving = pts.copy();
  Mesh m(moving, idx);
  moving.copy_from(nan_pts);
  CHECK(test::user_error([&] { m.refit(); }) == "kjit::Mesh: points[1] has a NaN component; a mesh's points must be numbers");

  CHECK(test::user_error([&] { Bvh b(zeros<vec3f>({2}), zeros<vec3f>({3})); }) == "kjit::Bvh: lowers has 2 boxes but uppers 3");
  CHECK(test::user_error([&] { Bvh b(zeros<vec3f>({0}), zeros<vec3f>({0})); }) ==
        "kjit::Bvh: no boxes (lowers is empty); a BVH needs at least one");
  CHECK(test::user_error([&] {
          Bvh b(from_vector(std::vector<vec3f>{vec3f(0, 1, 0)}), from_vector(std::vector<vec3f>{vec3f(1, 0, 1)}));
        }) == "kjit::Bvh: box 0 has lowers > uppers on axis 1");
}

TEST_CASE("an empty, released or moved-from mesh is refused by a launch, naming it") {
  NdArray pts = from_vector(std::vector<vec3f>{vec3f(0, 0, 0), vec3f(1, 0, 0), vec3f(0, 1, 0)});
  NdArray idx = from_vector(std::vector<int32_t>{0, 1, 2});
  NdArray q = from_vector(std::vector<vec3f>{vec3f(0.2f, 0.2f, 1)});
  NdArray face = zeros<int32_t>({1}), uvr = zeros<vec3f>({1});
  const std::string empty =
      "kjit::Mesh is empty (default-constructed, moved from or released): build one before passing it to a launch";
  Mesh none;
  CHECK(test::user_error([&] { launch(meshk::closest, 1, none, q, 10.0f, face, uvr); }) == empty);
  Mesh m(pts, idx);
  launch(meshk::closest, 1, m, q, 10.0f, face, uvr);
  CHECK(face.to_vector<int32_t>()[0] == 0);
  Mesh moved = std::move(m);
  CHECK(test::user_error([&] { launch(meshk::closest, 1, m, q, 10.0f, face, uvr); }) == empty);  // NOLINT: moved from on purpose
  moved.release();
  CHECK(test::user_error([&] { launch(meshk::closest, 1, moved, q, 10.0f, face, uvr); }) == empty);
  Bvh b;
  CHECK(test::user_error([&] { (void)b.view(); }) ==
        "kjit::Bvh is empty (default-constructed, moved from or released): build one before passing it to a launch");
}

TEST_CASE("Mesh::refit: queries follow the moved points") {
  NdArray pts = from_vector(std::vector<vec3f>{vec3f(0, 0, 0), vec3f(1, 0, 0), vec3f(0, 1, 0), vec3f(5, 5, 5),
                                                vec3f(6, 5, 5), vec3f(5, 6, 5)});
  NdArray idx = from_vector(std::vector<int32_t>{0, 1, 2, 3, 4, 5});
  Mesh m(pts, idx);
  NdArray q = from_vector(std::vector<vec3f>{vec3f(0.2f, 0.2f, 0.5f)});
  NdArray face = zeros<int32_t>({1}), uvr = zeros<vec3f>({1});
  launch(meshk::closest, 1, m, q, 100.0f, face, uvr);
  CHECK(face.to_vector<int32_t>()[0] == 0);
  // Move the second triangle below the old root box and query beside it within 1: without a
  // refit reaching the kernel's node arrays, the stale box (z in [0, 5]) is 2.5 away and hides it.
  pts.copy_from(from_vector(std::vector<vec3f>{vec3f(0, 0, 0), vec3f(1, 0, 0), vec3f(0, 1, 0), vec3f(0, 0, -3),
                                                vec3f(1, 0, -3), vec3f(0, 1, -3)}));
  m.refit();
  q.copy_from(from_vector(std::vector<vec3f>{vec3f(0.2f, 0.2f, -2.5f)}));
  launch(meshk::closest, 1, m, q, 1.0f, face, uvr);
  CHECK(face.to_vector<int32_t>()[0] == 1);
  CHECK(uvr.to_vector<vec3f>()[0].c[0] == doctest::Approx(0.6f));
}
