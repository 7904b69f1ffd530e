// The cpu's adjoint lane functions (codegen/src/adjoint_lanes.cpp): with dense arrays, a
// kernel with branches, loops or atomics runs its adjoint a block of threads at a time (16, or
// 32 for float32 kernels with loops on AVX-512) under lane masks. Every way lanes diverge in
// the reverse sweep — If/ElseIf/Else, per-lane trip counts (nested, both signs, a uniform loop
// inside a divergent one), Break, Continue and Return, a loop past its checkpoint bound in some
// lanes, loops longer than their checkpoints, vector and matrix state, a value every lane
// shares — must give each thread's gradient exactly as the scalar adjoint does (memory and
// calls: adjoint_lane_effects.cpp). Each case runs the adjoint
// with dense arrays (lane blocks and a tail) and with strided ones (one thread at a time), and
// checks both against gradients of a C++ reference computed with forward-mode dual numbers.
// The suite runs with KJIT_BOUNDS_CHECK=1, whose modules have no lane functions: these cases
// turn it off.
#include "adjoint_lanes.hpp"

#include <cstring>

namespace lane_block_adds {
using namespace kjit::dsl;
KJIT_MODULE(autodiff_lanes_block_adds)

/// a and b are block loads (read once, at the thread's own element: their adjoints are added a
/// block at a time, kj::add_block); x is read twice, so its adjoint is added lane by lane.
KJIT_KERNEL(scaled, (Array<Vec3f> a, Array<Vec3f> b, Array<Float> x, Float c, Int steps, Array<Vec3f> out)) {
  Int i = tid();
  Var<Vec3f> w = a[i] * x[i];
  For(0, steps, [&](Int) { w = w * c; });
  out[i] = w + b[i] * x[i];
}
}  // namespace lane_block_adds

using namespace kjit;
using namespace lane_adjoint_tests;

TEST_CASE("every kernel of the suite's modules gets an adjoint lane function") {
  const std::string text = module_text("autodiff_lanes") + module_text("autodiff_lanes_bounded");
  for (const char* k : {"branches", "trips", "exits", "scatter", "aggregates", "shared", "copies", "calls", "prints", "bounded",
                        "branches_f32", "trips_f32", "exits_f32", "scatter_f32", "aggregates_f32"}) {
    CHECK_MESSAGE(text.find("__" + std::string(k) + "_fwd(") != std::string::npos, k);
    CHECK_MESSAGE(text.find("__" + std::string(k) + "_adj_lanes(") != std::string::npos, k);
  }
}

TEST_CASE("a kernel whose lane frame would be too large keeps its scalar adjoint, and its gradients") {
  ModuleOptions o;
  o.loop_checkpoints = 512;
  kjit::module("autodiff_lanes_large").set_options(o);
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  const std::string text = module_text("autodiff_lanes_large");
  CHECK(text.find("__large_fwd_lanes(") != std::string::npos);
  CHECK(text.find("__large_adj_lanes(") == std::string::npos);
  const int n = 37, iters = 5;
  std::vector<mat33d> ms(static_cast<size_t>(n));
  std::vector<double> xs = inputs(n), w = seeds(n);
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) ms[size_t(i)].c[r][c] = 1.0 + 0.1 * (r + 3 * c) + 0.01 * i;
  auto m = NdArray::from_vector(ms), x = NdArray::from_vector(xs), out = zeros<double>({n});
  auto gx = zeros<double>({n}), gout = NdArray::from_vector(w);
  launch(lane_adjoints_large::large, n, m, x, iters, out);
  launch_adjoint(lane_adjoints_large::large, n, {m, x, iters, out}, {NdArray{}, gx, {}, gout});
  const std::vector<double> g = gx.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    const mat33d& a = ms[size_t(i)];
    near(g[size_t(i)], w[size_t(i)] * (a.c[0][0] + a.c[1][1] + a.c[2][2]) * iters * std::pow(xs[size_t(i)], iters - 1));
  }
}

