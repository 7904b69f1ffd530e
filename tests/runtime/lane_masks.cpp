// The cpu's lane functions (codegen/src/lane_emitter.cpp): a kernel with control flow runs
// 16 threads at a time under lane masks when its arrays are dense. Every way lanes can
// diverge — an If, loop trip counts, Break, Continue and Return per lane, effects and loads
// under a mask, uniform loops inside divergent code — must give each thread exactly what it
// computes alone: the strided path (one thread at a time) and a C++ reference agree with it.
// The suite runs with KJIT_BOUNDS_CHECK=1, whose modules have no lane functions: these cases
// turn it off.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "kjit/kjit.hpp"
#include "strided_views.hpp"
#include "test_support.hpp"

using namespace kjit;
using kjit::test::make_array;
using kjit::test::read_array;

namespace lane_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_lane_masks)

inline const auto bump = func("bump", [](Double v, Array<Double> table, Int j) { return v + table[j]; });
/// Two results (issue 17's multi-valued functions): a struct of results per lane.
inline const auto halves = func("halves", [](Double v) { return std::make_tuple(v * 0.5, Int(v > 0.0)); });

/// Three-way divergent If, with a store and a variable under each side.
KJIT_KERNEL(divergent_if, (Array<Double> x, Array<Double> out, Array<Double> side)) {
  Int i = tid();
  Double v = x[i];
  Var<Double> y = 0.0;
  If(v > 1.0, [&] {
    y = v * v;
    side[i] = 1.0;
  }).ElseIf(v > -1.0, [&] { y = v * 0.5 + 3.0; }).Else([&] {
    y = -v;
    side[i] = -1.0;
  });
  out[i] = y;
}

/// Per-lane trip counts (begin, end and step from arrays, steps of both signs), a nested loop
/// whose count depends on the outer induction value and the lane, and a uniform loop inside.
KJIT_KERNEL(trip_counts, (Array<Int> lo, Array<Int> hi, Array<Int> step, Int uniform_n, Array<Double> out)) {
  Int i = tid();
  Var<Double> acc = 0.0;
  For(lo[i], hi[i], step[i], [&](Int k) {
    acc = acc + Double(k);
    For(0, k % 4, [&](Int m) { acc = acc * 1.001 + Double(m); });
    For(0, uniform_n, [&](Int) { acc = acc + 0.25; });
  });
  out[i] = acc;
}

/// A while loop that each lane leaves by its own Break, or by its condition.
KJIT_KERNEL(while_break, (Array<Double> x, Int n, Array<Double> out, Array<Int> steps)) {
  Int i = tid();
  Var<Double> y = x[i];
  Var<Int> k = 0;
  While([&] { return k < n; }, [&] {
    y = y * 1.25 + 0.1;
    If(y > 4.0, [&] { Break(); });
    k = k + 1;
  });
  out[i] = y;
  steps[i] = k;
}

/// Continue on a per-lane pattern of iterations.
KJIT_KERNEL(lane_continue, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int k) {
    If((k + i) % 3 == 0, [&] { Continue(); });
    y = y * 0.75 + Double(k);
  });
  out[i] = y;
}

/// Return per lane: before any loop, from inside a loop after a store, or never.
KJIT_KERNEL(lane_return, (Array<Double> x, Int n, Array<Double> out, Array<Int> tag)) {
  Int i = tid();
  Double v = x[i];
  If(v < -2.0, [&] { Return(); });
  tag[i] = 1;
  Var<Double> y = v;
  For(0, n, [&](Int) {
    y = y * 1.5 + 0.5;
    If(y > 3.0, [&] {
      out[i] = y;
      tag[i] = 2;
      Return();
    });
  });
  out[i] = -y;
}

