// Warp's spellings that kjit accepts (issue 17): a row vector times a matrix (`v * M`), an
// array's extents as `x.shape[k]`, a copied Var as a new variable; values against float64
// references and gradients against central finite differences. (What must not compile is in
// tests/compile_fail.)
#include <doctest/doctest.h>

#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"

namespace spellings {
using namespace kjit::dsl;
KJIT_MODULE(builtins_warp_spellings)

KJIT_KERNEL(row_times_matrix, (Array<Vec3d> v, Array<Mat33d> m, Array<Vec3d> out, Array<Vec3d> out_var)) {
  Int i = tid();
  Vec3d a = v[i];
  Mat33d M = m[i];
  out[i] = a * M;
  Var<Vec3d> w = a;
  w = w * M;  // a Var on the left, a named matrix on the right
  out_var[i] = w * m[i];
}
/// Non-square: a 2-vector times a 2 x 3 matrix is a 3-vector; the matrix times a 3-vector is
/// a 2-vector.
using mat23d = kjit::mat<2, 3, double>;
KJIT_KERNEL(row_times_wide, (Array<Vec2d> v, Array<mat23d> m, Array<Vec3d> out, Array<Vec2d> back)) {
  Int i = tid();
  Value<kjit::vec<3, double>> r = v[i] * m[i];
  out[i] = r;
  back[i] = m[i] * r;
}
KJIT_KERNEL(shapes, (Array<double, 2> x, Array<int32_t> out)) {
  Int i = tid();
  If(i == 0, [&] {
    out[0] = x.shape[0];
    out[1] = x.shape[1];
    out[2] = x.shape(1) * 10;  // kjit's call spelling still works
    out[3] = len(x);
  });
}
KJIT_KERNEL(var_copy, (Array<double> x, Array<double> a, Array<double> b)) {
  Int i = tid();
  Var<Double> p = x[i];
  Var<Double> q = p;  // a new variable holding p's value: changing q leaves p alone
  q += 1.0;
  Var<Double> r(q);
  r *= 2.0;
  a[i] = p;
  b[i] = q + r;
}
}  // namespace spellings

using namespace kjit;

namespace {
vec3d row_times(const vec3d& v, const mat33d& m) {
  vec3d r{};
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k) r[c] += v[k] * m[k][c];
  return r;
}
}  // namespace

TEST_CASE("v * M is the row vector times the matrix (Warp's vector-matrix product): values and gradients") {
  std::vector<vec3d> v{vec3d{{1, 2, 3}}, vec3d{{-0.5, 0.25, 2}}};
  std::vector<mat33d> m{mat33d{{{1, 2, 0}, {0, 1, 4}, {5, 0, 1}}}, mat33d{{{0.5, -1, 2}, {3, 0.25, 1}, {-2, 1, 0}}}};
  NdArray out = zeros<vec3d>({2}), out_var = zeros<vec3d>({2});
  launch(spellings::row_times_matrix, 2, from_vector(v), from_vector(m), out, out_var);
  auto o = out.to_vector<vec3d>(), ov = out_var.to_vector<vec3d>();
  for (size_t i = 0; i < 2; ++i) {
    vec3d want = row_times(v[i], m[i]), want2 = row_times(row_times(v[i], m[i]), m[i]);
    for (int c = 0; c < 3; ++c) {
      CHECK(o[i][c] == doctest::Approx(want[c]));
      CHECK(ov[i][c] == doctest::Approx(want2[c]));
    }
  }
  GradCheckReport r = check_gradients(spellings::row_times_matrix, 2, {from_vector(v), from_vector(m), zeros<vec3d>({2}), zeros<vec3d>({2})});
  INFO(r.str());
  CHECK(r.passed());

  std::vector<vec2d> v2{vec2d{{1, -2}}};
  std::vector<mat<2, 3, double>> m2{mat<2, 3, double>{{{1, 2, 3}, {4, 5, 6}}}};
  NdArray out3 = zeros<vec3d>({1}), back = zeros<vec2d>({1});
  launch(spellings::row_times_wide, 1, from_vector(v2), from_vector(m2), out3, back);
  CHECK(out3.to_vector<vec3d>()[0][0] == 1 - 8);
  CHECK(out3.to_vector<vec3d>()[0][2] == 3 - 12);
  CHECK(back.to_vector<vec2d>()[0][0] == 1 * -7 + 2 * -8 + 3 * -9);
  GradCheckReport r2 = check_gradients(spellings::row_times_wide, 1, {from_vector(v2), from_vector(m2), zeros<vec3d>({1}), zeros<vec2d>({1})});
  INFO(r2.str());
  CHECK(r2.passed());
}

TEST_CASE("x.shape[k] is the extent of dimension k, as x.shape(k) is") {
  NdArray x = zeros<double>({3, 5}), out = zeros<int32_t>({4});
  launch(spellings::shapes, 1, x, out);
  CHECK(out.to_vector<int32_t>() == std::vector<int32_t>{3, 5, 50, 3});
}

TEST_CASE("copying a Var makes a new variable (C++ value semantics)") {
  std::vector<double> x{1.0, -2.0};
  NdArray a = zeros<double>({2}), b = zeros<double>({2});
  launch(spellings::var_copy, 2, from_vector(x), a, b);
  CHECK(a.to_vector<double>() == x);
  CHECK(b.to_vector<double>() == std::vector<double>{2.0 + 4.0, -1.0 - 2.0});
}

// The kernel that uses every spelling of docs/DSL.md's "Warp -> kjit" table (the compile-fail
// suite compiles it warning-free): it must also trace, generate, compile and run.
#include "../compile_fail/snippets/pass_warp_spellings.cpp"
#include "nvrtc_check.hpp"

TEST_CASE("the kernel written with every spelling of the Warp table traces, compiles for cpu and sm_90, and runs") {
  const std::string text = test::module_text("pass_warp_spellings", {&snippet::warp_spellings.def()});
  CHECK(test::nvrtc_compile(text, "sm_90") == "");
  NdArray x = from_vector(std::vector<float>{0.5f, 0.25f}), v = zeros<vec3f>({2}), grid = zeros<float>({2, 2});
  NdArray ps = zeros<snippet::Particle>({2}), counts = zeros<int32_t>({2}), ms = zeros<mat33f>({2});
  NdArray fives = zeros<kjit::vec<5, float>>({2}), wides = zeros<kjit::mat<2, 3, double>>({2});
  launch(snippet::warp_spellings, 1, x, v, grid, ps, counts, ms, fives, wides, 2.0f, 8);
  CHECK(counts.to_vector<int32_t>() == std::vector<int32_t>{1, 1});
}
