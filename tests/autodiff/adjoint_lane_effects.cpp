// The cpu's adjoint lane functions (codegen/src/adjoint_lanes.cpp) where rules touch memory or
// run code for a lane: atomics under masks and reads at other threads' indices (atomic adjoint
// adds, atomic_max's consumed elements, an omitted cotangent), device functions per lane, and
// print() of uniform and per-lane values. As in adjoint_lanes.cpp, each case runs dense (lane
// blocks) and strided (one thread at a time) against forward-mode dual numbers.
#include "adjoint_lanes.hpp"

using namespace kjit;
using namespace lane_adjoint_tests;

namespace {
std::vector<int32_t> scatter_indices(int n) {
  std::vector<int32_t> idx(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) idx[size_t(i)] = (i * 7 + 3) % n;
  return idx;
}
/// The scatter kernels' acc before the launch, and its cotangents.
std::vector<double> acc_start() {
  std::vector<double> a(10, 0.0);
  for (int s = 7; s < 10; ++s) a[size_t(s)] = -100.0;
  return a;
}
std::vector<double> acc_seeds() {
  std::vector<double> w(10);
  for (int s = 0; s < 10; ++s) w[size_t(s)] = 0.3 + 0.1 * s;
  return w;
}

template <class S, class K>
void scatter_case(const K& kernel) {
  // The gradients with acc's adjoint, then without it (the sweep reads it: lane blocks then
  // run one thread at a time).
  both_layouts<S>(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        auto x = make_array(as<S>(inputs(n)), strided, keep), I = make_array(scatter_indices(n), strided, keep);
        auto acc = make_array(as<S>(acc_start()), strided, keep), out = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        auto gx = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep), gout = make_array(as<S>(seeds(n)), strided, keep);
        auto gacc = make_array(as<S>(acc_seeds()), strided, keep);
        launch(kernel, n, x, I, acc, out);
        launch_adjoint(kernel, n, {x, I, acc, out}, {gx, {}, gacc, gout});
        // atomic_max's adjoint consumed the winners' elements; atomic_add's are left as they were.
        const std::vector<S> ga = read_array<S>(gacc);
        for (int s = 0; s < 7; ++s) CHECK(ga[size_t(s)] == S(acc_seeds()[size_t(s)]));
        for (int s = 7; s < 10; ++s) CHECK(ga[size_t(s)] == S(0));
        auto gx2 = make_array(std::vector<S>(static_cast<size_t>(n), S(0)), strided, keep);
        launch_adjoint(kernel, n, {x, I, acc, out}, {gx2, {}, {}, gout});
        std::vector<double> g = as_doubles(read_array<S>(gx)), g2 = as_doubles(read_array<S>(gx2));
        g.insert(g.end(), g2.begin(), g2.end());
        return g;
      },
      [](int n) {
        // L = sum w out + sum wacc acc over the whole launch, one dual seed per input.
        const std::vector<int32_t> idx = scatter_indices(n);
        std::vector<double> acc0 = acc_start(), w = seeds(n), wacc = acc_seeds();
        for (double& e : w) e = double(S(e));
        for (double& e : wacc) e = double(S(e));
        auto loss = [&](const std::vector<Dual>& xd) {
          std::vector<Dual> a(acc0.begin(), acc0.end());
          Dual L = 0.0;
          for (int i = 0; i < n; ++i) {
            const Dual v = xd[size_t(i)], gg = xd[size_t(idx[size_t(i)])];
            if (v.v > 0.0) a[size_t(i % 7)] = a[size_t(i % 7)] + v * gg * xd[size_t((i * 3 + 1) % n)];
            L = L + w[size_t(i)] * (v.v < 0.5 ? gg * gg + v : sin(gg) * v);
            if (gg.v > 1.0 && (gg * v).v > a[size_t(7 + i % 3)].v) a[size_t(7 + i % 3)] = gg * v;
          }
          for (int s = 0; s < 10; ++s) L = L + wacc[size_t(s)] * a[size_t(s)];
          return L;
        };
        std::vector<Dual> xd;
        for (int i = 0; i < n; ++i) xd.emplace_back(double(S(input(i))));
        std::vector<double> r(2 * static_cast<size_t>(n));
        for (int pass = 0; pass < 2; ++pass) {
          if (pass == 1) std::fill(wacc.begin(), wacc.end(), 0.0);
          for (int j = 0; j < n; ++j) {
            xd[size_t(j)].d = 1.0;
            r[size_t(pass * n + j)] = loss(xd).d;
            xd[size_t(j)].d = 0.0;
          }
        }
        return r;
      },
      {37, 203});
}

}  // namespace