/// Effects and faulting reads under a mask: atomics counted per active lane, a read at an
/// index far out of bounds for inactive lanes, device functions reading a table and
/// returning two results.
KJIT_KERNEL(masked_effects, (Array<Double> x, Array<Double> small, Array<Int> counts, Array<Double> out)) {
  Int i = tid();
  Int m = small.shape(0);
  Double v = x[i];
  Int j = where(i < m, i, 1 << 29);  // only lanes with i < m may use j
  Var<Double> y = v;  // a select after the read, in a loop that vectorizes: the read must be masked
  If(i < m, [&] { y = small[j] * 2.0; });  // runs inside the lane loop (both sides, selects)
  // The same read in masked lane loops (a loop in the branch keeps it out of the lane loop):
  // without the mask GCC gathers all 16 lanes, and one far out of bounds faults.
  If(i < m, [&] { For(0, 1, [&](Int) { y = y + small[j]; }); });
  If(i < m, [&] { out[i] = y + bump(v, small, j); }).Else([&] { out[i] = y; });
  If(v > 0.0, [&] { atomic_add(counts, i % 4, 1); });
  If(v < 1.0, [&] {
    auto [h, positive] = halves(v);
    out[i] = out[i] + h + Double(positive);
  });
}

/// Vector, matrix and bool variables carried through divergent loops.
KJIT_KERNEL(aggregates, (Array<Vec3d> p, Array<Int> n, Array<Vec3d> out, Array<Mat33d> mats, Array<Int> flags)) {
  Int i = tid();
  Var<Vec3d> w = p[i];
  Var<Mat33d> a = Mat33d(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0);
  Var<Bool> seen = false;
  For(0, n[i], [&](Int k) {
    w = w * 0.5 + Vec3d(Double(k), 1.0, -1.0);
    If(w.x() > 2.0, [&] {
      seen = true;
      a = a * 2.0;
    });
  });
  out[i] = w;
  mats[i] = a;
  flags[i] = where(seen, Int(1), Int(0));
}

/// Variables that only ever get uniform values, but under divergent branches: they differ
/// per lane (the uniformity analysis must see it), also as a loop's condition, found only
/// on the analysis' second pass.
KJIT_KERNEL(uniform_stores, (Array<Double> x, Array<Double> out, Array<Int> count)) {
  Int i = tid();
  Double v = x[i];
  Var<Double> u = 1.0;
  If(v > 0.0, [&] { u = 2.0; });
  Var<Int> k = 0;
  Var<Int> n = 0;
  While([&] { return k < 6; }, [&] {
    If(v > 0.5 * Double(k), [&] { k = k + 2; }).Else([&] { k = k + 1; });
    n = n + 1;
  });
  out[i] = u;
  count[i] = n;
}

/// A divergent If small enough to run inside its lane loop (both sides, selects) beside one
/// too long for that (30 traced statements: masked loops, skipped when no lane takes it) and
/// one holding a loop (masked, whatever its size).
KJIT_KERNEL(branch_forms, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Double v = x[i];
  Var<Double> y = v;
  If(v > 0.0, [&] { y = y * 2.0; }).Else([&] { y = y - 1.0; });
  If(v > 1.0, [&] {
    for (int k = 0; k < 30; ++k) y = y * 1.01 + 0.5;  // C++ loop: 30 statements in the trace
  });
  If(v < -1.0, [&] { For(0, i % 5, [&](Int) { y = y * 0.5; }); });
  out[i] = y;
}

inline const auto halve_f32 = func("halve_f32", [](Float v) { return v * 0.5f; });

