// grad(f)(args) in forward code (Warp's wp.grad, issue 34): values against analytic
// derivatives and float64 central differences for scalar, vec3 and several-argument device
// functions, with branches and loops, with a user .grad, in float32 and float64, in modules
// with and without adjoints; the refusals (a kernel taking a gradient has no adjoint and no
// tangent, f must return one float, no grad of grad) by their messages; and NVRTC compiles of
// the module for sm_80 and sm_90 with and without adjoints.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "nvrtc_check.hpp"
#include "test_support.hpp"

namespace fgrad {
using namespace kjit::dsl;
KJIT_MODULE(builtins_func_grad)

/// Generic over float32 and float64.
inline const auto wave = func("wave", [](auto x) { return x * x * sin(x); });
/// Warp's particle repulsion potential, in float64.
inline const auto potential = func("potential", [](Vec3d d) { return 1.0 / (length(d) + 1e-6); });
/// Three arguments: a float, a vector and an integer (whose gradient is zero).
inline const auto mixed = func("mixed", [](Double x, Vec3d d, Int n) { return x * dot(d, d) + sin(x * d.x()) * Double(n); });
/// A loop and a branch inside it.
inline const auto looped = func("looped", [](Double x, Int n) {
  Var<Double> acc = x;
  For(0, n, [&](Int) {
    acc = acc * 0.9 + sin(acc);
    If(acc > 1.5, [&] { acc = acc - 0.25 * acc * acc; });
  });
  return acc * 2.0;
});
double looped_ref(double x, int n) {
  double acc = x;
  for (int k = 0; k < n; ++k) {
    acc = acc * 0.9 + std::sin(acc);
    if (acc > 1.5) acc = acc - 0.25 * acc * acc;
  }
  return acc * 2.0;
}
/// A user adjoint that is not the body's derivative: grad must run it.
inline const auto custom = func("custom", [](Double x) { return x * x; })
    .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * (7.0 + 0.0 * x); });
/// A user adjoint that takes a gradient (Warp allows wp.grad in a func_grad): d/dx of x^3 by
/// wave's derivative instead, to tell them apart.
inline const auto graded = func("graded", [](Double x) { return x * x * x; })
    .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * grad(wave)(x); });
/// A function that takes a gradient in its body (forward code), called plainly.
inline const auto slope = func("slope", [](Double x) { return grad(wave)(x) * 2.0; });

KJIT_KERNEL(wave64, (Array<double> x, Array<double> g)) {
  Int i = tid();
  g[i] = grad(wave)(x[i]);
}
KJIT_KERNEL(wave32, (Array<float> x, Array<float> g)) {
  Int i = tid();
  g[i] = grad(wave)(x[i]);
}
KJIT_KERNEL(potential_k, (Array<Vec3d> d, Array<Vec3d> g)) {
  Int i = tid();
  g[i] = -grad(potential)(d[i]);  // the force, as Warp's example takes it
}
KJIT_KERNEL(mixed_k, (Array<double> x, Array<Vec3d> d, Array<double> gx, Array<Vec3d> gd, Array<int> gn)) {
  Int i = tid();
  auto [ax, ad, an] = grad(mixed)(x[i], d[i], i + 1);
  gx[i] = ax;
  gd[i] = ad;
  gn[i] = an;
}
KJIT_KERNEL(looped_k, (Array<double> x, Array<double> g, Int n)) {
  Int i = tid();
  auto [gx, gn] = grad(looped)(x[i], n);
  (void)gn;
  g[i] = gx;
}
KJIT_KERNEL(custom_k, (Array<double> x, Array<double> g)) {
  Int i = tid();
  g[i] = grad(custom)(x[i]) + custom(x[i]);
}
KJIT_KERNEL(graded_k, (Array<double> x, Array<double> y)) {
  Int i = tid();
  y[i] = graded(x[i]);
}
KJIT_KERNEL(slope_k, (Array<double> x, Array<double> g)) {
  Int i = tid();
  g[i] = slope(x[i]);
}
}  // namespace fgrad

namespace fgrad_fwd {
using namespace kjit::dsl;
KJIT_MODULE(builtins_func_grad_forward)
/// Warp's potential in float32, in a module without adjoints (Warp's enable_backward=False).
inline const auto potential32 = func("potential32", [](Vec3f d) { return 1.0f / (length(d) + 1e-6f); });
KJIT_KERNEL(force_k, (Array<Vec3f> d, Array<Vec3f> f)) {
  Int i = tid();
  f[i] = f[i] - grad(potential32)(d[i]);
}
}  // namespace fgrad_fwd

