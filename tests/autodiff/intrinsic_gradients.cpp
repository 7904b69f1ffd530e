// The differentiable intrinsics (the builtins the DSL realises as IR statements rather than
// calls: casts, constructors, atomics, local arrays, print) against finite differences. The
// list is checked against intrinsics.def, so a differentiable intrinsic without a case here
// fails the suite, as builtin_gradients.cpp does for builtins.def.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <set>
#include <string>

#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"

using namespace kjit;

namespace ig_tests {
KJIT_MODULE(autodiff_intrinsics)
using namespace kjit::dsl;

KJIT_KERNEL(casts, (Array<Float> f, Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Double a = cast<double>(f[i]);  // float32 -> float64
  out[i] = a * a * x[i] + Double(f[i]) * 3.0;
}

KJIT_KERNEL(vectors, (Array<Double> x, Array<Double> y, Array<Double> out)) {
  Int i = tid();
  Vec3d v = vector(x[i], x[i] * y[i], 2.0);
  out[i] = length(v) + Vec2d(y[i], x[i]).x() * 0.5;
}

KJIT_KERNEL(matrices, (Array<Double> x, Array<Double> y, Array<Double> out)) {
  Int i = tid();
  Mat22d m = matrix<2, 2>(x[i], y[i], x[i] * y[i], Double(1.5));
  Mat33d n = Mat33d(x[i], 0.0, 1.0, y[i], 2.0, 0.0, 0.5, x[i], y[i]);
  out[i] = determinant(m) + determinant(n);
}

KJIT_KERNEL(quaternions, (Array<Double> x, Array<Double> y, Array<Double> out)) {
  Int i = tid();
  Quatd q = quaternion(x[i], y[i], Double(0.5), Double(1.0));
  Quatd r = quaternion(Vec3d(y[i], 0.25, x[i]), Double(0.75));
  out[i] = dot(quat_rotate(q, Vec3d(1.0, 2.0, 3.0)), Vec3d(1.0, -1.0, 0.5)) + quat_rotate(r, Vec3d(0.5, 1.0, -1.0)).x();
}

KJIT_KERNEL(transforms, (Array<Double> x, Array<Double> y, Array<Double> out)) {
  Int i = tid();
  Transformd t = transformation(Vec3d(x[i], y[i], 0.5), quat_from_axis_angle(Vec3d(0.0, 0.0, 1.0), x[i] * y[i]));
  Vec3d p = transform_point(t, Vec3d(1.0, 2.0, 3.0));
  out[i] = p.x() + 2.0 * p.y() - p.z();
}

KJIT_KERNEL(spatial, (Array<Double> x, Array<Double> y, Array<Double> out)) {
  Int i = tid();
  SpatialVectord a = spatial_vector(Vec3d(x[i], y[i], 1.0), Vec3d(y[i], 2.0, x[i]));
  SpatialVectord b = spatial_vector(x[i], 1.0, y[i], 0.5, x[i] * x[i], 2.0);
  out[i] = spatial_dot(a, b);
}

KJIT_KERNEL(local_arrays, (Array<Double> x, Array<Double> y, Array<Double> out)) {
  Int i = tid();
  auto a = zeros<Double, 3>();
  a[0] = x[i];
  a[1] = y[i] * x[i];
  a[2] = sin(y[i]);
  out[i] = a[0] * a[1] + a[2];
}

KJIT_KERNEL(atomics, (Array<Double> x, Array<Double> y, Array<Double> sum, Array<Double> lo, Array<Double> hi)) {
  Int i = tid();
  atomic_add(sum, 0, x[i] * y[i]);
  atomic_sub(sum, 1, x[i] * 2.0);
  atomic_min(lo, 0, x[i] + y[i]);
  atomic_max(hi, 0, x[i] - y[i]);
}

KJIT_KERNEL(prints, (Array<Double> x, Array<Double> y, Array<Double> out)) {
  Int i = tid();
  Double v = x[i] * y[i];
  If(i < 0, [&] { print(v); });  // never taken: the gradient passes through print's operand
  out[i] = v * v;
}
}  // namespace ig_tests

namespace {

struct IntrinsicCase {
  std::function<GradCheckReport()> check;
};

/// One gradient case per differentiable intrinsic, float64 (casts also float32).
const std::map<std::string, IntrinsicCase>& intrinsic_cases() {
  static const std::map<std::string, IntrinsicCase> cases = [] {
    std::map<std::string, IntrinsicCase> c;
    auto X = [] { return from_vector(std::vector<double>({0.7, -1.3, 0.2, 1.9})); };
    auto Y = [] { return from_vector(std::vector<double>({0.4, 0.9, -0.5, -1.1})); };
    auto two = [&](const auto& kernel) {
      return [&kernel, X, Y] { return check_gradients(kernel, 4, {X(), Y(), zeros<double>({4})}); };
    };
    c["cast"] = {[X] {
      return check_gradients(ig_tests::casts, 4,
                             {from_vector(std::vector<float>{0.5f, -1.25f, 2.0f, 0.75f}), X(), zeros<double>({4})});
    }};
    c["vector"] = {two(ig_tests::vectors)};
    c["matrix"] = {two(ig_tests::matrices)};
    c["quaternion"] = {two(ig_tests::quaternions)};
    c["transformation"] = {two(ig_tests::transforms)};
    c["spatial_vector"] = {two(ig_tests::spatial)};
    c["zeros"] = {two(ig_tests::local_arrays)};
    c["print"] = {two(ig_tests::prints)};
    auto atomics = [X, Y] {
      return check_gradients(ig_tests::atomics, 4, {X(), Y(), zeros<double>({2}), from_vector(std::vector<double>({10.0})),
                                                    from_vector(std::vector<double>({-10.0}))});
    };
    for (const char* op : {"atomic_add", "atomic_sub", "atomic_min", "atomic_max"}) c[op] = {atomics};
    return c;
  }();
  return cases;
}

std::set<std::string> differentiable_intrinsics() {
  std::set<std::string> names;
#define KJIT_INTRINSIC(name, form, realised, differentiable) \
  if (std::string(#differentiable) == "Yes") names.insert(name);
#include "kjit/ir/intrinsics.def"
#undef KJIT_INTRINSIC
  return names;
}

}  // namespace

TEST_CASE("every differentiable intrinsic has a gradient case, and only those") {
  std::set<std::string> covered;
  for (const auto& [name, c] : intrinsic_cases()) covered.insert(name);
  CHECK(differentiable_intrinsics() == covered);
  CHECK(covered.size() >= 12);
}

TEST_CASE("differentiable intrinsics: adjoints match central finite differences") {
  for (const auto& [name, c] : intrinsic_cases()) {
    GradCheckReport r = c.check();
    INFO(name << "\n" << r.str());
    CHECK(r.passed());
    for (const GradCheckParam& p : r.params) CHECK(p.checked > 0);
  }
}
