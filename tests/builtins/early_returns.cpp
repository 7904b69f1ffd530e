// Early returns from device functions (Warp's `return` anywhere in a @wp.func, issue 32): a
// value, nothing, or several values returned from inside loops (For, While, nested), branches
// and called functions; forward values against a C++ restatement on every thread count the
// cpu runs (scalar and lane functions), adjoints and tangents against finite differences, and
// the errors for a Return that does not match the function. The module is compiled with
// NVRTC by nvrtc.cpp (every builtins_* module).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "strided_views.hpp"
#include "test_support.hpp"

namespace early {
using namespace kjit::dsl;
KJIT_MODULE(builtins_early_returns)

/// The first index at which a is negative, or -1: a return from inside a For.
inline const auto first_negative = func("first_negative", [](Array<double> a, Int n) {
  For(0, n, [&](Int i) { If(a[i] < 0.0, [&] { Return(i); }); });
  return Int(-1);
});

/// Returns from a branch before a loop, from inside a For (with the loop's value), from inside
/// a While, and at the end: each path a different smooth function of x.
inline const auto piecewise = func("piecewise", [](Double x, Int n) {
  If(x < -1.0, [&] { Return(x * x); });
  Var<Double> acc = x;
  For(0, n, [&](Int k) {
    acc = acc * 0.9 + sin(acc);
    If(acc > 2.0, [&] { Return(acc * 3.0 + Double(k)); });
  });
  While([&] { return acc < -0.5; }, [&] {
    acc = acc + 0.3;
    If(acc > -0.6, [&] { Return(exp(acc)); });
  });
  return acc * 2.0;
});
double piecewise_ref(double x, int n) {
  if (x < -1.0) return x * x;
  double acc = x;
  for (int k = 0; k < n; ++k) {
    acc = acc * 0.9 + std::sin(acc);
    if (acc > 2.0) return acc * 3.0 + double(k);
  }
  while (acc < -0.5) {
    acc = acc + 0.3;
    if (acc > -0.6) return std::exp(acc);
  }
  return acc * 2.0;
}

/// A return from a loop nested in a loop, and a call of another early-returning function.
inline const auto nested = func("nested", [](Double x, Int n) {
  For(0, n, [&](Int i) {
    For(0, n, [&](Int j) {
      If(x * Double(i + 1) > Double(j + 2), [&] { Return(piecewise(x * 0.5, j) + Double(i)); });
    });
  });
  return piecewise(x, n) * 0.25;
});
double nested_ref(double x, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (x * double(i + 1) > double(j + 2)) return piecewise_ref(x * 0.5, j) + double(i);
  return piecewise_ref(x, n) * 0.25;
}

/// Newton's square root until it converges: a While(true) left only by Return, with a
/// (converged, steps) pair returned from inside it.
inline const auto newton_sqrt = func("newton_sqrt", [](Double v) {
  Var<Double> y = max(v, 1.0);
  Var<Int> steps = 0;
  While([&] { return Bool(true); }, [&] {
    Double next = 0.5 * (y + v / y);
    steps = steps + 1;
    If(abs(next - y) < 1e-13 * next, [&] { Return(std::make_tuple(Double(next), Int(steps))); });
    If(steps >= 60, [&] { Return(std::make_tuple(Double(-1.0), Int(steps))); });
    y = next;
  });
  return std::make_tuple(Double(0.0), Int(0));
});

/// A function that returns nothing: Return() skips the store.
inline const auto store_positive = func("store_positive", [](Array<double> out, Int i, Double v) {
  If(v <= 0.0, [&] { Return(); });
  out[i] = v * v;
});

KJIT_KERNEL(search, (Array<double> a, Int n, Array<int> out)) {
  Int i = tid();
  out[i] = first_negative(a, n) * 100 + i;
}
KJIT_KERNEL(piecewise_k, (Array<double> x, Int n, Array<double> out)) {
  Int i = tid();
  out[i] = piecewise(x[i], n) + nested(x[i], 3);
}
KJIT_KERNEL(newton_k, (Array<double> v, Array<double> root, Array<int> steps)) {
  Int i = tid();
  auto [r, s] = newton_sqrt(v[i]);
  root[i] = r;
  steps[i] = s;
}
KJIT_KERNEL(store_k, (Array<double> x, Array<double> out)) {
  Int i = tid();
  store_positive(out, i, x[i] - 0.5);
}
}  // namespace early

namespace early_errors {
using namespace kjit::dsl;
KJIT_MODULE(builtins_early_return_errors)
inline const auto wrong_type = func("wrong_type", [](Float y) {
  If(y < 0.0f, [&] { Return(1.0); });  // a float64 from a float32 function
  return y;
});
KJIT_KERNEL(wrong_type_k, (Array<float> x)) { x[tid()] = wrong_type(x[tid()]); }
inline const auto no_value = func("no_value", [](Float y) {
  If(y < 0.0f, [&] { Return(); });
  return y;
});
KJIT_KERNEL(no_value_k, (Array<float> x)) { x[tid()] = no_value(x[tid()]); }
inline const auto void_with_value = func("void_with_value", [](Array<float> x, Float y) {
  If(y < 0.0f, [&] { Return(y); });
  x[0] = y;
});
KJIT_KERNEL(void_with_value_k, (Array<float> x)) { void_with_value(x, x[tid()]); }
KJIT_KERNEL(kernel_value, (Array<float> x)) {
  If(x[tid()] < 0.0f, [&] { Return(x[tid()]); });
  x[tid()] = 1.0f;
}
}  // namespace early_errors

