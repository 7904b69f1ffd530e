// kjit::HashGrid and the kernel query: each query's candidates against brute force over every
// point (the points of the cells the box [p - r, p + r] touches, wrapped, each once), on random
// inputs with negative coordinates and wrap-around, points on cell borders, empty cells, one
// point, no points, many points in one cell, radii smaller and larger than a cell and boxes
// wider than the grid; the cell-sorted order; rebuilds and reserve; the errors (radius,
// non-finite points, unbuilt and freed grids, wrong arrays) with their texts; NVRTC.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "kjit/codegen/codegen.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/runtime/hash_grid.hpp"
#include "../builtins/nvrtc_check.hpp"

namespace grid_k {
using namespace kjit::dsl;
KJIT_MODULE(geometry_hash_grid)

/// Every candidate of each query: how many, and the first max_out of them.
KJIT_KERNEL(candidates, (Value<HashGrid> grid, Array<Vec3f> queries, Float r, Int max_out, Array<int> count, Array<int> list)) {
  Int i = tid();
  auto q = hash_grid_query(grid, queries[i], r);
  Var<int32_t> j = 0, n = 0;
  While([&] { return hash_grid_query_next(q, j); }, [&] {
    If(n < max_out, [&] { list[i * max_out + n] = j; });
    n = n + 1;
  });
  count[i] = n;
}

/// The sum of w over the neighbours within r of each point, threads in cell order.
KJIT_KERNEL(neighbour_sum, (Value<HashGrid> grid, Array<Vec3f> x, Array<float> w, Float r, Array<float> out)) {
  Int i = hash_grid_point_id(grid, tid());
  Vec3f p = x[i];
  auto q = hash_grid_query(grid, p, r);
  Var<int32_t> j = 0;
  Var<float> s = 0.0f;
  While([&] { return hash_grid_query_next(q, j); }, [&] {
    If(length_sq(x[j] - p) <= r * r, [&] { s = s + w[j]; });
  });
  out[i] = s;
}

/// The candidates through hash_grid_query_for: how many, and the first max_out of them.
KJIT_KERNEL(candidates_for, (Value<HashGrid> grid, Array<Vec3f> queries, Float r, Int max_out, Array<int> count, Array<int> list)) {
  Int i = tid();
  Var<int32_t> n = 0;
  hash_grid_query_for(grid, queries[i], r, [&](Int j) {
    If(n < max_out, [&] { list[i * max_out + n] = j; });
    n = n + 1;
  });
  count[i] = n;
}

/// A smooth density: the sum over neighbours of (r^2 - |x_j - x_i|^2)^2, which vanishes at r.
KJIT_KERNEL(density, (Value<HashGrid> grid, Array<Vec3f> x, Float r, Array<float> out)) {
  Int i = tid();
  Vec3f p = x[i];
  Var<float> s = 0.0f;
  hash_grid_query_for(grid, p, r, [&](Int j) {
    Float d2 = length_sq(x[j] - p);
    If(d2 < r * r, [&] { s = s + (r * r - d2) * (r * r - d2); });
  });
  out[i] = s;
}

/// The same through the While idiom: the adjoint refuses its state-changing condition.
KJIT_KERNEL(density_while, (Value<HashGrid> grid, Array<Vec3f> x, Float r, Array<float> out)) {
  Int i = tid();
  Vec3f p = x[i];
  auto q = hash_grid_query(grid, p, r);
  Var<int32_t> j = 0;
  Var<float> s = 0.0f;
  While([&] { return hash_grid_query_next(q, j); }, [&] {
    Float d2 = length_sq(x[j] - p);
    If(d2 < r * r, [&] { s = s + (r * r - d2) * (r * r - d2); });
  });
  out[i] = s;
}

KJIT_KERNEL(point_ids, (Value<HashGrid> grid, Array<int> out)) {
  Int i = tid();
  out[i] = hash_grid_point_id(grid, i);
}
}  // namespace grid_k

using namespace kjit;