template <class S, class K>
void branches_case(const K& kernel) {
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        auto x = make_array(as<S>(inputs(n)), strided, keep), out = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        auto gx = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep), gout = make_array(as<S>(seeds(n)), strided, keep);
        launch(kernel, n, x, out);
        launch_adjoint(kernel, n, {x, out}, {gx, gout});
        return as_doubles(read_array<S>(gx));
      },
      [](int n) {
        std::vector<double> r(static_cast<size_t>(n));
        int sides[3] = {0, 0, 0};
        for (int i = 0; i < n; ++i) {
          const double x = double(S(input(i)));
          r[size_t(i)] = double(S(seed(i))) * branches_ref(Dual(x, 1.0), i).d;
          ++sides[x > 1.0 ? 0 : x > -1.0 ? 1 : 2];
        }
        for (int s : sides) CHECK(s > n / 6);  // every side is taken by many lanes
        return r;
      });
}

TEST_CASE("adjoint lanes: If, ElseIf and Else give each lane its own branch's gradient") {
  branches_case<double>(lane_adjoints::branches);
  branches_case<float>(lane_adjoints::branches_f32);
}

TEST_CASE("adjoint lanes: variables assigned outside values in a branch take no adjoint from the lanes that skip it") {
  // The adjoint of y (and z) flows into u (and v) only in the lanes that took the assigning
  // branch; the others keep carrying it to the variable's earlier value.
  both_layouts<double>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        auto x = make_array(inputs(n), strided, keep), out = make_array(std::vector<double>(static_cast<size_t>(n), 0.0), strided, keep);
        auto gx = make_array(std::vector<double>(static_cast<size_t>(n), 0.0), strided, keep), gout = make_array(seeds(n), strided, keep);
        launch(lane_adjoints::copies, n, x, out);
        launch_adjoint(lane_adjoints::copies, n, {x, out}, {gx, gout});
        return read_array<double>(gx);
      },
      [](int n) {
        std::vector<double> r(static_cast<size_t>(n));
        int sides[3] = {0, 0, 0};
        for (int i = 0; i < n; ++i) {
          r[size_t(i)] = seed(i) * copies_ref(Dual(input(i), 1.0), i).d;
          ++sides[input(i) > 1.5 ? 0 : input(i) < -1.5 ? 1 : 2];
        }
        for (int s : sides) CHECK(s > n / 6);  // each branch, and neither, in many lanes
        return r;
      });
}

/// Per-lane begin, end and step of the trips kernels: some lanes count down, some run none.
struct Trips {
  std::vector<int32_t> lo, hi, st;
  explicit Trips(int n) : lo(static_cast<size_t>(n)), hi(static_cast<size_t>(n)), st(static_cast<size_t>(n)) {
    for (int i = 0; i < n; ++i) {
      lo[size_t(i)] = i % 7 - 2;
      hi[size_t(i)] = (i * 5) % 11;
      st[size_t(i)] = i % 9 == 0 ? -1 - i % 2 : 1 + i % 3;
      if (st[size_t(i)] < 0) std::swap(lo[size_t(i)], hi[size_t(i)]);
    }
  }
};

template <class S, class K>
void trips_case(const K& kernel) {
  const int un = 2;
  auto x0 = [](int n) {
    std::vector<double> v = inputs(n);
    for (double& e : v) e = double(S(0.3 * e));
    return v;
  };
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        const Trips t(n);
        auto x = make_array(as<S>(x0(n)), strided, keep), out = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        auto L = make_array(t.lo, strided, keep), H = make_array(t.hi, strided, keep), St = make_array(t.st, strided, keep);
        auto gx = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep), gout = make_array(as<S>(seeds(n)), strided, keep);
        launch(kernel, n, x, L, H, St, un, out);
        launch_adjoint(kernel, n, {x, L, H, St, un, out}, {gx, {}, {}, {}, {}, gout});
        return as_doubles(read_array<S>(gx));
      },
      [&](int n) {
        const Trips t(n);
        const std::vector<double> x = x0(n);
        std::vector<double> r(static_cast<size_t>(n));
        int none = 0, down = 0;
        for (int i = 0; i < n; ++i) {
          const size_t k = size_t(i);
          r[k] = double(S(seed(i))) * trips_ref(Dual(x[k], 1.0), t.lo[k], t.hi[k], t.st[k], un).d;
          none += t.st[k] > 0 ? t.lo[k] >= t.hi[k] : t.lo[k] <= t.hi[k];
          down += t.st[k] < 0;
        }
        CHECK(none > 0);  // some lanes run no iteration
        CHECK(down > 0);
        return r;
      });
}