using namespace kjit;

namespace {
std::vector<double> inputs(size_t n) {
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = -2.2 + 4.7 * double((i * 37) % n) / double(n);  // every path taken
  return x;
}
/// Runs `body(strided, keep)` both ways the cpu runs a kernel: dense arrays (lane blocks,
/// with bounds checks off: a bounds-checked module has no lane functions) and strided ones
/// (one thread at a time).
template <class F>
void both_ways(F&& body) {
  test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  for (bool strided : {false, true}) {
    INFO("strided: " << strided);
    std::vector<NdArray> keep;
    body(strided, keep);
  }
}
}  // namespace

TEST_CASE("Return(value) from inside a For in a device function: the first match") {
  std::vector<double> a{1.0, 2.0, -3.0, 4.0, -5.0};
  NdArray out = zeros<int>({3});
  launch(early::search, 3, from_vector(a), 5, out);
  CHECK(out.to_vector<int>() == std::vector<int>{200, 201, 202});
  launch(early::search, 3, from_vector(a), 2, out);  // no negative among the first two
  CHECK(out.to_vector<int>() == std::vector<int>{-100, -99, -98});
}

TEST_CASE("early returns from branches, For, While and nested loops: values equal C++'s, gradients finite differences") {
  const size_t n = 67;  // not a multiple of the lane width
  std::vector<double> x = inputs(n);
  both_ways([&](bool strided, std::vector<NdArray>& keep) {
    NdArray out = test::make_array(std::vector<double>(n, 0.0), strided, keep);
    launch(early::piecewise_k, int64_t(n), test::make_array(x, strided, keep), 4, out);
    std::vector<double> got = test::read_array<double>(out);
    for (size_t i = 0; i < n; ++i) {
      INFO("x = " << x[i]);
      CHECK(got[i] == early::piecewise_ref(x[i], 4) + early::nested_ref(x[i], 3));
    }
  });
  // Away from the branch points (finite differences across one are meaningless).
  std::vector<double> smooth{-1.7, -0.9, -0.55, 0.2, 0.9, 1.6, 2.3};
  GradCheckReport r = check_gradients(early::piecewise_k, int64_t(smooth.size()),
                                      {from_vector(smooth), 4, zeros<double>({int64_t(smooth.size())})});
  INFO(r.str());
  CHECK(r.passed());
  CHECK(r.tangent_error.empty());
}

TEST_CASE("Return of a tuple from a While(true): Newton's square root and its step count") {
  std::vector<double> v{0.25, 2.0, 9.0, 1e6, 3.5};
  NdArray root = zeros<double>({5}), steps = zeros<int>({5});
  launch(early::newton_k, 5, from_vector(v), root, steps);
  std::vector<double> r = root.to_vector<double>();
  std::vector<int> s = steps.to_vector<int>();
  for (size_t i = 0; i < v.size(); ++i) {
    CHECK(r[i] == doctest::Approx(std::sqrt(v[i])).epsilon(1e-14));
    CHECK(s[i] > 1);
    CHECK(s[i] < 60);
  }
  // Gradients at inputs of one scale (the check's step follows the largest input).
  std::vector<double> w{0.25, 2.0, 9.0, 3.5, 16.0};
  GradCheckReport g = check_gradients(early::newton_k, 5, {from_vector(w), zeros<double>({5}), zeros<int>({5})});
  INFO(g.str());
  CHECK(g.passed());
}

TEST_CASE("Return() leaves a device function that returns nothing") {
  std::vector<double> x = inputs(21);
  both_ways([&](bool strided, std::vector<NdArray>& keep) {
    NdArray out = test::make_array(std::vector<double>(21, 7.0), strided, keep);
    launch(early::store_k, 21, test::make_array(x, strided, keep), out);
    std::vector<double> got = test::read_array<double>(out);
    for (size_t i = 0; i < x.size(); ++i) CHECK(got[i] == (x[i] - 0.5 <= 0.0 ? 7.0 : (x[i] - 0.5) * (x[i] - 0.5)));
  });
  NdArray gx = zeros<double>({21});
  launch_adjoint(early::store_k, 21, {from_vector(x), zeros<double>({21})}, {gx, from_vector(std::vector<double>(21, 1.0))});
  std::vector<double> g = gx.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) CHECK(g[i] == doctest::Approx(x[i] - 0.5 <= 0.0 ? 0.0 : 2.0 * (x[i] - 0.5)));
}

TEST_CASE("a Return that does not match its function is a tracing error at its line") {
  auto message = [](const KernelDef& k) { return test::user_error([&] { (void)k.ir(); }); };
  std::string m = message(early_errors::wrong_type_k.def());
  CHECK(m.find("device function 'wrong_type' at tests/builtins/early_returns.cpp:") != std::string::npos);
  CHECK(m.find("Return(value) gives a Double; the function returns a Float (the body's value at its end)") != std::string::npos);
  CHECK(message(early_errors::no_value_k.def()).find("Return() without a value; the function returns a Float: write Return(value)") !=
        std::string::npos);
  CHECK(message(early_errors::void_with_value_k.def()).find("Return(value) gives a Float, but the body returns nothing at its end") !=
        std::string::npos);
  m = message(early_errors::kernel_value.def());
  CHECK(m.find("kernel 'early_errors::kernel_value' at tests/builtins/early_returns.cpp:") != std::string::npos);
  CHECK(m.find("Return(value) in a kernel: a kernel returns nothing") != std::string::npos);
}