namespace {
int32_t coord(float v) { return int32_t(std::min(std::max(std::floor(v), -1073741824.0f), 1073741824.0f)); }
int32_t wrap(int32_t c, int32_t d) { return (c % d + d) % d; }

/// Brute force: the points whose hashed cell is one of the box's (as Warp's query visits).
std::set<int> oracle(const std::vector<vec3f>& x, vec3f p, float r, float width, int dx, int dy, int dz) {
  const float inv = 1.0f / width;
  int dims[3] = {dx, dy, dz};
  std::set<int> box_cells;
  int lo[3], n[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = coord((p.c[a] - r) * inv);
    n[a] = std::min(coord((p.c[a] + r) * inv) - lo[a] + 1, dims[a]);
  }
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i)
        box_cells.insert((wrap(lo[2] + k, dz) * dy + wrap(lo[1] + j, dy)) * dx + wrap(lo[0] + i, dx));
  std::set<int> out;
  for (size_t m = 0; m < x.size(); ++m) {
    int c = (wrap(coord(x[m].c[2] * inv), dz) * dy + wrap(coord(x[m].c[1] * inv), dy)) * dx + wrap(coord(x[m].c[0] * inv), dx);
    if (box_cells.count(c)) out.insert(int(m));
  }
  return out;
}

/// Runs the candidates kernel and checks every query against the oracle: the same set, no
/// point twice, and every point within r among them.
void check_queries(const std::vector<vec3f>& x, const std::vector<vec3f>& queries, float width, float r, int dx, int dy, int dz) {
  HashGrid grid(dx, dy, dz);
  grid.build(from_vector(x), width);
  const int max_out = int(x.size()) + 1;
  const int nq = int(queries.size());
  NdArray count = zeros<int>({nq}), list = zeros<int>({int64_t(nq) * max_out});
  launch(grid_k::candidates, nq, grid, from_vector(queries), r, max_out, count, list);
  std::vector<int> c = count.to_vector<int>(), l = list.to_vector<int>();
  // hash_grid_query_for visits the same points in the same order.
  NdArray count_for = zeros<int>({nq}), list_for = zeros<int>({int64_t(nq) * max_out});
  launch(grid_k::candidates_for, nq, grid, from_vector(queries), r, max_out, count_for, list_for);
  CHECK(count_for.to_vector<int>() == c);
  CHECK(list_for.to_vector<int>() == l);
  for (int i = 0; i < nq; ++i) {
    CAPTURE(i);
    std::set<int> want = oracle(x, queries[size_t(i)], r, width, dx, dy, dz);
    std::vector<int> got(l.begin() + int64_t(i) * max_out, l.begin() + int64_t(i) * max_out + std::min(c[size_t(i)], max_out));
    std::set<int> got_set(got.begin(), got.end());
    CHECK(int(got.size()) == c[size_t(i)]);
    CHECK(got_set.size() == got.size());  // no point twice
    CHECK(got_set == want);
    for (size_t m = 0; m < x.size(); ++m) {
      double d2 = 0;
      for (int a = 0; a < 3; ++a) d2 += double(x[m].c[a] - queries[size_t(i)].c[a]) * double(x[m].c[a] - queries[size_t(i)].c[a]);
      if (d2 <= double(r) * r * (1 - 1e-6)) CHECK(got_set.count(int(m)) == 1);
    }
  }
}

std::vector<vec3f> random_points(int n, float lo, float hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<vec3f> x;
  for (int i = 0; i < n; ++i) x.push_back(vec3f{{u(rng), u(rng), u(rng)}});
  return x;
}
}  // namespace

TEST_CASE("hash grid queries match brute force: random points with negative coordinates, wrap-around, radii below and above a cell") {
  std::vector<vec3f> x = random_points(600, -3.0f, 3.0f, 1);
  std::vector<vec3f> queries = random_points(150, -3.5f, 3.5f, 2);
  queries.insert(queries.end(), x.begin(), x.begin() + 50);  // queries at the points themselves
  for (float r : {0.2f, 0.5f, 1.3f}) {
    CAPTURE(r);
    check_queries(x, queries, 0.5f, r, 8, 8, 8);  // 6 / 0.5 = 12 cells per axis on 8: wraps
    check_queries(x, queries, 0.5f, r, 5, 3, 7);  // unequal dims
  }
  check_queries(x, queries, 0.5f, 4.0f, 4, 4, 4);  // a box wider than the grid: every point once
  check_queries(x, queries, 2.0f, 0.1f, 1, 1, 1);  // a single cell holds everything
}

