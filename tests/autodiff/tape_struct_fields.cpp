// kjit::Tape with arrays held in fields of struct arguments (Warp's @wp.struct array members):
// backward adds into each field's own gradient buffer, zero() clears them (nested structs and a
// kjit::Mesh's points included), and structs up to LaunchArg::kMaxValueBytes launch (a Mesh
// beside five arrays, as Warp's diffray example holds its mesh); adjoints that read the
// gradients of field arrays written in a branch and by atomics, in lane blocks too.
#include <doctest/doctest.h>

#include <vector>

#include "../runtime/user_error.hpp"
#include "test_support.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "kjit/runtime/tape.hpp"

using namespace kjit;
using kjit::test::error_of;

namespace tape_struct_tests {
using namespace kjit::dsl;
KJIT_STRUCT(Weights, (Array<Double>, w), (Double, k));
KJIT_STRUCT(Layer, (Weights, inner), (Array<Double>, bias));
// 504 + 5 x 72 = 864 bytes: past the 512 a launch value could hold before.
KJIT_STRUCT(Scene, (kjit::dsl::Mesh, mesh), (Array<Double>, a), (Array<Double>, b), (Array<Double>, c), (Array<Double>, d),
            (Array<Vec3f>, offset));
KJIT_STRUCT(ThreeMeshes, (kjit::dsl::Mesh, m0), (kjit::dsl::Mesh, m1), (kjit::dsl::Mesh, m2));  // 1512 bytes

KJIT_MODULE(autodiff_tape_struct_fields)
// loss = sum_i k w_i x_i + bias_i
KJIT_KERNEL(layer_loss, (Value<Layer> layer, Array<Double> x, Array<Double> loss)) {
  Int i = tid();
  atomic_add(loss, 0, layer.inner().k() * layer.inner().w()[i] * x[i] + layer.bias()[i]);
}
// loss = sum_i (a_i b_i + c_i) d_i + (points_i + offset_0) . (1, 2, 3)
KJIT_KERNEL(scene_loss, (Value<Scene> s, Array<Double> loss)) {
  Int i = tid();
  Vec3f p = s.mesh().points()[i] + s.offset()[0];
  Double q = Double(p[0] + 2.0f * p[1] + 3.0f * p[2]);
  atomic_add(loss, 0, (s.a()[i] * s.b()[i] + s.c()[i]) * s.d()[i] + q);
}
// Writes the layer's bias through the struct: bias_i = 2 x_i.
KJIT_KERNEL(set_bias, (Value<Layer> layer, Array<Double> x)) {
  Int i = tid();
  layer.bias()[i] = 2.0 * x[i];
}
// A branch's store and an atomic add into a layer's field arrays (bias_i = v_i^2 where v_i > 0,
// w_{i mod 3} += 2 v_i, v_i = k x_i): the cpu's adjoint lane function reads the fields' gradients.
KJIT_KERNEL(field_writes, (Value<Layer> layer, Array<Double> x)) {
  Int i = tid();
  Double v = layer.inner().k() * x[i];
  If(v > 0.0, [&] { layer.bias()[i] = v * v; });
  atomic_add(layer.inner().w(), i % 3, 2.0 * v);
}
}  // namespace tape_struct_tests

using namespace tape_struct_tests;

namespace {
std::vector<double> host(const NdArray& a) { return a.to_vector<double>(); }
}  // namespace

TEST_CASE("a tape adds into the gradients of arrays in struct fields, and zero() clears them") {
  const std::vector<double> w = {0.5, -1.5, 2.0}, x = {1.0, 3.0, -2.0};
  NdArray wa = from_vector(w).requires_grad(), bias = from_vector(std::vector<double>{0.1, 0.2, 0.3}).requires_grad();
  NdArray xa = from_vector(x), loss = zeros<double>({1}).requires_grad();
  Layer layer;
  layer.inner.w = wa;
  layer.inner.k = 1.25;
  layer.bias = bias;
  Tape tape;
  {
    auto on = tape.record();
    launch(layer_loss, 3, layer, xa, loss);
  }
  CHECK(host(loss)[0] == doctest::Approx(1.25 * (0.5 * 1.0 - 1.5 * 3.0 + 2.0 * -2.0) + 0.6));
  tape.backward(loss);
  tape.backward(loss);  // gradients add up until zero()
  for (size_t i = 0; i < 3; ++i) {
    CHECK(host(wa.grad())[i] == 2 * 1.25 * x[i]);
    CHECK(host(bias.grad())[i] == 2.0);
  }
  tape.zero();
  CHECK(host(wa.grad()) == std::vector<double>(3, 0.0));
  CHECK(host(bias.grad()) == std::vector<double>(3, 0.0));
  tape.backward(loss);
  for (size_t i = 0; i < 3; ++i) CHECK(host(wa.grad())[i] == 1.25 * x[i]);
}

