// Device functions that return several values (Warp's multi-valued @wp.func, issue 17):
// std::tuple, std::pair, dsl::Tuple and plain structs of DSL values, taken apart with
// structured bindings; forward values, adjoints against central finite differences (also
// through a dynamic loop), user adjoints (adj_ret as a tuple) and replays. The module is
// compiled with NVRTC by nvrtc.cpp (every builtins_* module).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "nvrtc_check.hpp"

namespace multi {
using namespace kjit::dsl;
KJIT_MODULE(builtins_multi_results)

/// Polar coordinates of a 2-D point: a std::tuple of two values (one computed through a Var).
inline const auto polar = func("polar", [](auto x, auto y) {
  Var<typename decltype(x)::element_type> r = sqrt(x * x + y * y);
  return std::make_tuple(r, atan2(y, x));
});
/// A struct of a scalar and a vector.
struct Split {
  Double len;
  Vec3d dir;
};
inline const auto split = func("split", [](Vec3d v) {
  Double l = length(v);
  return Split{l, v / l};
});
/// A std::pair, and one of the values an array element (returned as a plain value).
inline const auto pick = func("pick", [](Array<double> a, Int i) { return std::make_pair(a[i] * a[i], Int(i + 1)); });
/// kjit's own Tuple, three results of three types.
inline const auto three = func("three", [](Double x) {
  return Tuple<Double, Vec2d, Double>{x * x, Vec2d(sin(x), cos(x)), exp(x * 0.5)};
});

KJIT_KERNEL(polar_k, (Array<double> x, Array<double> y, Array<double> r, Array<double> phi)) {
  Int i = tid();
  auto [a, b] = polar(x[i], y[i]);
  r[i] = a;
  phi[i] = b;
}
KJIT_KERNEL(split_k, (Array<Vec3d> v, Array<double> len, Array<Vec3d> dir)) {
  Int i = tid();
  auto [l, d] = split(v[i]);
  len[i] = l * l;
  dir[i] = d * l;
}
KJIT_KERNEL(pick_k, (Array<double> a, Array<double> out)) {
  Int i = tid();
  auto [sq, next] = pick(a, i);
  out[i] = sq + a[next % a.shape[0]];
}
KJIT_KERNEL(three_k, (Array<double> x, Array<double> out)) {
  Int i = tid();
  auto [p, q, s] = three(x[i]);
  std::tuple<Double, Double> t = polar(q.x(), q.y());  // a tuple result kept as a std::tuple
  out[i] = p * s + std::get<0>(t) + std::get<1>(t) * q.y();
}
/// A multi-result function called in a dynamic loop that carries a Var through it.
inline const auto rotate_step = func("rotate_step", [](Double c, Double s, Double k) {
  return std::make_tuple(c * cos(k) - s * sin(k), c * sin(k) + s * cos(k) + 0.1 * c * c);
});
KJIT_KERNEL(loop_k, (Array<double> x, Array<double> k, Int steps, Array<double> out)) {
  Int i = tid();
  Var<Double> c = x[i], s = 0.5;
  For(0, steps, [&](Int) {
    auto [c2, s2] = rotate_step(c, s, k[i]);
    c = c2;
    s = s2;
  });
  out[i] = c * s;
}
KJIT_KERNEL(loop_inline, (Array<double> x, Array<double> k, Int steps, Array<double> out)) {
  Int i = tid();
  Var<Double> c = x[i], s = 0.5;
  For(0, steps, [&](Int) {
    Double c2 = c * cos(k[i]) - s * sin(k[i]);
    Double s2 = c * sin(k[i]) + s * cos(k[i]) + 0.1 * c * c;
    c = c2;
    s = s2;
  });
  out[i] = c * s;
}

/// A user adjoint for a tuple result: adj_ret arrives as the call returns it (a tuple). The
/// gradient of the second result is deliberately scaled by 10, so the test sees it is used.
inline const auto marked_pair = func("marked_pair", [](Double x) { return std::make_tuple(x * x, x * 3.0); })
    .grad([](Double x, auto adj_ret, auto& adj_x) {
      auto [adj_sq, adj_triple] = adj_ret;
      adj_x += adj_sq * 2.0 * x + adj_triple * 30.0;
    });
KJIT_KERNEL(marked_k, (Array<double> x, Array<double> a, Array<double> b)) {
  auto [sq, triple] = marked_pair(x[tid()]);
  a[tid()] = sq;
  b[tid()] = triple;
}
/// A correct user adjoint with a replay: gradients must match finite differences.
inline const auto sincos = func("sincos", [](Double x) { return std::make_tuple(sin(x), cos(x)); })
    .grad([](Double x, auto adj_ret, auto& adj_x) {
      auto [adj_s, adj_c] = adj_ret;
      adj_x += adj_s * cos(x) - adj_c * sin(x);
    })
    .replay([](Double x) { return std::make_tuple(sin(x), cos(x)); });
KJIT_KERNEL(sincos_k, (Array<double> x, Array<double> out)) {
  auto [s, c] = sincos(x[tid()]);
  out[tid()] = s * c + s;
}
}  // namespace multi