TEST_CASE("adjoint lanes: atomics under masks and reads at other threads' indices") {
  scatter_case<double>(lane_adjoints::scatter);
  scatter_case<float>(lane_adjoints::scatter_f32);
}

/// The aggregates kernels' inputs (in double; float kernels get them rounded).
TEST_CASE("adjoint lanes: device functions run per lane under a divergent branch") {
  each_layout([](bool strided, std::vector<NdArray>& keep, int n) {
    const std::vector<double> xs = inputs(n), w = seeds(n);
    const std::vector<double> table{0.9, 1.05, 0.8, 1.1, 0.95};
    auto x = make_array(xs, strided, keep), t = make_array(table, strided, keep);
    auto out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
    auto gt = make_array(std::vector<double>(table.size(), 0.0), strided, keep), gout = make_array(w, strided, keep);
    launch(lane_adjoints::calls, n, x, t, out);
    launch_adjoint(lane_adjoints::calls, n, {x, t, out}, {gx, gt, gout});
    const std::vector<double> g = read_array<double>(gx), gtab = read_array<double>(gt);
    std::vector<double> tsum(table.size(), 0.0);
    for (int i = 0; i < n; ++i) {
      const double v = xs[size_t(i)];
      std::vector<Dual> td(table.begin(), table.end());
      if (!(v > 0.0)) {
        near(g[size_t(i)], w[size_t(i)] * 2.0 * v);
        continue;
      }
      near(g[size_t(i)], w[size_t(i)] * (smooth_ref(Dual(v, 1.0), td, i % 5) * Dual(v, 1.0)).d);
      td[size_t(i % 5)].d = 1.0;
      tsum[size_t(i % 5)] += w[size_t(i)] * (smooth_ref(Dual(v), td, i % 5) * v).d;
    }
    for (size_t j = 0; j < table.size(); ++j) near(gtab[j], tsum[j]);
  });
}

TEST_CASE("adjoint lanes: print() prints each thread's adjoints, of uniform values too") {
  std::vector<std::string> printed[2];
  each_layout(
      [&](bool strided, std::vector<NdArray>& keep, int n) {
        const std::vector<double> xs = inputs(n), w = seeds(n);
        auto x = make_array(xs, strided, keep), out = make_array(std::vector<double>(size_t(n), 0.0), strided, keep);
        auto gx = make_array(std::vector<double>(size_t(n), 0.0), strided, keep), gout = make_array(w, strided, keep);
        test::capture_stdout([&] { launch(lane_adjoints::prints, n, x, 1.5, out); });  // the forward's prints
        const std::string text =
            test::capture_stdout([&] { launch_adjoint(lane_adjoints::prints, n, {x, 1.5, out}, {gx, {}, gout}); });
        std::vector<std::string>& lines = printed[strided];
        for (size_t a = 0, b; (b = text.find('\n', a)) != std::string::npos; a = b + 1) lines.push_back(text.substr(a, b - a));
        std::sort(lines.begin(), lines.end());
        int positive = 0;
        for (double v : xs) positive += v > 0.0;
        CHECK(lines.size() == size_t(n + positive));  // u in every thread, y where it is positive
        // d L / d u in thread i is w_i * 2 y x_i: the uniform u's adjoint differs per thread.
        CHECK(std::set<std::string>(lines.begin(), lines.end()).size() > size_t(n / 2));
      },
      {37});
  CHECK(printed[0] == printed[1]);
}