namespace fgrad_errors {
using namespace kjit::dsl;
KJIT_MODULE(builtins_func_grad_errors)
inline const auto vector_valued = func("vector_valued", [](Vec3d d) { return d * 2.0; });
KJIT_KERNEL(vector_k, (Array<Vec3d> d, Array<Vec3d> g)) { g[tid()] = grad(vector_valued)(d[tid()]); }
inline const auto inner = func("inner", [](Double x) { return grad(fgrad::wave)(x) * x; });
KJIT_KERNEL(second_k, (Array<double> x, Array<double> g)) { g[tid()] = grad(inner)(x[tid()]); }
}  // namespace fgrad_errors

using namespace kjit;

namespace {
std::vector<double> points(size_t n, double lo, double hi) {
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = lo + (hi - lo) * double((i * 37) % n) / double(n);
  return x;
}
/// The float64 central difference of f at x.
template <class F>
double central(const F& f, double x, double h = 1e-6) {
  return (f(x + h) - f(x - h)) / (2.0 * h);
}
double wave_ref(double x) { return x * x * std::sin(x); }
double potential_ref(const vec3d& d) { return 1.0 / (std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + 1e-6); }
double mixed_ref(double x, const vec3d& d, int n) {
  return x * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + std::sin(x * d[0]) * double(n);
}
std::vector<vec3d> vectors(size_t n) {
  std::vector<vec3d> d(n);
  for (size_t i = 0; i < n; ++i) {
    const double t = double(i);
    d[i] = vec3d{{0.3 + std::sin(t), -0.7 + std::cos(1.3 * t), 0.2 * double(i % 5) - 0.4}};
  }
  return d;
}
}  // namespace

TEST_CASE("grad of a scalar function: 2x sin x + x^2 cos x, in float64 and float32") {
  const size_t n = 67;
  std::vector<double> x = points(n, -3.0, 3.0);
  NdArray g = zeros<double>({int64_t(n)});
  launch(fgrad::wave64, int64_t(n), from_vector(x), g);
  std::vector<double> got = g.to_vector<double>();
  std::vector<float> x32(x.begin(), x.end());
  NdArray g32 = zeros<float>({int64_t(n)});
  launch(fgrad::wave32, int64_t(n), from_vector(x32), g32);
  std::vector<float> got32 = g32.to_vector<float>();
  for (size_t i = 0; i < n; ++i) {
    INFO("x = " << x[i]);
    const double exact = 2.0 * x[i] * std::sin(x[i]) + x[i] * x[i] * std::cos(x[i]);
    CHECK(got[i] == doctest::Approx(exact).epsilon(1e-14));
    CHECK(got[i] == doctest::Approx(central(wave_ref, x[i])).epsilon(1e-8));
    const double x32d = double(x32[i]);
    CHECK(double(got32[i]) == doctest::Approx(2.0 * x32d * std::sin(x32d) + x32d * x32d * std::cos(x32d)).epsilon(1e-5).scale(1.0));
  }
}

TEST_CASE("grad of a vec3 function: Warp's repulsion potential, -d / (|d| (|d| + eps)^2)") {
  const size_t n = 40;
  std::vector<vec3d> d = vectors(n);
  NdArray g = zeros<vec3d>({int64_t(n)});
  launch(fgrad::potential_k, int64_t(n), from_vector(d), g);
  std::vector<vec3d> got = g.to_vector<vec3d>();
  for (size_t i = 0; i < n; ++i) {
    const double len = std::sqrt(d[i][0] * d[i][0] + d[i][1] * d[i][1] + d[i][2] * d[i][2]);
    for (int c = 0; c < 3; ++c) {
      INFO("i = " << i << ", component " << c);
      const double exact = -d[i][c] / (len * (len + 1e-6) * (len + 1e-6));
      auto along = [&](double t) {
        vec3d e = d[i];
        e[c] = t;
        return potential_ref(e);
      };
      CHECK(got[i][c] == doctest::Approx(-exact).epsilon(1e-13));  // the kernel stores -grad
      CHECK(got[i][c] == doctest::Approx(-central(along, d[i][c])).epsilon(1e-7));
    }
  }
}