TEST_CASE("adjoint lanes: loops whose trip counts differ per lane reverse each lane's own iterations") {
  trips_case<double>(lane_adjoints::trips);
  trips_case<float>(lane_adjoints::trips_f32);
}

template <class S, class K>
void exits_case(const K& kernel) {
  const int iters = 9;
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        auto x = make_array(as<S>(inputs(n)), strided, keep), out = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        auto gx = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep), gout = make_array(as<S>(seeds(n)), strided, keep);
        launch(kernel, n, x, iters, out);
        launch_adjoint(kernel, n, {x, iters, out}, {gx, {}, gout});
        return as_doubles(read_array<S>(gx));
      },
      [&](int n) {
        std::vector<double> r(static_cast<size_t>(n));
        int exits[3] = {0, 0, 0};
        for (int i = 0; i < n; ++i) {
          int exit = 0;
          r[size_t(i)] = double(S(seed(i))) * exits_ref(Dual(double(S(input(i))), 1.0), i, iters, exit).d;
          ++exits[exit];
        }
        for (int e : exits) CHECK(e > n / 8);  // Return, the While's condition and Break: each common
        return r;
      });
}

TEST_CASE("adjoint lanes: Break, Continue and Return act per lane") {
  exits_case<double>(lane_adjoints::exits);
  exits_case<float>(lane_adjoints::exits_f32);
}

TEST_CASE("adjoint lanes: a loop past its checkpoint bound in some lanes reports it, and those lanes add nothing") {
  ModuleOptions o;
  o.loop_checkpoints = 4;  // bound: 16 iterations
  kjit::module("autodiff_lanes_bounded").set_options(o);
  for (bool uniform_loop : {false, true}) {
    CAPTURE(uniform_loop);
    each_layout([&](bool strided, std::vector<NdArray>& keep, int n) {
      const std::vector<double> xs = inputs(n), w = seeds(n);
      std::vector<int32_t> counts(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) counts[size_t(i)] = !uniform_loop && i % 5 == 0 ? 20 : 10;
      const int m = uniform_loop ? 17 : 3;  // past the bound in the lanes with x > 0
      auto x = make_array(xs, strided, keep), N = make_array(counts, strided, keep);
      auto out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
      auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
      launch(lane_adjoints_bounded::bounded, n, x, N, m, out);
      try {
        launch_adjoint(lane_adjoints_bounded::bounded, n, {x, N, m, out}, {gx, {}, {}, gout});
        FAIL("no error");
      } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::User);
        CHECK(std::string(e.what()).find("more than 16 iterations") != std::string::npos);
      }
      const std::vector<double> g = read_array<double>(gx);
      int past = 0;
      for (int i = 0; i < n; ++i) {
        const bool over = counts[size_t(i)] > 16 || (xs[size_t(i)] > 0.0 && m > 16);
        CAPTURE(i);
        if (over) REQUIRE(g[size_t(i)] == 0.0);
        else near(g[size_t(i)], w[size_t(i)] * bounded_ref(Dual(xs[size_t(i)], 1.0), counts[size_t(i)], m).d);
        past += over;
      }
      CHECK(past > n / 8);
      CHECK(past < n - n / 8);
    });
  }
}

