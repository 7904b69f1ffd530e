// Device functions: emitted once and called, generic over element types, with loops and
// branches inside, arrays as arguments, user adjoints (func_grad) and replays (func_replay),
// and clear tracing errors for recursion, captured values and Return().
#include <doctest/doctest.h>
#include <functional>
#include <string>

#include "kjit/ir/ir.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/kernel.hpp"
#include "nvrtc_check.hpp"
#include "test_support.hpp"

namespace funcs {
using namespace kjit::dsl;
KJIT_MODULE(builtins_functions)

/// Generic: one definition per argument signature (float and double below).
inline const auto spring = func("spring", [](auto d, auto rest, auto k) {
  auto len = length(d);
  return d * (k * (len - rest) / len);
});

/// A loop with a carried Var and a branch inside a device function.
inline const auto damped = func("damped", [](auto x, auto c, Int steps) {
  Var<typename decltype(x)::element_type> w = x;
  For(0, steps, [&](Int) {
    w = w * c + sin(w) * 0.1;
    If(w > 2.0, [&] { w = w * 0.5; });
  });
  return Value<typename decltype(x)::element_type>(w);
});

/// A device function calling another one and reading an array at any index.
inline const auto gather_sum = func("gather_sum", [](Array<double> a, Int i, Int j) { return a[i] * a[j] + spring(Vec3d(a[i], 1.0, 0.0), 0.5, 2.0).x(); });

/// x^2 with a deliberately different user adjoint (10 adj_ret): the adjoint must use it.
inline const auto marked = func("marked", [](auto x) { return x * x; })
                               .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * 10.0; });

/// Claims a slot with an atomic; the replay reads the slot back instead of claiming again.
inline const auto claim = func("claim", [](Array<int32_t> counter, Array<int32_t> slots) {
                            Int s = atomic_add(counter, 0, 1);
                            slots[tid()] = s;
                            return s;
                          }).replay([](Array<int32_t> counter, Array<int32_t> slots) { return Int(slots[tid()]); });

KJIT_KERNEL(springs_f, (Array<Vec3f> d, Array<Vec3f> out)) { out[tid()] = spring(d[tid()], 1.0f, 3.0f); }
KJIT_KERNEL(springs_d, (Array<Vec3d> d, Array<Vec3d> out)) { out[tid()] = spring(d[tid()], 1.0, 3.0); }
KJIT_KERNEL(springs_twice, (Array<Vec3d> d, Array<Vec3d> out)) { out[tid()] = spring(d[tid()], 1.0, 3.0) + spring(d[tid()] * 2.0, 0.5, 1.0); }
KJIT_KERNEL(loops, (Array<double> x, Array<double> c, Int steps, Array<double> out)) {
  out[tid()] = damped(x[tid()], c[tid()], steps);
}
KJIT_KERNEL(loops_inline, (Array<double> x, Array<double> c, Int steps, Array<double> out)) {
  Int i = tid();
  Var<double> w = x[i];
  For(0, steps, [&](Int) {
    w = w * c[i] + sin(w) * 0.1;
    If(w > 2.0, [&] { w = w * 0.5; });
  });
  out[i] = w;
}
KJIT_KERNEL(gathers, (Array<double> a, Array<double> out)) {
  Int i = tid();
  out[i] = gather_sum(a, i, (i + 1) % a.shape(0));
}
KJIT_KERNEL(marks, (Array<double> x, Array<double> out)) { out[tid()] = marked(x[tid()]); }
/// Device functions (one with a user adjoint) called inside a dynamic loop and a branch,
/// against the same computation written inline.
inline const auto step_fn = func("step_fn", [](auto v, auto k) { return v + spring(v, 1.0, k) * 0.1; });
/// x^2 with a correct user adjoint.
inline const auto square = func("square", [](auto x) { return x * x; })
                               .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * 2.0 * x; });