/// A float32 kernel with a loop: its lane function runs KJ_WIDE_LANES (32 with AVX-512)
/// threads per block, the adjoint's width, each lane with its own loop counter (its own
/// begin and end), Break and a While; a vector variable through a divergent loop, and a device
/// function and an atomic under a divergent branch.
KJIT_KERNEL(wide_f32, (Array<Float> x, Array<Int> n, Array<Float> out, Array<Int> count, Array<Vec3f> vout,
                       Array<Int> hits)) {
  Int i = tid();
  Var<Float> y = x[i];
  Var<Int> k = 0;
  For(i % 3, n[i], [&](Int j) {  // no jump: the counter itself is per lane
    y = y * 1.01f + Float(j) * 0.25f;
    k = k + 1;
  });
  For(0, n[i], [&](Int) {
    If(y > 4.0f, [&] { Break(); });
    y = y * 1.5f + 0.125f;
    k = k + 1;
  });
  While([&] { return y < -1.0f; }, [&] { y = y * 0.5f + 0.25f; k = k + 1; });
  If(y < 0.0f, [&] { y = -y; });
  Var<Vec3f> w = Vec3f(y, 1.0f, -y);
  For(0, n[i] % 4, [&](Int) { w = w * 0.75f + Vec3f(0.5f, 0.25f, 0.125f); });
  If(y > 2.0f, [&] {
    y = halve_f32(y);
    atomic_add(hits, i % 7, 1);
  });
  out[i] = y;
  count[i] = k;
  vout[i] = w;
}

/// Divergent control flow in a 2-D launch (lanes cross rows).
KJIT_KERNEL(grid, (Array<Double, 2> x, Array<Double, 2> out)) {
  auto [r, c] = tid<2>();
  Var<Double> y = x(r, c);
  For(0, c % 5, [&](Int) { y = y + Double(r); });
  If(y > 10.0, [&] { y = y - 10.0; });
  out(r, c) = y;
}
}  // namespace lane_tests

namespace {

const int kN = 1003;  // 62 full blocks of 16 lanes and a tail of 11

/// Inputs that make neighbouring lanes take different paths.
double input(int i) { return std::sin(double(i) * 1.7) * 3.0; }

/// Runs `check(strided, keep, xs)` for dense arrays (lane blocks) and strided ones (one thread
/// at a time); xs are kN inputs from input(), `keep` holds the strided views' buffers.
template <class Check>
void each_layout(Check check) {
  // The suite runs with KJIT_BOUNDS_CHECK=1, whose modules have no lane functions.
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  std::vector<double> xs(kN);
  for (int i = 0; i < kN; ++i) xs[size_t(i)] = input(i);
  for (bool strided : {false, true}) {
    CAPTURE(strided);
    std::vector<NdArray> keep;
    check(strided, keep, xs);
  }
}

}  // namespace

TEST_CASE("a divergent If gives each lane its own branch") {
  each_layout([](bool strided, std::vector<NdArray>& keep, const std::vector<double>& xs) {
    auto x = make_array(xs, strided, keep);
    auto out = make_array(std::vector<double>(kN, 7.0), strided, keep);
    auto side = make_array(std::vector<double>(kN, 0.0), strided, keep);
    launch(lane_tests::divergent_if, kN, x, out, side);
    auto o = read_array<double>(out), s = read_array<double>(side);
    int sides[3] = {0, 0, 0};
    for (int i = 0; i < kN; ++i) {
      double v = xs[size_t(i)];
      double y = v > 1.0 ? v * v : v > -1.0 ? v * 0.5 + 3.0 : -v;
      double sd = v > 1.0 ? 1.0 : v > -1.0 ? 0.0 : -1.0;
      REQUIRE(o[size_t(i)] == y);
      REQUIRE(s[size_t(i)] == sd);
      ++sides[int(sd) + 1];
    }
    CHECK(sides[0] > 100);  // every side is taken by many lanes
    CHECK(sides[1] > 100);
    CHECK(sides[2] > 100);
  });
}