TEST_CASE("adjoint lanes: loops longer than their checkpoints, within the bound, reverse segment by segment") {
  ModuleOptions o;
  o.loop_checkpoints = 4;  // checkpoints every 2 or 4 iterations past 4; bound 16
  kjit::module("autodiff_lanes_bounded").set_options(o);
  each_layout([&](bool strided, std::vector<NdArray>& keep, int n) {
    const std::vector<double> xs = inputs(n), w = seeds(n);
    std::vector<int32_t> counts(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) counts[size_t(i)] = (i * 7) % 17;  // 0..16: lanes end inside segments
    const int m = 7;                                              // the uniform loop: segments of 2
    auto x = make_array(xs, strided, keep), N = make_array(counts, strided, keep);
    auto out = make_array(std::vector<double>(static_cast<size_t>(n), 0.0), strided, keep);
    auto gx = make_array(std::vector<double>(static_cast<size_t>(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
    launch(lane_adjoints_bounded::bounded, n, x, N, m, out);
    launch_adjoint(lane_adjoints_bounded::bounded, n, {x, N, m, out}, {gx, {}, {}, gout});
    const std::vector<double> g = read_array<double>(gx);
    for (int i = 0; i < n; ++i)
      near(g[size_t(i)], w[size_t(i)] * bounded_ref(Dual(xs[size_t(i)], 1.0), counts[size_t(i)], m).d);
  });
}

struct Aggregates {
  std::vector<vec3d> p, w;
  std::vector<mat33d> m;
  std::vector<int32_t> n;
  explicit Aggregates(int count) : p(static_cast<size_t>(count)), w(static_cast<size_t>(count)), m(static_cast<size_t>(count)), n(static_cast<size_t>(count)) {
    for (int i = 0; i < count; ++i) {
      p[size_t(i)] = vec3d{{input(i), -input(i + 1), 0.25 * double(i % 8)}};
      w[size_t(i)] = vec3d{{seed(i), seed(i + 1), -seed(i + 2)}};
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) m[size_t(i)].c[r][c] = (r == c ? 1.0 : 0.1 * input(i + r + 3 * c));
      n[size_t(i)] = i % 6;
    }
  }
};

template <class S, class K>
void aggregates_case(const K& kernel) {
  using V = kjit::vec<3, S>;
  using M = kjit::mat<3, 3, S>;
  auto vecs = [](const std::vector<vec3d>& v) {
    std::vector<V> out(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      for (int c = 0; c < 3; ++c) out[i].c[c] = S(v[i].c[c]);
    return out;
  };
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        const Aggregates in(n);
        std::vector<M> ms(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) ms[size_t(i)].c[r][c] = S(in.m[size_t(i)].c[r][c]);
        auto p = make_array(vecs(in.p), strided, keep), m = make_array(ms, strided, keep), N = make_array(in.n, strided, keep);
        auto out = make_array(std::vector<V>(static_cast<size_t>(n)), strided, keep);
        auto gp = make_array(std::vector<V>(static_cast<size_t>(n)), strided, keep), gm = make_array(std::vector<M>(static_cast<size_t>(n)), strided, keep);
        auto gout = make_array(vecs(in.w), strided, keep);
        launch(kernel, n, p, m, N, out);
        launch_adjoint(kernel, n, {p, m, N, out}, {gp, gm, {}, gout});
        const std::vector<V> g = read_array<V>(gp);
        const std::vector<M> h = read_array<M>(gm);
        std::vector<double> all;
        for (int i = 0; i < n; ++i) {
          for (int c = 0; c < 3; ++c) all.push_back(g[size_t(i)].c[c]);
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) all.push_back(h[size_t(i)].c[r][c]);
        }
        return all;
      },
      [](int n) {
        const Aggregates in(n);
        std::vector<double> r;
        int branched = 0;
        for (int i = 0; i < n; ++i) {
          const size_t k = size_t(i);
          for (int component = 0; component < 12; ++component) {  // d (w . out) / d (p, then m)
            V3<Dual> w0;
            M3<Dual> a0;
            for (int c = 0; c < 3; ++c) w0.c[c] = Dual(double(S(in.p[k].c[c])), component == c ? 1.0 : 0.0);
            for (int row = 0; row < 3; ++row)
              for (int c = 0; c < 3; ++c)
                a0.c[row][c] = Dual(double(S(in.m[k].c[row][c])), component == 3 + 3 * row + c ? 1.0 : 0.0);
            const V3<Dual> o = aggregates_ref(w0, a0, in.n[k], branched);
            double d = 0.0;
            for (int c = 0; c < 3; ++c) d += double(S(in.w[k].c[c])) * o.c[c].d;
            r.push_back(d);
          }
        }
        CHECK(branched > n);  // taken in many lanes' iterations (counted once per gradient component)
        return r;
      });
}

TEST_CASE("adjoint lanes: vector and matrix state through a divergent loop") {
  aggregates_case<double>(lane_adjoints::aggregates);
  aggregates_case<float>(lane_adjoints::aggregates_f32);
}