KJIT_KERNEL(called_in_loop, (Array<Vec3d> x, Array<double> k, Int steps, Array<Vec3d> out)) {
  Int i = tid();
  Var<Vec3d> v = x[i];
  For(0, steps, [&](Int s) {
    v = step_fn(v, k[i]);
    If(s % 2 == 0, [&] { v.y() = v.y() + square(v.x()) * 0.01; }).Else([&] { v = v * 0.9; });
  });
  out[i] = v;
}
KJIT_KERNEL(inline_loop, (Array<Vec3d> x, Array<double> k, Int steps, Array<Vec3d> out)) {
  Int i = tid();
  Var<Vec3d> v = x[i];
  For(0, steps, [&](Int s) {
    Vec3d d = v;
    Double len = length(d);
    v = d + d * (k[i] * (len - 1.0) / len) * 0.1;
    If(s % 2 == 0, [&] { v.y() = v.y() + v.x() * v.x() * 0.01; }).Else([&] { v = v * 0.9; });
  });
  out[i] = v;
}
KJIT_KERNEL(claims, (Array<double> x, Array<int32_t> counter, Array<int32_t> slots, Array<double> out)) {
  Int s = claim(counter, slots);
  out[s] = x[tid()] * 3.0;
}
}  // namespace funcs

namespace funcs_errors {
using namespace kjit::dsl;
KJIT_MODULE(builtins_function_errors)
struct Rec { static Float go(Float x); };
inline const auto recursive = func("recursive", [](Float x) { return Rec::go(x) + 1.0f; });
inline Float Rec::go(Float x) { return recursive(x); }
KJIT_KERNEL(recursion, (Array<float> x)) { x[tid()] = recursive(x[tid()]); }
KJIT_KERNEL(capture, (Array<float> x, Float k)) {
  auto f = func("captures", [&](Float y) { return y * k; });  // k belongs to the kernel
  x[tid()] = f(x[tid()]);
}
inline const auto returns = func("returns", [](Float y) { Return(); return y; });
KJIT_KERNEL(early_return, (Array<float> x)) { x[tid()] = returns(x[tid()]); }
/// Recursion through std::function (issue 17): the handles std::function's invoker copies
/// carry locations inside <bits/invoke.h>; the error must name the user's line instead.
inline std::function<Float(Float)> forward_to;  // set by the kernel: through -> forward_to -> through
inline int forward_line = 0;
inline const auto through = func("through", [](Float x) {
  forward_line = __LINE__ + 1;
  Float y = forward_to(x);
  return y + 1.0f;
});
KJIT_KERNEL(recursion_std_function, (Array<float> x)) {
  forward_to = [](Float v) { return through(v); };
  x[tid()] = through(x[tid()]);
}
}  // namespace funcs_errors

using namespace kjit;

TEST_CASE("a device function is emitted once per signature and called; generic over float and double") {
  std::vector<vec3f> df{vec3f{{1, 2, 2}}, vec3f{{0.5f, 0, 0}}};
  std::vector<vec3d> dd{vec3d{{1, 2, 2}}, vec3d{{0.5, 0, 0}}};
  NdArray of = zeros<vec3f>({2}), od = zeros<vec3d>({2});
  launch(funcs::springs_f, 2, from_vector(df), of);
  launch(funcs::springs_d, 2, from_vector(dd), od);
  auto f = of.to_vector<vec3f>();
  auto d = od.to_vector<vec3d>();
  CHECK(f[0][0] == doctest::Approx(1 * 3 * (3 - 1) / 3.0));  // |d| = 3: d * 3 * 2 / 3
  CHECK(d[1][0] == doctest::Approx(0.5 * 3 * (0.5 - 1) / 0.5));
  const std::string text = test::module_text("builtins_functions", {&funcs::springs_f.def(), &funcs::springs_d.def(), &funcs::springs_twice.def()});
  // Two signatures (vec3f, vec3d), each defined once although springs_twice calls it twice.
  size_t defs = 0;
  for (size_t p = text.find("// device function spring"); p != std::string::npos; p = text.find("// device function spring", p + 1)) ++defs;
  CHECK(defs == 2);
  GradCheckReport r = check_gradients(funcs::springs_twice, 2, {from_vector(dd), zeros<vec3d>({2})});
  INFO(r.str());
  CHECK(r.passed());
}

TEST_CASE("a device function with a carried loop and a branch: values and gradients equal the inlined kernel's") {
  std::vector<double> x{0.3, 1.5, -0.7, 1.9}, c{1.1, 0.9, 1.3, 1.05};
  NdArray a = zeros<double>({4}), b = zeros<double>({4});
  launch(funcs::loops, 4, from_vector(x), from_vector(c), 6, a);
  launch(funcs::loops_inline, 4, from_vector(x), from_vector(c), 6, b);
  CHECK(a.to_vector<double>() == b.to_vector<double>());
  GradCheckReport r = check_gradients(funcs::loops, 4, {from_vector(x), from_vector(c), 6, zeros<double>({4})});
  INFO(r.str());
  CHECK(r.passed());
}