TEST_CASE("loops whose begin, end and step differ per lane run each lane's own iterations") {
  each_layout([](bool strided, std::vector<NdArray>& keep, const std::vector<double>&) {
    std::vector<int32_t> lo(kN), hi(kN), st(kN);
    for (int i = 0; i < kN; ++i) {
      lo[size_t(i)] = i % 7 - 2;
      hi[size_t(i)] = (i * 5) % 11;
      st[size_t(i)] = i % 9 == 0 ? -1 - i % 2 : 1 + i % 3;  // some lanes count down, some run none
      if (st[size_t(i)] < 0) std::swap(lo[size_t(i)], hi[size_t(i)]);
    }
    const int uniform_n = 2;
    auto out = make_array(std::vector<double>(kN, 0.0), strided, keep);
    launch(lane_tests::trip_counts, kN, make_array(lo, strided, keep), make_array(hi, strided, keep), make_array(st, strided, keep),
           uniform_n, out);
    auto o = read_array<double>(out);
    for (int i = 0; i < kN; ++i) {
      double acc = 0.0;
      int s = st[size_t(i)];
      for (int k = lo[size_t(i)]; s > 0 ? k < hi[size_t(i)] : k > hi[size_t(i)]; k += s) {
        acc = acc + double(k);
        for (int m = 0; m < k % 4; ++m) acc = acc * 1.001 + double(m);
        for (int u = 0; u < uniform_n; ++u) acc = acc + 0.25;
      }
      REQUIRE(o[size_t(i)] == acc);
    }
  });
}

TEST_CASE("a float32 loop kernel's wide lane blocks give each lane its own iterations, in full blocks and the tail") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  for (int size : {1, 31, 32, 33, 64, 95, kN}) {
    CAPTURE(size);
    std::vector<float> xs(static_cast<size_t>(size));
    std::vector<int32_t> ns(static_cast<size_t>(size));
    for (int i = 0; i < size; ++i) xs[size_t(i)] = float(input(i)), ns[size_t(i)] = (i * 7) % 13;
    for (bool strided : {false, true}) {
      CAPTURE(strided);
      std::vector<NdArray> keep;
      auto out = make_array(std::vector<float>(size_t(size), 9.0f), strided, keep);
      auto count = make_array(std::vector<int32_t>(size_t(size), -1), strided, keep);
      auto vout = make_array(std::vector<vec3f>(size_t(size)), strided, keep);
      auto hits = make_array(std::vector<int32_t>(7, 0), strided, keep);
      launch(lane_tests::wide_f32, size, make_array(xs, strided, keep), make_array(ns, strided, keep), out, count, vout,
             hits);
      auto o = read_array<float>(out);
      auto c = read_array<int32_t>(count);
      auto v = read_array<vec3f>(vout);
      auto h = read_array<int32_t>(hits);
      std::vector<int32_t> expected_hits(7, 0);
      for (int i = 0; i < size; ++i) {
        float y = xs[size_t(i)];
        int k = 0;
        for (int j = i % 3; j < ns[size_t(i)]; ++j) y = y * 1.01f + float(j) * 0.25f, ++k;
        for (int j = 0; j < ns[size_t(i)]; ++j) {
          if (y > 4.0f) break;
          y = y * 1.5f + 0.125f;
          ++k;
        }
        while (y < -1.0f) y = y * 0.5f + 0.25f, ++k;
        if (y < 0.0f) y = -y;
        float w[3] = {y, 1.0f, -y};
        const float step[3] = {0.5f, 0.25f, 0.125f};
        for (int r = 0; r < ns[size_t(i)] % 4; ++r)
          for (int q = 0; q < 3; ++q) w[q] = w[q] * 0.75f + step[q];
        if (y > 2.0f) y = y * 0.5f, ++expected_hits[size_t(i % 7)];
        REQUIRE(o[size_t(i)] == y);
        REQUIRE(c[size_t(i)] == k);
        for (int q = 0; q < 3; ++q) REQUIRE(v[size_t(i)].c[q] == w[q]);
      }
      CHECK(h == expected_hits);
    }
  }
}