TEST_CASE("adjoint lanes: a value every lane shares receives the sum of all lanes' adjoints") {
  each_layout([](bool strided, std::vector<NdArray>& keep, int n) {
    std::vector<double> xs = inputs(n);
    const std::vector<double> w = seeds(n);
    const double c = 0.7, common = 0.93;
    const int iters = 5;
    for (double& v : xs) v *= 0.2;
    auto x = make_array(xs, strided, keep), s = make_array(std::vector<double>{common}, strided, keep);
    auto out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gs = make_array(std::vector<double>{0.0}, strided, keep);
    auto gout = make_array(w, strided, keep);
    launch(lane_adjoints::shared, n, x, s, c, iters, out);
    launch_adjoint(lane_adjoints::shared, n, {x, s, c, iters, out}, {gx, gs, {}, {}, gout});
    const std::vector<double> g = read_array<double>(gx);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
      near(g[size_t(i)], w[size_t(i)] * shared_ref(Dual(xs[size_t(i)], 1.0), Dual(common), c, iters).d);
      sum += w[size_t(i)] * shared_ref(Dual(xs[size_t(i)]), Dual(common, 1.0), c, iters).d;
    }
    near(read_array<double>(gs)[0], sum);
  });
}


TEST_CASE("adjoint lanes: a block load's adjoints are added a block at a time, into what the array holds, and skipped when it is absent") {
  const std::string text = module_text("autodiff_lanes_block_adds");
  CHECK(text.find("if (adj_p_a.data) kj::add_block(&kj::elem(adj_p_a, kj_base), kj_o_adj_p_a);") != std::string::npos);
  CHECK(text.find("if (adj_p_b.data) kj::add_block(&kj::elem(adj_p_b, kj_base), kj_o_adj_p_b);") != std::string::npos);
  CHECK(text.find("add_block(&kj::elem(adj_p_x") == std::string::npos);
  const float c = 1.1f;
  const int steps = 6;
  std::array<std::vector<vec3f>, 2> ga;
  std::array<std::vector<float>, 2> gx;
  for (int n : {37, 1003}) {
    each_layout(
        [&](bool strided, std::vector<NdArray>& keep, int) {
          std::vector<vec3f> av(static_cast<size_t>(n)), bs(av.size()), gs(av.size()), before(av.size());
          std::vector<float> xs(av.size());
          for (int i = 0; i < n; ++i) {
            xs[size_t(i)] = float(input(i + 11));
            for (int k = 0; k < 3; ++k) {
              av[size_t(i)].c[k] = float(input(3 * i + k));
              bs[size_t(i)].c[k] = float(input(3 * i + k + 7));
              gs[size_t(i)].c[k] = float(seed(3 * i + k));
              before[size_t(i)].c[k] = 0.25f * float(k + 1);  // the adjoint adds into what is there
            }
          }
          auto a = make_array(av, strided, keep), b = make_array(bs, strided, keep), x = make_array(xs, strided, keep);
          auto out = make_array(std::vector<vec3f>(av.size()), strided, keep), gout = make_array(gs, strided, keep);
          auto adj_a = make_array(before, strided, keep), adj_x = make_array(std::vector<float>(xs.size(), 0.0f), strided, keep);
          launch(lane_block_adds::scaled, n, a, b, x, c, steps, out);
          launch_adjoint(lane_block_adds::scaled, n, {a, b, x, c, steps, out}, {adj_a, NdArray{}, adj_x, {}, {}, gout});
          ga[strided] = read_array<vec3f>(adj_a);
          gx[strided] = read_array<float>(adj_x);
          for (int i = 0; i < n; ++i) {  // against float64 closed forms
            const double cs = std::pow(double(c), steps);
            double dx = 0;
            for (int k = 0; k < 3; ++k) {
              const double g = gs[size_t(i)].c[k];
              const double want = before[size_t(i)].c[k] + g * xs[size_t(i)] * cs;
              REQUIRE(std::fabs(ga[strided][size_t(i)].c[k] - want) <= 1e-5 * (1.0 + std::fabs(want)));
              dx += g * (av[size_t(i)].c[k] * cs + bs[size_t(i)].c[k]);
            }
            REQUIRE(std::fabs(gx[strided][size_t(i)] - dx) <= 1e-5 * (1.0 + std::fabs(dx)));
          }
        },
        {n});
    // The lane blocks add what the scalar adjoint adds, bit for bit.
    CHECK(std::memcmp(ga[0].data(), ga[1].data(), ga[0].size() * sizeof(vec3f)) == 0);
    CHECK(std::memcmp(gx[0].data(), gx[1].data(), gx[0].size() * sizeof(float)) == 0);
  }
}