TEST_CASE("an array in a struct field read by a recorded launch and overwritten later is reported") {
  auto setup = [](Tape& tape, Layer& layer, NdArray& wa, NdArray& bias, NdArray& xa, NdArray& loss) {
    wa = from_vector(std::vector<double>{0.5, -1.5, 2.0}).requires_grad();
    bias = from_vector(std::vector<double>{0.1, 0.2, 0.3});
    xa = from_vector(std::vector<double>{1.0, 3.0, -2.0});
    loss = zeros<double>({1});
    layer.inner.w = wa;
    layer.inner.k = 1.25;
    layer.bias = bias;
    auto on = tape.record();
    launch(layer_loss, 3, layer, xa, loss);
  };
  const std::string head = "Tape::backward: step 0 (kernel 'tape_struct_tests::layer_loss') read its array in argument "
                           "'layer' (its field '";
  const std::string tail = "); its adjoint would replay with the new values and give a wrong gradient. Nothing was "
                           "run: write the new values to another array, or keep a copy of the old ones for the tape";
  SUBCASE("a nested field, by a host write of the array assigned to it") {
    Tape tape;
    Layer layer;
    NdArray wa, bias, xa, loss;
    setup(tape, layer, wa, bias, xa, loss);
    wa.fill(3.0);
    CHECK(error_of([&] { tape.backward(loss); }) ==
          head + "inner.w'), which has been overwritten since the step was recorded (last by NdArray::fill" + tail);
    CHECK(host(wa.grad()) == std::vector<double>(3, 0.0));  // nothing ran
  }
  SUBCASE("a field, by a launch writing it through the struct") {
    Tape tape;
    Layer layer;
    NdArray wa, bias, xa, loss;
    setup(tape, layer, wa, bias, xa, loss);
    launch(set_bias, 3, layer, xa);
    CHECK(error_of([&] { tape.backward(loss); }) ==
          head + "bias'), which has been overwritten since the step was recorded (last by a launch of kernel "
                 "'tape_struct_tests::set_bias', argument 'layer' (its field 'bias')" + tail);
  }
  SUBCASE("not by writes elsewhere") {
    Tape tape;
    Layer layer;
    NdArray wa, bias, xa, loss;
    setup(tape, layer, wa, bias, xa, loss);
    NdArray other_bias = zeros<double>({3});  // a field does not keep its array alive
    Layer other;
    other.inner.w = wa;
    other.bias = other_bias;
    launch(set_bias, 3, other, xa);  // the same kernel, another bias
    tape.backward(loss);
    for (size_t i = 0; i < 3; ++i) CHECK(host(wa.grad())[i] == 1.25 * std::vector<double>{1.0, 3.0, -2.0}[i]);
  }
}