TEST_CASE("Break, Continue and Return act per lane") {
  each_layout([](bool strided, std::vector<NdArray>& keep, const std::vector<double>& xs) {
    auto x = make_array(xs, strided, keep);
    const int n = 9;
    {
      auto out = make_array(std::vector<double>(kN, 0.0), strided, keep);
      auto steps = make_array(std::vector<int32_t>(kN, -1), strided, keep);
      launch(lane_tests::while_break, kN, x, n, out, steps);
      auto o = read_array<double>(out);
      auto k = read_array<int32_t>(steps);
      int broke = 0;
      for (int i = 0; i < kN; ++i) {
        double y = xs[size_t(i)];
        int s = 0;
        while (s < n) {
          y = y * 1.25 + 0.1;
          if (y > 4.0) break;
          s = s + 1;
        }
        REQUIRE(o[size_t(i)] == y);
        REQUIRE(k[size_t(i)] == s);
        broke += s < n;
      }
      CHECK(broke > 100);
      CHECK(broke < kN - 100);
    }
    {
      auto out = make_array(std::vector<double>(kN, 0.0), strided, keep);
      launch(lane_tests::lane_continue, kN, x, n, out);
      auto o = read_array<double>(out);
      for (int i = 0; i < kN; ++i) {
        double y = xs[size_t(i)];
        for (int k = 0; k < n; ++k) {
          if ((k + i) % 3 == 0) continue;
          y = y * 0.75 + double(k);
        }
        REQUIRE(o[size_t(i)] == y);
      }
    }
    {
      auto out = make_array(std::vector<double>(kN, 9.0), strided, keep);
      auto tag = make_array(std::vector<int32_t>(kN, 0), strided, keep);
      launch(lane_tests::lane_return, kN, x, n, out, tag);
      auto o = read_array<double>(out);
      auto t = read_array<int32_t>(tag);
      int tags[3] = {0, 0, 0};
      for (int i = 0; i < kN; ++i) {
        double v = xs[size_t(i)];
        double expect_out = 9.0;
        int expect_tag = 0;
        if (!(v < -2.0)) {
          expect_tag = 1;
          double y = v;
          bool returned = false;
          for (int k = 0; k < n && !returned; ++k) {
            y = y * 1.5 + 0.5;
            if (y > 3.0) {
              expect_out = y;
              expect_tag = 2;
              returned = true;
            }
          }
          if (!returned) expect_out = -y;
        }
        REQUIRE(o[size_t(i)] == expect_out);
        REQUIRE(t[size_t(i)] == expect_tag);
        ++tags[expect_tag];
      }
      CHECK(tags[0] > 50);  // all three exits are common
      CHECK(tags[1] > 50);
      CHECK(tags[2] > 50);
    }
  });
}

TEST_CASE("inactive lanes neither read out of bounds nor run effects") {
  each_layout([](bool strided, std::vector<NdArray>& keep, const std::vector<double>& xs) {
    std::vector<double> table(37);
    for (size_t k = 0; k < table.size(); ++k) table[k] = 0.5 * double(k);
    auto out = make_array(std::vector<double>(kN, 0.0), strided, keep);
    auto counts = make_array(std::vector<int32_t>(4, 0), strided, keep);
    launch(lane_tests::masked_effects, kN, make_array(xs, strided, keep), make_array(table, strided, keep), counts, out);
    auto o = read_array<double>(out);
    auto c = read_array<int32_t>(counts);
    int expect[4] = {0, 0, 0, 0};
    for (int i = 0; i < kN; ++i) {
      double v = xs[size_t(i)];
      double e = i < 37 ? table[size_t(i)] * 2.0 + table[size_t(i)] + (v + table[size_t(i)]) : v;
      if (v < 1.0) e = e + v * 0.5 + double(v > 0.0);
      REQUIRE(o[size_t(i)] == e);
      if (v > 0.0) ++expect[i % 4];
    }
    for (int b = 0; b < 4; ++b) CHECK(c[size_t(b)] == expect[b]);
  });
}