TEST_CASE("hash grid queries: points on cell borders, empty cells, one point, no points, many points in one cell") {
  // Integer and half-integer coordinates on a grid of width 0.5: every point on a border.
  std::vector<vec3f> border;
  for (int i = -4; i <= 4; ++i)
    for (int j = -2; j <= 2; ++j) border.push_back(vec3f{{0.5f * float(i), 1.0f * float(j), -0.5f * float(i + j)}});
  std::vector<vec3f> qb(border.begin(), border.end());
  qb.push_back(vec3f{{0.25f, 0.25f, 0.25f}});
  for (float r : {0.5f, 1.0f, 0.25f}) check_queries(border, qb, 0.5f, r, 16, 16, 16);
  // Sparse: two clusters far apart in a large grid, most cells empty; queries in between.
  std::vector<vec3f> sparse = random_points(20, 0.0f, 0.3f, 3), far = random_points(20, 50.0f, 50.3f, 4);
  sparse.insert(sparse.end(), far.begin(), far.end());
  check_queries(sparse, random_points(40, -1.0f, 52.0f, 5), 0.25f, 0.4f, 32, 32, 32);
  // One point; a query far away and one on it.
  check_queries({vec3f{{-1.25f, 2.0f, 7.5f}}}, {vec3f{{-1.25f, 2.0f, 7.5f}}, vec3f{{100, 100, 100}}, vec3f{{-1.0f, 2.0f, 7.0f}}}, 1.0f, 0.6f, 4, 4, 4);
  // Many points in one cell.
  check_queries(random_points(1000, 0.01f, 0.99f, 6), random_points(30, -1.0f, 2.0f, 7), 1.0f, 0.3f, 8, 8, 8);
  // No points: every query finds nothing.
  HashGrid empty(4, 4, 4);
  empty.build(zeros<vec3f>({0}), 1.0f);
  NdArray count = zeros<int>({3}), list = zeros<int>({3});
  launch(grid_k::candidates, 3, empty, from_vector(random_points(3, -1, 1, 8)), 2.0f, 1, count, list);
  CHECK(count.to_vector<int>() == std::vector<int>{0, 0, 0});
  CHECK(empty.num_points() == 0);
}