TEST_CASE("a struct of a Mesh and five arrays (864 bytes) launches, differentiates and is zeroed") {
  static_assert(sizeof(Scene) == 864 && sizeof(Scene) <= LaunchArg::kMaxValueBytes);
  const std::vector<vec3f> pts = {vec3f{{0, 0, 0}}, vec3f{{1, 0, 0}}, vec3f{{0, 1, 0}}};
  NdArray points = from_vector(pts).requires_grad();
  kjit::Mesh mesh(points, from_vector(std::vector<int>{0, 1, 2}));
  const std::vector<double> a = {1, 2, 3}, b = {-1, 0.5, 4}, c = {0.25, 0, -2}, d = {2, -3, 0.5};
  NdArray aa = from_vector(a).requires_grad(), ba = from_vector(b).requires_grad(), ca = from_vector(c).requires_grad(),
          da = from_vector(d).requires_grad();
  NdArray offset = from_vector(std::vector<vec3f>{vec3f{{0.5f, 0, 0}}}).requires_grad();
  NdArray loss = zeros<double>({1}).requires_grad();
  Scene s;
  s.mesh = mesh.view();
  s.a = aa, s.b = ba, s.c = ca, s.d = da, s.offset = offset;
  Tape tape;
  {
    auto on = tape.record();
    launch(scene_loss, 3, s, loss);
  }
  // The value, summed by hand: (a b + c) d and the points' weighted coordinates.
  double expect = 0;
  for (size_t i = 0; i < 3; ++i)
    expect += (a[i] * b[i] + c[i]) * d[i] + (pts[i][0] + 0.5) + 2.0 * pts[i][1] + 3.0 * pts[i][2];
  CHECK(host(loss)[0] == doctest::Approx(expect));
  tape.backward(loss);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(host(aa.grad())[i] == b[i] * d[i]);
    CHECK(host(ba.grad())[i] == a[i] * d[i]);
    CHECK(host(ca.grad())[i] == d[i]);
    CHECK(host(da.grad())[i] == a[i] * b[i] + c[i]);
    const vec3f g = points.grad().to_vector<vec3f>()[i];
    CHECK((g[0] == 1.0f && g[1] == 2.0f && g[2] == 3.0f));
  }
  const vec3f go = offset.grad().to_vector<vec3f>()[0];
  CHECK((go[0] == 3.0f && go[1] == 6.0f && go[2] == 9.0f));
  tape.zero();
  for (const NdArray& g : {aa.grad(), ba.grad(), ca.grad(), da.grad()}) CHECK(host(g) == std::vector<double>(3, 0.0));
  for (const vec3f& g : points.grad().to_vector<vec3f>()) CHECK((g[0] == 0.0f && g[1] == 0.0f && g[2] == 0.0f));
  const vec3f zo = offset.grad().to_vector<vec3f>()[0];
  CHECK((zo[0] == 0.0f && zo[1] == 0.0f && zo[2] == 0.0f));
}

TEST_CASE("a value larger than LaunchArg::kMaxValueBytes is refused, naming its type") {
  static_assert(sizeof(ThreeMeshes) > LaunchArg::kMaxValueBytes);
  const std::vector<unsigned char> bytes(sizeof(ThreeMeshes), 0);
  CHECK(error_of([&] { LaunchArg::from_bytes(ir_type_of<ThreeMeshes>(), bytes.data()); }) ==
        "LaunchArg::from_bytes: a value of type " + ir_type_of<ThreeMeshes>().str() + " is not a launch value");
}

TEST_CASE("an adjoint reads the gradients of field arrays a branch stores to and atomics add into, in lane blocks too") {
  // 37 threads: two blocks of 16 through the cpu's adjoint lane function, 5 through the scalar
  // body. Without a bias gradient its reads are skipped, lane by lane.
  kjit::test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  const int n = 37;
  const double k = 1.5;
  std::vector<double> x(n), gb(n);
  for (int i = 0; i < n; ++i) {
    x[size_t(i)] = 0.25 * (i % 7) - 0.6;
    gb[size_t(i)] = 0.5 + 0.125 * i;
  }
  const std::vector<double> gw = {1.0, -2.0, 0.75};
  for (bool bias_grad : {true, false}) {
    CAPTURE(bias_grad);
    NdArray wa = from_vector(std::vector<double>{0, 0, 0}).requires_grad(), bias = zeros<double>({n});
    if (bias_grad) bias.requires_grad();
    Layer layer;
    layer.inner.w = wa;
    layer.inner.k = k;
    layer.bias = bias;
    NdArray xa = from_vector(x);
    launch(field_writes, n, layer, xa);
    std::copy(gw.begin(), gw.end(), static_cast<double*>(wa.grad().data()));
    if (bias_grad) std::copy(gb.begin(), gb.end(), static_cast<double*>(bias.grad().data()));
    NdArray gx = zeros<double>({n}), glayer = zeros<Layer>({1});
    launch_adjoint(field_writes, n, {layer, xa}, {glayer, gx});
    const std::vector<double> g = host(gx);
    double gk = 0;
    for (int i = 0; i < n; ++i) {
      const double v = k * x[size_t(i)];
      // d/dv of gb_i v^2 (where v > 0) + gw_{i mod 3} 2 v
      const double dv = (bias_grad && v > 0 ? 2 * v * gb[size_t(i)] : 0.0) + 2 * gw[size_t(i % 3)];
      CAPTURE(i);
      CHECK(g[size_t(i)] == doctest::Approx(k * dv));
      gk += x[size_t(i)] * dv;
    }
    CHECK(glayer.to_vector<Layer>()[0].inner.k == doctest::Approx(gk));
  }
}