TEST_CASE("device functions called in a dynamic loop and a branch: values and gradients") {
  std::vector<vec3d> x{vec3d{{1.2, 0.3, -0.5}}, vec3d{{-0.7, 1.5, 0.4}}};
  std::vector<double> k{0.8, 1.3};
  NdArray a = zeros<vec3d>({2}), b = zeros<vec3d>({2});
  launch(funcs::called_in_loop, 2, from_vector(x), from_vector(k), 5, a);
  launch(funcs::inline_loop, 2, from_vector(x), from_vector(k), 5, b);
  auto va = a.to_vector<vec3d>(), vb = b.to_vector<vec3d>();
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c) CHECK(va[size_t(i)][c] == doctest::Approx(vb[size_t(i)][c]));
  GradCheckReport r = check_gradients(funcs::called_in_loop, 2, {from_vector(x), from_vector(k), 5, zeros<vec3d>({2})});
  INFO(r.str());
  CHECK(r.passed());
}

TEST_CASE("device functions taking arrays and calling other device functions: gradients") {
  std::vector<double> a{0.5, -1.2, 2.0, 0.8, 1.1};
  GradCheckReport r = check_gradients(funcs::gathers, 5, {from_vector(a), zeros<double>({5})});
  INFO(r.str());
  CHECK(r.passed());
}

TEST_CASE("a user adjoint (func_grad) replaces the derived one") {
  std::vector<double> x{1.0, 2.0, -3.0};
  NdArray out = zeros<double>({3}), gx = zeros<double>({3});
  launch(funcs::marks, 3, from_vector(x), out);
  CHECK(out.to_vector<double>()[2] == 9.0);
  launch_adjoint(funcs::marks, 3, {from_vector(x), out}, {gx, from_vector(std::vector<double>{1, 1, 0.5})});
  CHECK(gx.to_vector<double>() == std::vector<double>{10, 10, 5});
}

TEST_CASE("a user replay (func_replay) lets the adjoint use an atomic's result") {
  const int n = 6;
  std::vector<double> x{1, 2, 3, 4, 5, 6};
  NdArray counter = zeros<int32_t>({1}), slots = zeros<int32_t>({n}), out = zeros<double>({n});
  launch(funcs::claims, n, from_vector(x), counter, slots, out);
  auto s = slots.to_vector<int32_t>();
  auto o = out.to_vector<double>();
  for (int i = 0; i < n; ++i) CHECK(o[size_t(s[size_t(i)])] == 3.0 * x[size_t(i)]);
  std::vector<double> w{1, 10, 100, 1000, 10000, 100000};
  NdArray gx = zeros<double>({n});
  launch_adjoint(funcs::claims, n, {from_vector(x), counter, slots, out}, {gx, {}, {}, from_vector(w)});
  auto g = gx.to_vector<double>();
  for (int i = 0; i < n; ++i) CHECK(g[size_t(i)] == 3.0 * w[size_t(s[size_t(i)])]);
}

TEST_CASE("device function errors: recursion, captured kernel values, Return") {
  auto message = [](const KernelDef& k) { return test::user_error([&] { (void)k.ir(); }); };
  CHECK(message(funcs_errors::recursion.def()).find("calls itself") != std::string::npos);
  CHECK(message(funcs_errors::capture.def()).find("a value of another function") != std::string::npos);
  CHECK(message(funcs_errors::early_return.def()).find("Return() without a value; the function returns a Float") != std::string::npos);
  CHECK(message(funcs_errors::recursion.def()).find("functions.cpp:") != std::string::npos);
}

TEST_CASE("recursion through std::function is reported at the user's line, not inside the standard library") {
  std::string m;
  try {
    (void)funcs_errors::recursion_std_function.def().ir();
  } catch (const Error& e) {
    m = e.what();
  }
  INFO(m);
  CHECK(m.find("device function 'through' calls itself (through -> through)") != std::string::npos);
  CHECK(m.find("tests/builtins/functions.cpp:" + std::to_string(funcs_errors::forward_line) + ":") != std::string::npos);
  CHECK(m.find("/include/c++/") == std::string::npos);
}