TEST_CASE("hash grid: cell order, point ids, rebuilds and reserve") {
  std::vector<vec3f> x = random_points(5000, -10.0f, 10.0f, 9);
  HashGrid grid(16, 16, 16);
  grid.reserve(8000);
  grid.build(from_vector(x), 1.5f);
  CHECK(grid.num_points() == 5000);
  CHECK(grid.cell_width() == 1.5f);
  std::vector<int> ids = grid.point_ids().to_vector<int>(), starts = grid.cell_starts().to_vector<int>(), ends = grid.cell_ends().to_vector<int>();
  // A permutation, grouped by cell: each cell's range holds exactly its points, in index order.
  std::vector<int> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 5000; ++i) REQUIRE(sorted[size_t(i)] == i);
  const float inv = 1.0f / 1.5f;
  int covered = 0;
  for (int c = 0; c < 16 * 16 * 16; ++c) {
    REQUIRE(starts[size_t(c)] <= ends[size_t(c)]);
    covered += ends[size_t(c)] - starts[size_t(c)];
    for (int k = starts[size_t(c)]; k < ends[size_t(c)]; ++k) {
      const vec3f& p = x[size_t(ids[size_t(k)])];
      CHECK((wrap(coord(p.c[2] * inv), 16) * 16 + wrap(coord(p.c[1] * inv), 16)) * 16 + wrap(coord(p.c[0] * inv), 16) == c);
      if (k > starts[size_t(c)]) CHECK(ids[size_t(k)] > ids[size_t(k) - 1]);
    }
  }
  CHECK(covered == 5000);
  // hash_grid_point_id in a kernel reads the same order, also after reserve() grew the array.
  NdArray out = zeros<int>({5000});
  launch(grid_k::point_ids, 5000, grid, out);
  CHECK(out.to_vector<int>() == ids);
  grid.reserve(20000);
  CHECK(grid.point_ids().to_vector<int>() == ids);
  launch(grid_k::point_ids, 5000, grid, out);
  CHECK(out.to_vector<int>() == ids);
  // The same build twice gives the same arrays (any thread count: the order is the points').
  grid.build(from_vector(x), 1.5f);
  CHECK(grid.point_ids().to_vector<int>() == ids);
  // Rebuild with fewer points and another radius, then more points than reserved.
  std::vector<vec3f> y = random_points(300, -2.0f, 2.0f, 10);
  grid.build(from_vector(y), 0.3f);
  CHECK(grid.num_points() == 300);
  CHECK(grid.point_ids().size() == 300);
  check_queries(y, random_points(40, -2.0f, 2.0f, 11), 0.3f, 0.3f, 16, 16, 16);
  std::vector<vec3f> z = random_points(9000, -2.0f, 2.0f, 12);
  grid.build(from_vector(z), 0.3f);
  CHECK(grid.num_points() == 9000);
  // Neighbour sums through the query against brute force (pairs near the radius skipped).
  std::vector<float> w(z.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + float(i % 7);
  NdArray sums = zeros<float>({9000});
  launch(grid_k::neighbour_sum, 9000, grid, from_vector(z), from_vector(w), 0.3f, sums);
  std::vector<float> s = sums.to_vector<float>();
  int compared = 0;
  for (size_t i = 0; i < z.size(); i += 37) {
    double want = 0;
    bool ambiguous = false;
    for (size_t j = 0; j < z.size(); ++j) {
      double d2 = 0;
      for (int a = 0; a < 3; ++a) d2 += double(z[j].c[a] - z[i].c[a]) * double(z[j].c[a] - z[i].c[a]);
      if (std::abs(d2 - 0.09) < 1e-5) ambiguous = true;
      if (d2 <= 0.09) want += w[j];
    }
    if (ambiguous) continue;
    ++compared;
    CHECK(double(s[i]) == doctest::Approx(want).epsilon(1e-5));
  }
  CHECK(compared > 200);
}

TEST_CASE("gradients through a hash grid query: the adjoint of what the kernel computes from the points it loads") {
  std::vector<vec3f> x = random_points(300, -1.0f, 1.0f, 15);
  HashGrid grid(8, 8, 8);
  grid.build(from_vector(x), 0.4f);
  NdArray out = zeros<float>({300});
  GradCheckOptions o;
  o.inputs = {"x"};
  o.tangents = false;  // forward mode reads no struct-field arrays yet (struct_arrays.cpp)
  o.dot_product = false;
  GradCheckReport r = check_gradients(grid_k::density, 300, {grid, from_vector(x), 0.4f, out}, o);
  INFO(r.str());
  CHECK(r.passed());
  REQUIRE(r.params.size() == 1);
  CHECK(r.params[0].checked > 30);
  // The While idiom is forward only: its adjoint is refused with a message saying why.
  NdArray gx = zeros<vec3f>({300});
  CHECK_THROWS_WITH_AS(launch_adjoint(grid_k::density_while, 300, {grid, from_vector(x), 0.4f, out}, {{}, gx, {}, zeros<float>({300})}),
                       doctest::Contains("a While condition changes state; the adjoint replays conditions and needs them free of effects"), Error);
}

