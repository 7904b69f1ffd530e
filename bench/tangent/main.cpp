// bench/tangent/main.cpp — forward mode's cost on the cpu device: the tangent launch
// (kjit::launch_tangent: the kernel and its Jacobian-vector product in one pass) against the
// forward launch, on the side-by-side benchmark's kernels at its sizes (saxpy 2^24, springs
// 2^20 over 2^18 particles, damp 2^20 x 16 steps) and on every kernel of examples/ (the demo's:
// saxpy, daxpy, damp, iterate, springs, springs_f64) at the same sizes, interleaved; and the
// cold host compile of each module and of its tangent module.
// Usage: bench_tangent [rounds (default 7)] [only kernels whose name contains this].
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/modules.hpp"
#include "../examples/loops.hpp"
#include "../examples/saxpy.hpp"
#include "../examples/springs.hpp"
#include "side_by_side/kernels.hpp"
#include "side_by_side/runner.hpp"

using namespace side_by_side;

namespace {

double ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<float> uniform(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

kjit::NdArray vec3s(size_t n, float lo, float hi, unsigned seed) {
  std::vector<float> f = uniform(3 * n, lo, hi, seed);
  std::vector<kjit::vec3f> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = kjit::vec3f{f[3 * i], f[3 * i + 1], f[3 * i + 2]};
  return kjit::from_vector(v);
}

/// A float32 array's values as float64.
kjit::NdArray widened(const kjit::NdArray& a) {
  const std::vector<float> v = a.to_vector<float>();
  return kjit::from_vector(std::vector<double>(v.begin(), v.end()));
}

struct Pair {
  std::string name;
  std::function<void()> forward, tangent;
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::string only = argc > 2 ? argv[2] : "";
  const int64_t ns = 1 << 24, np = 1 << 18, nsp = 1 << 20, nd = 1 << 20;
  auto sx = kjit::from_vector(uniform(ns, -1, 1, 1)), sy = kjit::from_vector(uniform(ns, -1, 1, 2));
  auto dsx = kjit::from_vector(uniform(ns, -1, 1, 3)), dsy = kjit::from_vector(uniform(ns, -1, 1, 4));
  auto sout = kjit::zeros<float>({ns}), dsout = kjit::zeros<float>({ns});
  auto px = vec3s(np, -1, 1, 5), dpx = vec3s(np, -1, 1, 6);
  std::vector<int> ia(nsp), ib(nsp);
  std::mt19937 rng(7);
  for (int64_t s = 0; s < nsp; ++s) {
    ia[size_t(s)] = int(rng() % uint32_t(np));
    ib[size_t(s)] = int((uint32_t(ia[size_t(s)]) + 1 + rng() % uint32_t(np - 1)) % uint32_t(np));
  }
  auto IA = kjit::from_vector(ia), IB = kjit::from_vector(ib);
  auto rest = kjit::from_vector(uniform(nsp, 0.1f, 0.5f, 8)), drest = kjit::from_vector(uniform(nsp, -1, 1, 9));
  auto f = kjit::zeros<kjit::vec3f>({np}), df = kjit::zeros<kjit::vec3f>({np});
  auto dv = vec3s(nd, -1, 1, 10), ddv = vec3s(nd, -1, 1, 11);
  auto dout = kjit::zeros<kjit::vec3f>({nd}), ddout = kjit::zeros<kjit::vec3f>({nd});

  // The examples' kernels at the same sizes (float64 ones in float64; springs' ends as pairs).
  auto dx64 = widened(sx);
  auto dy64 = widened(sy);
  auto ddx64 = widened(dsx);
  auto dout64 = kjit::zeros<double>({ns}), ddout64 = kjit::zeros<double>({ns});
  std::vector<int> ends(static_cast<size_t>(2 * nsp));
  for (int64_t s = 0; s < nsp; ++s) ends[size_t(2 * s)] = ia[size_t(s)], ends[size_t(2 * s + 1)] = ib[size_t(s)];
  auto P = kjit::from_vector(ends);
  std::vector<kjit::vec3d> px64(static_cast<size_t>(np)), dpx64(static_cast<size_t>(np));
  {
    auto a = px.to_vector<kjit::vec3f>(), b = dpx.to_vector<kjit::vec3f>();
    for (size_t i = 0; i < size_t(np); ++i)
      for (int c = 0; c < 3; ++c) px64[i].c[c] = a[i].c[c], dpx64[i].c[c] = b[i].c[c];
  }
  auto PX64 = kjit::from_vector(px64), DPX64 = kjit::from_vector(dpx64);
  auto rest64 = widened(rest);
  auto drest64 = widened(drest);
  auto f64 = kjit::zeros<kjit::vec3d>({np}), df64 = kjit::zeros<kjit::vec3d>({np});
  auto ix = kjit::from_vector(std::vector<double>(size_t(nd), 0.5)), ic = kjit::from_vector(uniform(nd, 0.2f, 0.9f, 12));
  auto ic64 = widened(ic);
  auto dix = kjit::from_vector(std::vector<double>(size_t(nd), 1.0)), iout = kjit::zeros<double>({nd}),
       diout = kjit::zeros<double>({nd});

  // Cold compiles: each module and its tangent module, the first time through this cache.
  for (const char* m : {"side_by_side", "saxpy", "springs", "loops"}) {  // the examples' modules: by file
    kjit::ModuleBuild b = kjit::build_module_for(m, "cpu");
    const std::string t = kjit::make_tangent_module(m);
    kjit::ModuleBuild tb = kjit::build_module_for(t, "cpu");
    std::printf("host compile: %s %.0f ms%s, %s %.0f ms%s\n", m, b.milliseconds, b.from_cache ? " (cached)" : "",
                t.c_str(), tb.milliseconds, tb.from_cache ? " (cached)" : "");
  }

  std::vector<Pair> pairs = {
      {"saxpy", [&] { kjit::launch(saxpy, ns, sx, sy, kSaxpyA, sout); },
       [&] { kjit::launch_tangent(saxpy, ns, {sx, sy, kSaxpyA, sout}, {dsx, dsy, 0.5f, dsout}); }},
      {"springs", [&] { kjit::launch(springs, nsp, px, IA, IB, rest, kSpringK, f); },
       [&] { kjit::launch_tangent(springs, nsp, {px, IA, IB, rest, kSpringK, f}, {dpx, {}, {}, drest, 0.5f, df}); }},
      {"damp", [&] { kjit::launch(damp, nd, dv, kDampC, kDampSteps, dout); },
       [&] { kjit::launch_tangent(damp, nd, {dv, kDampC, kDampSteps, dout}, {ddv, 0.5f, {}, ddout}); }},
      {"examples: saxpy", [&] { kjit::launch(demo::saxpy, ns, sx, sy, kSaxpyA, sout); },
       [&] { kjit::launch_tangent(demo::saxpy, ns, {sx, sy, kSaxpyA, sout}, {dsx, dsy, 0.5f, dsout}); }},
      {"examples: daxpy", [&] { kjit::launch(demo::daxpy, ns, dx64, dy64, 2.0, dout64); },
       [&] { kjit::launch_tangent(demo::daxpy, ns, {dx64, dy64, 2.0, dout64}, {ddx64, {}, 0.5, ddout64}); }},
      {"examples: damp", [&] { kjit::launch(demo::damp, nd, dv, kDampC, kDampSteps, dout); },
       [&] { kjit::launch_tangent(demo::damp, nd, {dv, kDampC, kDampSteps, dout}, {ddv, 0.5f, {}, ddout}); }},
      {"examples: iterate", [&] { kjit::launch(demo::iterate, nd, ix, ic64, 16, iout); },
       [&] { kjit::launch_tangent(demo::iterate, nd, {ix, ic64, 16, iout}, {dix, {}, {}, diout}); }},
      {"examples: springs", [&] { kjit::launch(demo::springs, nsp, px, P, rest, kSpringK, f); },
       [&] { kjit::launch_tangent(demo::springs, nsp, {px, P, rest, kSpringK, f}, {dpx, {}, drest, 0.5f, df}); }},
      {"examples: springs_f64", [&] { kjit::launch(demo::springs_f64, nsp, PX64, P, rest64, double(kSpringK), f64); },
       [&] {
         kjit::launch_tangent(demo::springs_f64, nsp, {PX64, P, rest64, double(kSpringK), f64},
                              {DPX64, {}, drest64, 0.5, df64});
       }},
  };
  std::printf("%-22s %12s %12s %8s   (median of %d interleaved rounds, cpu, %u hardware threads)\n", "kernel",
              "forward ms", "tangent ms", "ratio", rounds, std::max(1u, std::thread::hardware_concurrency()));
  for (Pair& p : pairs) {
    if (p.name.find(only) == std::string::npos) continue;
    p.forward();  // load, warm
    p.tangent();
    std::vector<double> fw, tg;
    for (int r = 0; r < rounds; ++r) {
      fw.push_back(ms(p.forward));
      tg.push_back(ms(p.tangent));
    }
    std::sort(fw.begin(), fw.end());
    std::sort(tg.begin(), tg.end());
    const double a = fw[fw.size() / 2], b = tg[tg.size() / 2];
    std::printf("%-22s %12.2f %12.2f %8.2f\n", p.name.c_str(), a, b, b / a);
  }
  return 0;
}