TEST_CASE("grad of a function of several arguments: a Tuple of one gradient per argument, zero for an integer") {
  const size_t n = 33;
  std::vector<double> x = points(n, -1.5, 1.5);
  std::vector<vec3d> d = vectors(n);
  NdArray gx = zeros<double>({int64_t(n)}), gd = zeros<vec3d>({int64_t(n)});
  NdArray gn = from_vector(std::vector<int>(n, 99));
  launch(fgrad::mixed_k, int64_t(n), from_vector(x), from_vector(d), gx, gd, gn);
  std::vector<double> ax = gx.to_vector<double>();
  std::vector<vec3d> ad = gd.to_vector<vec3d>();
  std::vector<int> an = gn.to_vector<int>();
  for (size_t i = 0; i < n; ++i) {
    INFO("i = " << i);
    const int k = int(i) + 1;
    const vec3d& v = d[i];
    const double c = std::cos(x[i] * v[0]) * double(k);
    CHECK(ax[i] == doctest::Approx(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + c * v[0]).epsilon(1e-13));
    CHECK(ax[i] == doctest::Approx(central([&](double t) { return mixed_ref(t, v, k); }, x[i])).epsilon(1e-7));
    for (int j = 0; j < 3; ++j) {
      const double exact = 2.0 * x[i] * v[j] + (j == 0 ? c * x[i] : 0.0);
      CHECK(ad[i][j] == doctest::Approx(exact).epsilon(1e-13).scale(1.0));
      auto along = [&](double t) {
        vec3d e = v;
        e[j] = t;
        return mixed_ref(x[i], e, k);
      };
      CHECK(ad[i][j] == doctest::Approx(central(along, v[j])).epsilon(1e-7).scale(1.0));
    }
    CHECK(an[i] == 0);
  }
}

TEST_CASE("grad through a loop with a branch: float64 central differences") {
  // Away from the branch's switching points (a difference across one is meaningless).
  std::vector<double> x{-2.1, -1.3, -0.6, 0.1, 0.45, 0.8, 1.7, 2.6};
  NdArray g = zeros<double>({int64_t(x.size())});
  launch(fgrad::looped_k, int64_t(x.size()), from_vector(x), g, 5);
  std::vector<double> got = g.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("x = " << x[i]);
    CHECK(got[i] == doctest::Approx(central([](double t) { return fgrad::looped_ref(t, 5); }, x[i])).epsilon(1e-7));
  }
}

TEST_CASE("grad runs a function's user .grad, not the body's derivative; grad inside a called function") {
  std::vector<double> x{-2.0, 0.5, 3.0};
  NdArray g = zeros<double>({3});
  launch(fgrad::custom_k, 3, from_vector(x), g);
  std::vector<double> got = g.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) CHECK(got[i] == 7.0 + x[i] * x[i]);
  launch(fgrad::slope_k, 3, from_vector(x), g);
  got = g.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    CHECK(got[i] == doctest::Approx(2.0 * (2.0 * x[i] * std::sin(x[i]) + x[i] * x[i] * std::cos(x[i]))).epsilon(1e-14));
}

TEST_CASE("grad inside a function's user .grad (as Warp allows in a func_grad): the kernel's adjoint runs it") {
  std::vector<double> x{-1.5, 0.25, 2.0};
  NdArray y = zeros<double>({3}), gx = zeros<double>({3});
  launch(fgrad::graded_k, 3, from_vector(x), y);
  CHECK(y.to_vector<double>() == std::vector<double>{-1.5 * -1.5 * -1.5, 0.25 * 0.25 * 0.25, 8.0});
  launch_adjoint(fgrad::graded_k, 3, {from_vector(x), y}, {gx, from_vector(std::vector<double>{1.0, 2.0, 3.0})});
  std::vector<double> g = gx.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    CHECK(g[i] == doctest::Approx(double(i + 1) * (2.0 * x[i] * std::sin(x[i]) + x[i] * x[i] * std::cos(x[i]))).epsilon(1e-14));
}