using namespace kjit;

namespace {
GradCheckReport checked(GradCheckReport r) {
  INFO(r.str());
  CHECK(r.passed());
  return r;
}
}  // namespace

TEST_CASE("a device function returning a std::tuple: values, and gradients against finite differences") {
  std::vector<double> x{1.0, -0.5, 0.3, 2.0}, y{0.5, 1.5, -0.8, 0.1};
  NdArray r = zeros<double>({4}), phi = zeros<double>({4});
  launch(multi::polar_k, 4, from_vector(x), from_vector(y), r, phi);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(r.to_vector<double>()[i] == doctest::Approx(std::hypot(x[i], y[i])));
    CHECK(phi.to_vector<double>()[i] == doctest::Approx(std::atan2(y[i], x[i])));
  }
  checked(check_gradients(multi::polar_k, 4, {from_vector(x), from_vector(y), zeros<double>({4}), zeros<double>({4})}));
  // Called, not inlined: one device function returning the results struct.
  const std::string text = test::module_text("builtins_multi_results", {&multi::polar_k.def()});
  CHECK(text.find("// device function polar") != std::string::npos);
  CHECK(text.find("struct results_float64_float64") != std::string::npos);
}

TEST_CASE("a device function returning a struct, a std::pair and a dsl::Tuple") {
  std::vector<vec3d> v{vec3d{{1, 2, 2}}, vec3d{{0.5, -1, 0.25}}};
  NdArray len = zeros<double>({2}), dir = zeros<vec3d>({2});
  launch(multi::split_k, 2, from_vector(v), len, dir);
  CHECK(len.to_vector<double>()[0] == doctest::Approx(9.0));
  CHECK(dir.to_vector<vec3d>()[1][1] == doctest::Approx(-1.0));
  checked(check_gradients(multi::split_k, 2, {from_vector(v), zeros<double>({2}), zeros<vec3d>({2})}));

  std::vector<double> a{0.5, -1.2, 2.0};
  NdArray out = zeros<double>({3});
  launch(multi::pick_k, 3, from_vector(a), out);
  CHECK(out.to_vector<double>()[2] == doctest::Approx(4.0 + 0.5));
  checked(check_gradients(multi::pick_k, 3, {from_vector(a), zeros<double>({3})}));

  std::vector<double> x{0.3, -0.7, 1.1};
  NdArray o3 = zeros<double>({3});
  launch(multi::three_k, 3, from_vector(x), o3);
  for (size_t i = 0; i < 3; ++i) {
    double s = std::sin(x[i]), c = std::cos(x[i]);
    CHECK(o3.to_vector<double>()[i] == doctest::Approx(x[i] * x[i] * std::exp(x[i] * 0.5) + std::hypot(s, c) + std::atan2(c, s) * c));
  }
  checked(check_gradients(multi::three_k, 3, {from_vector(x), zeros<double>({3})}));
}

TEST_CASE("a multi-result device function in a dynamic loop: values and gradients equal the inlined kernel's") {
  std::vector<double> x{0.3, 1.2, -0.7}, k{0.4, -0.2, 0.9};
  NdArray a = zeros<double>({3}), b = zeros<double>({3});
  launch(multi::loop_k, 3, from_vector(x), from_vector(k), 5, a);
  launch(multi::loop_inline, 3, from_vector(x), from_vector(k), 5, b);
  for (size_t i = 0; i < 3; ++i) CHECK(a.to_vector<double>()[i] == doctest::Approx(b.to_vector<double>()[i]).epsilon(1e-14));
  checked(check_gradients(multi::loop_k, 3, {from_vector(x), from_vector(k), 5, zeros<double>({3})}));
}

TEST_CASE("a user adjoint of a multi-result function receives adj_ret as a tuple; a replay is used") {
  std::vector<double> x{1.0, 2.0};
  NdArray a = zeros<double>({2}), b = zeros<double>({2}), gx = zeros<double>({2});
  launch(multi::marked_k, 2, from_vector(x), a, b);
  CHECK(b.to_vector<double>() == std::vector<double>{3.0, 6.0});
  launch_adjoint(multi::marked_k, 2, {from_vector(x), a, b},
                 {gx, from_vector(std::vector<double>{1, 0}), from_vector(std::vector<double>{0, 1})});
  CHECK(gx.to_vector<double>() == std::vector<double>{2.0, 30.0});  // 2x from the first, 10 * 3 from the second

  std::vector<double> y{0.2, -1.3, 2.5};
  checked(check_gradients(multi::sincos_k, 3, {from_vector(y), zeros<double>({3})}));
}
