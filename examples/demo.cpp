// The demo: defines, compiles, caches and launches the example kernels forward, backward and
// in forward mode on the default device (cuda:0 when a GPU is usable, else cpu), checks every
// result against plain C++, checks gradients with finite differences, and prints what each
// step cost.
// Run it twice: the second run finds every module in the disk cache and compiles nothing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/target.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/runtime/modules.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

/// Median wall time of `reps` calls of f, in milliseconds (the device is synchronised).
template <class F>
double median_ms(int reps, const Device& device, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    f();
    Stream::default_for(device).synchronize();
    t.push_back(ms_since(start));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int failures = 0;
void verdict(const char* what, double error, double tolerance) {
  bool ok = error <= tolerance;
  failures += !ok;
  std::printf("    %-44s max error %.2e  %s\n", what, error, ok ? "ok" : "FAILED");
}

}  // namespace

int main() {
  // Each line as it happens, also through a pipe (`./scripts/demo.sh | tee`, the timing of the
  // README's commands in bench/readme_commands.sh).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const Device device = default_device();
  std::printf("kjit demo on %s%s\n\n", device.name().c_str(),
              device.is_cpu() ? " (no usable GPU; the cpu runs every kernel)" : "");

  // 1. Kernels defined in headers registered themselves; trace and generate each module.
  std::printf("1. trace + codegen (first use of each kernel)\n");
  const std::vector<std::string> modules = {"saxpy", "springs", "loops"};
  for (const std::string& name : modules) {
    const ModuleDef* m = Registry::get().find_module(name);
    auto start = Clock::now();
    std::vector<const ir::Function*> fns;
    for (const KernelDef* k : m->kernels()) fns.push_back(&k->ir());
    double trace_ms = ms_since(start);
    start = Clock::now();
    codegen::GeneratedModule g = codegen::generate_module(name, fns, codegen::CodegenOptions{});
    double gen_ms = ms_since(start);
    std::printf("   %-8s %zu kernels   trace %7.1f us   codegen %7.1f us   %5zu lines (forward + adjoint)\n",
                name.c_str(), fns.size(), trace_ms * 1e3, gen_ms * 1e3,
                size_t(std::count(g.text.begin(), g.text.end(), '\n')));
  }

  // 2. Build and load each module on the device: compiled the first time, cached after.
  std::printf("\n2. build + load on %s\n", device.name().c_str());
  int compiled = 0;
  for (const std::string& name : modules) {
    ModuleLoad l = load_module(name, device);
    compiled += !l.build.from_cache;
    std::printf("   %-8s %-10s %s in %8.1f ms   key %.12s...\n", name.c_str(), l.build.target.c_str(),
                l.build.from_cache ? "cache hit" : "compiled ", l.load_milliseconds, l.build.key.c_str());
  }

  // 3. The same modules for an H100/H200 (sm_90) with NVRTC: no GPU needed to compile.
  std::printf("\n3. NVRTC build for sm_90 (cubin)\n");
  compiler::NvrtcInfo nvrtc = compiler::nvrtc_info();
  std::printf("   %s\n", compiler::describe(nvrtc).c_str());
  for (const std::string& name : nvrtc.available ? modules : std::vector<std::string>{}) {
    ModuleBuild b = build_module_for(name, "sm_90");
    compiled += !b.from_cache;
    std::printf("   %-8s %s in %8.1f ms   %6zu bytes\n", name.c_str(), b.from_cache ? "cache hit" : "compiled ",
                b.milliseconds, b.bytes);
  }

  // 4. Forward launches, checked against plain C++.
  std::printf("\n4. forward launches (checked against plain C++ loops)\n");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  const int n = 1 << 20;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) { x[size_t(i)] = u(rng); y[size_t(i)] = u(rng); }
  NdArray X = from_vector(x, {}, device), Y = from_vector(y, {}, device), O = zeros<float>({n}, device);
  double t = median_ms(5, device, [&] { launch(demo::saxpy, n, X, Y, 2.0f, O); });
  auto o = O.to_vector<float>();
  double err = 0;
  for (int i = 0; i < n; ++i) err = std::max(err, double(std::fabs(o[size_t(i)] - (2.0f * x[size_t(i)] + y[size_t(i)]))));
  std::printf("   saxpy    n = %d   %.3f ms  (%.1f GB/s)\n", n, t, 12.0 * n / (t * 1e6));
  verdict("out = 2 x + y", err, 0);

  const int np = 10000, ns = 40000;
  std::vector<vec3f> px(np);
  for (auto& p : px) p = vec3f{{4 * u(rng), 4 * u(rng), 4 * u(rng)}};
  std::vector<int> pairs(size_t(2 * ns));
  std::vector<float> rest(ns);
  for (int s = 0; s < ns; ++s) {
    pairs[size_t(2 * s)] = int(rng() % np);
    pairs[size_t(2 * s + 1)] = (pairs[size_t(2 * s)] + 1 + int(rng() % (np - 1))) % np;
    rest[size_t(s)] = 0.5f + 0.4f * u(rng);
  }
  NdArray PX = from_vector(px, {}, device), P = from_vector(pairs, {}, device), R = from_vector(rest, {}, device);
  NdArray F = zeros<vec3f>({np}, device);
  t = median_ms(5, device, [&] { F.zero(); launch(demo::springs, ns, PX, P, R, 40.0f, F); });
  std::vector<double> ref(size_t(np) * 3, 0.0);
  for (int s = 0; s < ns; ++s) {
    int a = pairs[size_t(2 * s)], b = pairs[size_t(2 * s + 1)];
    float d[3], l = 0;
    for (int c = 0; c < 3; ++c) { d[c] = px[size_t(a)][c] - px[size_t(b)][c]; l += d[c] * d[c]; }
    l = std::sqrt(l);
    for (int c = 0; c < 3; ++c) {
      double f = d[c] * (40.0f * (l - rest[size_t(s)]) / l);
      ref[size_t(a) * 3 + size_t(c)] -= f;
      ref[size_t(b) * 3 + size_t(c)] += f;
    }
  }
  auto f = F.to_vector<vec3f>();
  err = 0;
  for (int p = 0; p < np; ++p)
    for (int c = 0; c < 3; ++c)
      err = std::max(err, std::fabs(f[size_t(p)][c] - ref[size_t(p) * 3 + size_t(c)]) / (1 + std::fabs(ref[size_t(p) * 3 + size_t(c)])));
  std::printf("   springs  %d springs on %d particles (atomic scatter)   %.3f ms\n", ns, np, t);
  verdict("forces vs plain C++ (relative)", err, 1e-4);

  std::vector<vec3f> v(size_t(n / 16));
  for (auto& p : v) p = vec3f{{20 * u(rng), 20 * u(rng), 20 * u(rng)}};
  NdArray V = from_vector(v, {}, device), VO = zeros<vec3f>({int64_t(v.size())}, device);
  t = median_ms(5, device, [&] { launch(demo::damp, int64_t(v.size()), V, 0.9f, 8, VO); });
  auto vo = VO.to_vector<vec3f>();
  err = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    float w[3] = {v[i][0], v[i][1], v[i][2]};
    for (int s = 0; s < 8; ++s) for (float& c : w) c *= 0.9f;
    float l = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (l > 10.0f) for (float& c : w) c = c / l * 10.0f;
    for (int c = 0; c < 3; ++c) err = std::max(err, double(std::fabs(vo[i][c] - w[c])));
  }
  std::printf("   damp     n = %zu, 8 loop steps and a branch   %.3f ms\n", v.size(), t);
  verdict("damped velocities vs plain C++", err, 1e-4);

  // 5. Backward: adjoint launches, and gradients checked against finite differences.
  std::printf("\n5. adjoint launches\n");
  NdArray GX = zeros<float>({n}, device), GY = zeros<float>({n}, device);
  NdArray GO = from_vector(std::vector<float>(size_t(n), 1.0f), {}, device);
  double tf = median_ms(5, device, [&] { launch(demo::saxpy, n, X, Y, 2.0f, O); });
  double tb = median_ms(5, device, [&] { launch_adjoint(demo::saxpy, n, {X, Y, 2.0f, O}, {GX, GY, {}, GO}); });
  auto gx = GX.to_vector<float>();
  std::printf("   saxpy    d(sum out)/dx = %g (expect 2 per launch, accumulated over 5 launches: 10)\n", gx[7]);
  std::printf("            forward %.3f ms, adjoint %.3f ms: ratio %.2f\n", tf, tb, tb / tf);
  verdict("adjoint of saxpy", std::fabs(gx[7] - 10.0f), 0);

  std::printf("\n   springs (float64): adjoint vs central finite differences (kjit::check_gradients)\n");
  std::vector<vec3d> dx(16);
  for (auto& p : dx) p = vec3d{{2.0 * u(rng), 2.0 * u(rng), 2.0 * u(rng)}};
  std::vector<int> dp;
  for (int s = 0; s < 24; ++s) { dp.push_back(s % 16); dp.push_back((s * 5 + 3) % 16 == s % 16 ? (s + 1) % 16 : (s * 5 + 3) % 16); }
  std::vector<double> dr(24, 0.7);
  GradCheckOptions gopts;
  gopts.device = device;
  GradCheckReport r = check_gradients(demo::springs_f64, 24, {from_vector(dx), from_vector(dp), from_vector(dr), 20.0,
                                                              zeros<vec3d>({16})}, gopts);
  std::printf("%s", r.str().c_str());
  failures += !r.passed();

  std::printf("\n   iterate: x <- x * c + sin(x), 10 steps (a loop-carried value; Warp gets this wrong)\n");
  std::vector<double> ix(8), ic(8);
  for (int i = 0; i < 8; ++i) { ix[size_t(i)] = u(rng); ic[size_t(i)] = 0.6 + 0.2 * u(rng); }
  // The gradient by one adjoint launch (seeded with d out = 1), beside the derivative of the
  // recurrence carried forward in plain C++ (dy' = dy * (c + cos y)).
  NdArray IX = from_vector(ix, {}, device), IC = from_vector(ic, {}, device), IO = zeros<double>({8}, device);
  NdArray GIX = zeros<double>({8}, device), GIC = zeros<double>({8}, device);
  launch(demo::iterate, 8, IX, IC, 10, IO);
  launch_adjoint(demo::iterate, 8, {IX, IC, 10, IO}, {GIX, GIC, {}, from_vector(std::vector<double>(8, 1.0), {}, device)});
  std::vector<double> gix = GIX.to_vector<double>(), gic = GIC.to_vector<double>();
  double worst = 0;
  std::printf("   %-3s %-30s %-30s\n", "i", "d out/d x: adjoint (C++)", "d out/d c: adjoint (C++)");
  for (size_t i = 0; i < 8; ++i) {
    double y = ix[i], dydx = 1, dydc = 0;
    for (int k = 0; k < 10; ++k) {
      double f = ic[i] + std::cos(y);
      dydc = dydc * f + y;
      dydx *= f;
      y = y * ic[i] + std::sin(y);
    }
    worst = std::max({worst, std::fabs(gix[i] - dydx) / std::max(1.0, std::fabs(dydx)),
                      std::fabs(gic[i] - dydc) / std::max(1.0, std::fabs(dydc))});
    if (i < 4) std::printf("   %-3zu %13.6e (%13.6e)  %13.6e (%13.6e)\n", i, gix[i], dydx, gic[i], dydc);
  }
  verdict("adjoint of iterate vs the C++ derivative", worst, 1e-9);
  std::printf("   the same gradient against central finite differences (kjit::check_gradients):\n");
  r = check_gradients(demo::iterate, 8, {IX, IC, 10, zeros<double>({8}, device)}, gopts);
  std::printf("%s", r.str().c_str());
  failures += !r.passed();

  // 6. Forward mode: the tangent launch (the kernel and its Jacobian-vector product in one
  // pass), against the derivative of the recurrence along a direction, and its cost.
  std::printf("\n6. forward mode (tangent launches)\n");
  for (const std::string& name : modules) {
    ModuleLoad l = load_module(make_tangent_module(name), device);
    compiled += !l.build.from_cache;
    std::printf("   %-16s %s in %8.1f ms\n", (name + ".tangent").c_str(), l.build.from_cache ? "cache hit" : "compiled ",
                l.load_milliseconds);
  }
  std::vector<double> iv(8);
  for (double& x : iv) x = u(rng);
  NdArray DIO = zeros<double>({8}, device);
  launch_tangent(demo::iterate, 8, {IX, IC, 10, IO}, {from_vector(iv, {}, device), {}, {}, DIO});
  std::vector<double> dio = DIO.to_vector<double>();
  worst = 0;
  for (size_t i = 0; i < 8; ++i) {  // d out = (d out / d x) v
    double y = ix[i], dy = iv[i];
    for (int k = 0; k < 10; ++k) {
      dy *= ic[i] + std::cos(y);
      y = y * ic[i] + std::sin(y);
    }
    worst = std::max(worst, std::fabs(dio[i] - dy) / std::max(1.0, std::fabs(dy)));
  }
  verdict("tangent of iterate vs the C++ derivative", worst, 1e-9);
  NdArray DX = from_vector(std::vector<float>(size_t(n), 0.5f), {}, device), DO = zeros<float>({n}, device);
  double tt = median_ms(5, device, [&] { launch_tangent(demo::saxpy, n, {X, Y, 2.0f, O}, {DX, {}, 1.0f, DO}); });
  std::printf("   saxpy    forward %.3f ms, tangent %.3f ms: ratio %.2f\n", tf, tt, tt / tf);
  verdict("tangent of saxpy (d out = 2 dx + x da)", std::fabs(DO.to_vector<float>()[7] - (1.0f + x[7])), 1e-6);

  std::printf("\n%s\n", compiled == 0 ? "Every module came from the disk cache: the compiler did not run."
                                      : "Modules were compiled and cached; run the demo again to start from the cache.");
  std::printf("%s\n", failures ? "SOME CHECKS FAILED" : "All checks passed.");
  return failures ? 1 : 0;
}