TEST_CASE("grad in a module without adjoints (Warp's enable_backward=False): float32 forces") {
  ModuleOptions o = kjit::module("builtins_func_grad_forward").options();
  o.enable_adjoint = false;
  kjit::module("builtins_func_grad_forward").set_options(o);
  std::vector<vec3d> d64 = vectors(20);
  std::vector<vec3f> d(d64.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = vec3f{{float(d64[i][0]), float(d64[i][1]), float(d64[i][2])}};
  NdArray f = from_vector(std::vector<vec3f>(d.size(), vec3f{{1.0f, 2.0f, 3.0f}}));
  launch(fgrad_fwd::force_k, int64_t(d.size()), from_vector(d), f);
  std::vector<vec3f> got = f.to_vector<vec3f>();
  for (size_t i = 0; i < d.size(); ++i) {
    const double x = d[i][0], y = d[i][1], z = d[i][2], len = std::sqrt(x * x + y * y + z * z);
    for (int c = 0; c < 3; ++c) {
      const double base = 1.0 + c;
      CHECK(double(got[i][c]) == doctest::Approx(base + double(d[i][c]) / (len * (len + 1e-6) * (len + 1e-6))).epsilon(2e-6));
    }
  }
}

TEST_CASE("a kernel that takes a gradient has no adjoint and no tangent: errors naming the kernel, line and function") {
  NdArray x = from_vector(std::vector<double>{0.5, 1.0}), g = zeros<double>({2});
  launch(fgrad::wave64, 2, x, g);  // forward is fine
  std::string m = test::user_error([&] { launch_adjoint(fgrad::wave64, 2, {x, g}, {zeros<double>({2}), zeros<double>({2})}); });
  CHECK(m.find("kernel 'fgrad::wave64' at ") != std::string::npos);
  CHECK(m.find("tests/builtins/func_grad.cpp:") != std::string::npos);
  CHECK(m.find("grad(wave) is forward code; the adjoint of a kernel that takes a gradient would need second derivatives "
               "through wave's adjoint, which are not supported") != std::string::npos);
  CHECK(m.find("enable_adjoint = false") != std::string::npos);
  m = test::user_error([&] { launch_adjoint(fgrad::slope_k, 2, {x, g}, {zeros<double>({2}), zeros<double>({2})}); });
  CHECK(m.find("kernel 'fgrad::slope_k' at ") != std::string::npos);
  CHECK(m.find("tests/builtins/func_grad.cpp:") != std::string::npos);
  CHECK(m.find("device function 'slope' takes a gradient (grad(...)), which has no adjoint") != std::string::npos);
  m = test::user_error([&] { launch_tangent(fgrad::wave64, 2, {x, g}, {zeros<double>({2}), zeros<double>({2})}); });
  CHECK(m.find("kernel 'fgrad::wave64' at ") != std::string::npos);
  CHECK(m.find("tests/builtins/func_grad.cpp:") != std::string::npos);
  CHECK(m.find("grad(wave) is forward code; its tangent would need second derivatives through wave's adjoint") !=
        std::string::npos);
}

TEST_CASE("grad of a function that does not return one float, or that takes a gradient itself: tracing errors") {
  auto message = [](const KernelDef& k) { return test::user_error([&] { (void)k.ir(); }); };
  std::string m = message(fgrad_errors::vector_k.def());
  CHECK(m.find("tests/builtins/func_grad.cpp:") != std::string::npos);
  CHECK(m.find("grad(vector_valued): device function 'vector_valued' returns a Vec3d; grad(f) is the gradient of a "
               "function that returns one float (Float, Double)") != std::string::npos);
  m = message(fgrad_errors::second_k.def());
  CHECK(m.find("grad(inner): device function 'inner' itself calls grad(...): second derivatives are not supported") !=
        std::string::npos);
}

TEST_CASE("modules taking gradients compile with NVRTC for sm_80 and sm_90, with and without adjoints") {
  std::vector<const KernelDef*> kernels;
  for (const ModuleDef* m : Registry::get().modules())
    if (m->name() == "builtins_func_grad" || m->name() == "builtins_func_grad_forward")
      for (const KernelDef* k : m->kernels()) kernels.push_back(k);
  REQUIRE(kernels.size() == 9);
  for (bool adjoints : {false, true}) {
    const std::string text = test::module_text("builtins_func_grad_all", kernels, adjoints);
    CHECK(text.find("grad_kjf_") != std::string::npos);
    CHECK(text.find("adj_kjf_") != std::string::npos);
    for (const char* arch : {"sm_80", "sm_90"}) {
      INFO(arch << (adjoints ? " with adjoints" : " forward only"));
      std::string log = test::nvrtc_compile(text, arch);
      INFO(log.substr(0, 20000));
      CHECK(log.empty());
    }
  }
}