TEST_CASE("vector, matrix and bool variables keep each lane's value through divergent loops") {
  each_layout([](bool strided, std::vector<NdArray>& keep, const std::vector<double>&) {
    std::vector<vec3d> ps(kN);
    std::vector<int32_t> ns(kN);
    for (int i = 0; i < kN; ++i) {
      ps[size_t(i)] = vec3d{{input(i), -input(i + 1), 0.25 * double(i % 8)}};
      ns[size_t(i)] = i % 6;
    }
    auto out = make_array(std::vector<vec3d>(kN), strided, keep);
    auto mats = make_array(std::vector<mat33d>(kN), strided, keep);
    auto flags = make_array(std::vector<int32_t>(kN, -1), strided, keep);
    launch(lane_tests::aggregates, kN, make_array(ps, strided, keep), make_array(ns, strided, keep), out, mats, flags);
    auto o = read_array<vec3d>(out);
    auto m = read_array<mat33d>(mats);
    auto f = read_array<int32_t>(flags);
    for (int i = 0; i < kN; ++i) {
      vec3d w = ps[size_t(i)];
      double scale = 1.0;
      bool seen = false;
      for (int k = 0; k < ns[size_t(i)]; ++k) {
        w = vec3d{{w.c[0] * 0.5 + double(k), w.c[1] * 0.5 + 1.0, w.c[2] * 0.5 - 1.0}};
        if (w.c[0] > 2.0) {
          seen = true;
          scale *= 2.0;
        }
      }
      for (int d = 0; d < 3; ++d) REQUIRE(o[size_t(i)].c[d] == w.c[d]);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) REQUIRE(m[size_t(i)].c[r][c] == (r == c ? scale : 0.0));
      REQUIRE(f[size_t(i)] == int32_t(seen));
    }
  });
}

TEST_CASE("uniform values stored under divergent branches make their variables differ per lane") {
  each_layout([](bool strided, std::vector<NdArray>& keep, const std::vector<double>& xs) {
    auto out = make_array(std::vector<double>(kN, 0.0), strided, keep);
    auto count = make_array(std::vector<int32_t>(kN, 0), strided, keep);
    launch(lane_tests::uniform_stores, kN, make_array(xs, strided, keep), out, count);
    auto o = read_array<double>(out);
    auto c = read_array<int32_t>(count);
    for (int i = 0; i < kN; ++i) {
      double v = xs[size_t(i)];
      int k = 0, n = 0;
      while (k < 6) {
        k += v > 0.5 * double(k) ? 2 : 1;
        ++n;
      }
      REQUIRE(o[size_t(i)] == (v > 0.0 ? 2.0 : 1.0));
      REQUIRE(c[size_t(i)] == n);
    }
  });
}

TEST_CASE("small, long and looping divergent branches give each lane its own result") {
  each_layout([](bool strided, std::vector<NdArray>& keep, const std::vector<double>& xs) {
    auto out = make_array(std::vector<double>(kN, 0.0), strided, keep);
    launch(lane_tests::branch_forms, kN, make_array(xs, strided, keep), out);
    auto o = read_array<double>(out);
    for (int i = 0; i < kN; ++i) {
      double v = xs[size_t(i)], y = v;
      y = v > 0.0 ? y * 2.0 : y - 1.0;
      if (v > 1.0)
        for (int k = 0; k < 30; ++k) y = y * 1.01 + 0.5;
      if (v < -1.0)
        for (int k = 0; k < i % 5; ++k) y = y * 0.5;
      REQUIRE(o[size_t(i)] == y);
    }
  });
}

TEST_CASE("divergent control flow in a 2-D launch whose lanes cross rows") {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);  // bounds-checked modules have no lane functions
  const int rows = 9, cols = 13;  // 117 threads: blocks of 16 span rows
  std::vector<double> xs(rows * cols);
  for (int k = 0; k < rows * cols; ++k) xs[size_t(k)] = double(k % 17);
  auto x = NdArray::from_vector(xs, {rows, cols});
  auto out = zeros<double>({rows, cols});
  launch(lane_tests::grid, Dims{rows, cols}, x, out);
  auto o = out.to_vector<double>();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double y = xs[size_t(r * cols + c)];
      for (int k = 0; k < c % 5; ++k) y = y + double(r);
      if (y > 10.0) y = y - 10.0;
      REQUIRE(o[size_t(r * cols + c)] == y);
    }
}