TEST_CASE("hash grid errors: radius, non-finite points, unbuilt, freed, wrong arrays and dims") {
  NdArray out = zeros<int>({4});
  HashGrid grid(4, 4, 4);
  NdArray pts = from_vector(random_points(4, -1, 1, 13));
  CHECK_THROWS_WITH_AS(launch(grid_k::point_ids, 4, grid, out),
                       "kjit::HashGrid: a launch before build(): build the grid from points first", Error);
  CHECK_THROWS_WITH_AS(grid.build(pts, 0.0f), "kjit::HashGrid::build: radius must be positive and finite, got 0.000000", Error);
  CHECK_THROWS_WITH_AS(grid.build(pts, -1.0f), "kjit::HashGrid::build: radius must be positive and finite, got -1.000000", Error);
  CHECK_THROWS_WITH_AS(grid.build(pts, std::nanf("")), "kjit::HashGrid::build: radius must be positive and finite, got nan", Error);
  CHECK_THROWS_WITH_AS(grid.build(pts, std::numeric_limits<float>::infinity()),
                       "kjit::HashGrid::build: radius must be positive and finite, got inf", Error);
  std::vector<vec3f> bad = random_points(10, -1, 1, 14);
  bad[7].c[1] = std::nanf("");
  bad[3].c[2] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH_AS(grid.build(from_vector(bad), 1.0f),
                       doctest::Contains("kjit::HashGrid::build: point 3 is ("), Error);
  CHECK_THROWS_WITH_AS(grid.build(from_vector(bad), 1.0f), doctest::Contains(", inf): coordinates must be finite"), Error);
  CHECK_THROWS_WITH_AS(grid.build(zeros<float>({12}), 1.0f),
                       "kjit::HashGrid::build: points must be a 1-D array of vec3f, got float32 of 1 dimensions", Error);
  CHECK_THROWS_WITH_AS(grid.build(NdArray(), 1.0f), "kjit::HashGrid::build: points must be a 1-D array of vec3f, got no array", Error);
  CHECK_THROWS_WITH_AS(HashGrid(0, 4, 4), "kjit::HashGrid: dims must be at least 1 and hold fewer than 2^31 cells, got 0 x 4 x 4", Error);
  CHECK_THROWS_WITH_AS(HashGrid(2048, 2048, 1024),
                       "kjit::HashGrid: dims must be at least 1 and hold fewer than 2^31 cells, got 2048 x 2048 x 1024", Error);
  // A failed build leaves the grid unbuilt; a good one makes it usable; free() ends that.
  CHECK_THROWS_AS(launch(grid_k::point_ids, 4, grid, out), Error);
  grid.build(pts, 1.0f);
  launch(grid_k::point_ids, 4, grid, out);
  grid.free();
  CHECK_THROWS_WITH_AS(launch(grid_k::point_ids, 4, grid, out), "kjit::HashGrid: a launch after free()", Error);
  CHECK_THROWS_WITH_AS(grid.build(pts, 1.0f), "kjit::HashGrid: build() after free()", Error);
  CHECK_THROWS_WITH_AS(grid.reserve(10), "kjit::HashGrid: reserve() after free()", Error);
}

TEST_CASE("ModuleOptions::cpu_lanes = false leaves out the cpu lane functions, forward and adjoint") {
  std::vector<const ir::Function*> fns{&grid_k::neighbour_sum.def().ir(), &grid_k::density.def().ir()};
  codegen::CodegenOptions o;
  o.line_directives = false;
  std::string with = codegen::generate_module("lanes_on", fns, o).text;
  o.lane_functions = false;
  std::string without = codegen::generate_module("lanes_off", fns, o).text;
  CHECK(with.find("neighbour_sum_fwd_lanes") != std::string::npos);
  CHECK(with.find("density_adj_lanes") != std::string::npos);
  for (const char* f : {"neighbour_sum_fwd_lanes", "density_fwd_lanes", "density_adj_lanes"}) CHECK(without.find(f) == std::string::npos);
  CHECK(o.fingerprint().find(";lanes=0") != std::string::npos);
  o.lane_functions = true;
  CHECK(o.fingerprint().find("lanes") == std::string::npos);  // the default keeps existing module keys
}

TEST_CASE("hash grid kernels compile with NVRTC for sm_80 and sm_90") {
  std::string text = test::module_text("geometry_hash_grid_nvrtc", {&grid_k::candidates.def(), &grid_k::candidates_for.def(),
                                       &grid_k::neighbour_sum.def(), &grid_k::density.def(), &grid_k::point_ids.def()}, true);
  for (const char* arch : {"sm_80", "sm_90"}) {
    CAPTURE(arch);
    CHECK(test::nvrtc_compile(text, arch) == "");
  }
}
