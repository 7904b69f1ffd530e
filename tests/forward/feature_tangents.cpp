// Tangents through the kernel language: what forward mode differentiates and reverse mode
// refuses (arrays read and written, overwritten elements), loops with every jump, local
// arrays at dynamic indices, structs (values and arrays), vectors, matrices, quaternions
// and transforms, and print(), against closed forms and finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "forward_support.hpp"
#include "test_support.hpp"

namespace fwd_features {
KJIT_MODULE(forward_features)
using namespace kjit::dsl;

KJIT_STRUCT(Body, (Double, mass), (Vec3d, pos), (Vec3d, vel), (Int, id));
KJIT_STRUCT(Params, (Double, dt), (Vec3d, gravity));

/// In place: x[i] <- x[i]^2 + sin(x[i]) (reverse mode refuses an array read and written).
KJIT_KERNEL(in_place, (Array<Double> x)) {
  Int i = tid();
  Double v = x[i];
  x[i] = v * v + sin(v);
}

/// Overwrites one element every iteration; the last value stays (reverse mode refuses it).
KJIT_KERNEL(overwrite, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int) {
    y = y * 1.1 + 0.2 * y * y;
    out[i] = y;
  });
}

/// y = x c^n: dy = c^n dx + n x c^(n-1) dc.
KJIT_KERNEL(geometric, (Array<Double> x, Array<Double> c, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Double ci = c[i];
  For(0, n, [&](Int) { y = y * ci; });
  out[i] = y;
}

/// w <- w c, `steps` times, in float32: its tangent dw <- dw c + w dc is one fused
/// multiply-add per step (the loop's chain through dw), so its bits are those of fmaf.
KJIT_KERNEL(scaled_f32, (Array<Float> x, Float c, Int steps, Array<Float> out)) {
  Int i = tid();
  Var<Float> w = x[i];
  For(0, steps, [&](Int) { w = w * c; });
  out[i] = w;
}

/// Every jump: Continue and Break in nested dynamic loops, a While, an early Return.
KJIT_KERNEL(jumps, (Array<Double> x, Array<Double> c, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  Double ci = c[i];
  For(0, n, [&](Int k) {
    If(k % 3 == 2, [&] { Continue(); });
    For(0, k + 1, [&](Int j) {
      y = y * ci + 0.1 * sin(y + Double(j));
      If(y > 5.0, [&] { Break(); });
    });
  });
  Var<Int> m = 0;
  While([&] { return m < n && y < 3.0; }, [&] {
    y = y + 0.3 * cos(y) * ci;
    m = m + 1;
  });
  If(y < -2.0, [&] {
    out[i] = y * y;
    Return();
  });
  out[i] = y;
}

/// A local array written and read at loop indices.
KJIT_KERNEL(local_array, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  auto a = zeros<Double, 4>();
  For(0, 4, [&](Int k) { a[k] = x[i] * Double(k) + sin(x[i] * 0.5 * Double(k)); });
  Var<Double> s = 0.0;
  For(0, 4, [&](Int k) { s += a[3 - k] * a[k]; });
  out[i] = s;
}

/// Geometry: a rotation from two inputs, a matrix product, a transform.
KJIT_KERNEL(geometry, (Array<Vec3d> v, Array<Double> angle, Array<Mat33d> m, Array<Double> out)) {
  Int i = tid();
  Quatd q = quat_from_axis_angle(normalize(Vec3d(1.0, 2.0, 2.0)), angle[i]);
  Vec3d r = quat_rotate(q, v[i]);
  Mat33d a = m[i] * transpose(m[i]) + outer(r, v[i]);
  Transformd t = transformation(r, q);
  out[i] = trace(a) + dot(transform_point(t, Vec3d(0.5, -1.0, 2.0)), r) + determinant(m[i]);
}

/// One Euler step of each body: a struct value parameter and struct arrays.
KJIT_KERNEL(step, (Value<Params> p, Array<Body> bodies, Array<Body> out, Array<Double> energy)) {
  Int i = tid();
  Var<Body> b = bodies[i];
  b.vel() += p.gravity() * p.dt();
  b.pos() += b.vel() * p.dt();
  b.vel().y() *= 0.5 + 0.25 * sin(b.pos().x());
  b.id() = b.id() + 1;
  out[i] = b;
  energy[i] = 0.5 * b.mass() * dot(b.vel(), b.vel()) + b.mass() * b.pos().z();
}

/// The kinks at their ties: min, max, clamp, abs, one-vector min.
KJIT_KERNEL(ties, (Array<Double> a, Array<Double> b, Array<Double> out)) {
  Int i = tid();
  Double x = a[i], y = b[i];
  out[5 * i] = min(x, y);
  out[5 * i + 1] = max(x, y);
  out[5 * i + 2] = clamp(x, y, y + 1.0);
  out[5 * i + 3] = abs(x - y);
  out[5 * i + 4] = min(Vec3d(y, x, y));
}

KJIT_KERNEL(printing, (Array<Double> x, Array<Double> out)) {
  Int i = tid();
  Double v = x[i] * x[i];
  print(v);
  out[i] = v;
}
}  // namespace fwd_features

using namespace kjit;
using forward_support::expect_tangents_pass;
using forward_support::random_values;

TEST_CASE("an array read and written in place, which reverse mode refuses") {
  const int n = 37;
  auto x0 = random_values(n, -2, 2, 1), dx0 = random_values(n, -1, 1, 2);
  auto X = from_vector(x0), DX = from_vector(dx0);
  launch_tangent(fwd_features::in_place, n, {X}, {DX});
  auto x = X.to_vector<double>(), dx = DX.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    CHECK(x[size_t(i)] == doctest::Approx(x0[size_t(i)] * x0[size_t(i)] + std::sin(x0[size_t(i)])));
    CHECK(dx[size_t(i)] == doctest::Approx((2 * x0[size_t(i)] + std::cos(x0[size_t(i)])) * dx0[size_t(i)]));
  }
}

TEST_CASE("an element overwritten in a loop keeps the last value's tangent") {
  const int n = 37;
  auto x = random_values(n, -0.5, 0.5, 3), dx = random_values(n, -1, 1, 4);
  auto out = zeros<double>({n}), dout = zeros<double>({n});
  launch_tangent(fwd_features::overwrite, n, {from_vector(x), 6, out}, {from_vector(dx), {}, dout});
  auto d = dout.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    double y = x[size_t(i)], t = dx[size_t(i)];
    for (int k = 0; k < 6; ++k) {
      t = t * (1.1 + 0.4 * y);
      y = y * 1.1 + 0.2 * y * y;
    }
    CHECK(d[size_t(i)] == doctest::Approx(t).epsilon(1e-12));
  }
}

TEST_CASE("a product's tangent is rounded once: dw c + w dc is fmaf(dw, c, w dc), in lane blocks and the tail") {
  // (1 + 2^-13)(1 - 2^-13) is 1 - 2^-26: a float32 product rounds it to 1, a fused one keeps
  // it. The inputs are chosen so that the fused and the unfused tangents differ.
  const float e = std::ldexp(1.0f, -13);
  for (int n : {1, 37, 100}) {
    INFO("threads = " << n);
    std::vector<float> x(static_cast<size_t>(n)), dx(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) x[size_t(i)] = -1.0f + float(i % 5) * e, dx[size_t(i)] = 1.0f + e;
    const float c = 1.0f - e, dc = 1.0f;  // lanes with x = -1: fused -2^-26, unfused 0 after one step
    for (int steps : {0, 1, 5}) {
      INFO("steps = " << steps);
      auto out = zeros<float>({n}), dout = zeros<float>({n});
      launch_tangent(fwd_features::scaled_f32, n, {from_vector(x), c, steps, out}, {from_vector(dx), dc, {}, dout});
      auto o = out.to_vector<float>(), d = dout.to_vector<float>();
      bool any_differs = false;
      for (int i = 0; i < n; ++i) {
        float w = x[size_t(i)], dw = dx[size_t(i)], unfused = dw;
        for (int k = 0; k < steps; ++k) {
          volatile float product = w * dc;  // one rounding each, as the text asks
          unfused = unfused * c + product;
          dw = std::fma(dw, c, float(product));
          w = w * c;
        }
        CHECK(o[size_t(i)] == w);
        CHECK(d[size_t(i)] == dw);
        any_differs = any_differs || unfused != dw;
      }
      if (steps == 1) CHECK(any_differs);  // the inputs tell fused from unfused (later steps round it away)
    }
  }
}

TEST_CASE("a dynamic loop: the closed form of a geometric recurrence") {
  for (int steps : {0, 1, 7, 100}) {
    INFO("steps = " << steps);
    const double x = 0.7, c = 0.97, dx = 0.3, dc = -2.0;
    auto out = zeros<double>({1}), dout = zeros<double>({1});
    launch_tangent(fwd_features::geometric, 1, {from_vector(std::vector<double>{x}), from_vector(std::vector<double>{c}), steps, out},
                   {from_vector(std::vector<double>{dx}), from_vector(std::vector<double>{dc}), {}, dout});
    const double expected = std::pow(c, steps) * dx + (steps ? steps * x * std::pow(c, steps - 1) * dc : 0.0);
    CHECK(dout.to_vector<double>()[0] == doctest::Approx(expected).epsilon(1e-12));
  }
}

TEST_CASE("Break, Continue, While and Return, at sizes with lane blocks and tails") {
  for (int n : {3, 37, 1003}) {
    INFO("n = " << n);
    auto X = from_vector(random_values(n, -1.5, 1.5, 5)), C = from_vector(random_values(n, 0.5, 1.2, 6));
    GradCheckOptions o;
    o.max_elements = 6;
    for (int steps : {0, 2, 5}) {
      INFO("steps = " << steps);
      expect_tangents_pass(check_gradients(fwd_features::jumps, n, {X, C, steps, zeros<double>({n})}, o), 2);
    }
  }
}

TEST_CASE("local arrays at dynamic indices, and geometry: quaternions, matrices, transforms") {
  const int n = 37;
  expect_tangents_pass(check_gradients(fwd_features::local_array, n, {from_vector(random_values(n, -1, 1, 7)), zeros<double>({n})}), 1);
  auto r = random_values(12 * n, -1, 1, 8);
  std::vector<vec3d> v(n);
  std::vector<mat33d> m(n);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) {
      v[size_t(i)][c] = r[size_t(12 * i + c)];
      for (int d = 0; d < 3; ++d) m[size_t(i)][c][d] = r[size_t(12 * i + 3 + 3 * c + d)] + (c == d ? 2.0 : 0.0);
    }
  expect_tangents_pass(check_gradients(fwd_features::geometry, n,
                                       {from_vector(v), from_vector(random_values(n, -3, 3, 9)), from_vector(m), zeros<double>({n})}),
                       3);
}

TEST_CASE("structs: a struct value's tangent and struct arrays' tangents against finite differences") {
  using fwd_features::Body;
  using fwd_features::Params;
  const int n = 5;
  std::vector<Body> b(n), db(n);
  for (int i = 0; i < n; ++i) {
    b[size_t(i)] = Body{1.0 + 0.5 * i, vec3d{{0.1 * i, -0.2, 0.3 + 0.1 * i}}, vec3d{{0.5, 1.0 - 0.3 * i, -0.4}}, 10 * i};
    db[size_t(i)] = Body{0.3 - 0.1 * i, vec3d{{0.2, 0.1 * i, -0.5}}, vec3d{{-0.3, 0.25, 0.1 * i}}, 0};
  }
  const Params p{0.1, vec3d{{0.0, -9.8, 0.5}}}, dp{0.02, vec3d{{0.3, -0.1, 0.2}}};
  auto out = zeros<Body>({n}), dout = zeros<Body>({n}), energy = zeros<double>({n}), denergy = zeros<double>({n});
  launch_tangent(fwd_features::step, n, {p, from_vector(b), out, energy}, {dp, from_vector(db), dout, denergy});
  // Central differences of every output along (dp, db).
  auto along = [&](double h) {
    Params q = p;
    q.dt += h * dp.dt;
    for (int c = 0; c < 3; ++c) q.gravity[c] += h * dp.gravity[c];
    std::vector<Body> bb = b;
    for (int i = 0; i < n; ++i) {
      bb[size_t(i)].mass += h * db[size_t(i)].mass;
      for (int c = 0; c < 3; ++c) {
        bb[size_t(i)].pos[c] += h * db[size_t(i)].pos[c];
        bb[size_t(i)].vel[c] += h * db[size_t(i)].vel[c];
      }
    }
    auto o = zeros<Body>({n}), e = zeros<double>({n});
    launch(fwd_features::step, n, q, from_vector(bb), o, e);
    return std::make_pair(o.to_vector<Body>(), e.to_vector<double>());
  };
  const double h = 1e-6;
  auto plus = along(h), minus = along(-h);
  auto t = dout.to_vector<Body>();
  auto te = denergy.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    INFO("body " << i);
    CHECK(te[size_t(i)] == doctest::Approx((plus.second[size_t(i)] - minus.second[size_t(i)]) / (2 * h)).epsilon(1e-6));
    CHECK(t[size_t(i)].mass == doctest::Approx((plus.first[size_t(i)].mass - minus.first[size_t(i)].mass) / (2 * h)).epsilon(1e-6));
    for (int c = 0; c < 3; ++c) {
      CHECK(t[size_t(i)].pos[c] == doctest::Approx((plus.first[size_t(i)].pos[c] - minus.first[size_t(i)].pos[c]) / (2 * h)).epsilon(1e-6));
      CHECK(t[size_t(i)].vel[c] == doctest::Approx((plus.first[size_t(i)].vel[c] - minus.first[size_t(i)].vel[c]) / (2 * h)).epsilon(1e-6));
    }
  }
}

TEST_CASE("ties and kinks follow the adjoint's conventions, and the dot product holds there") {
  // a == b: min, max and clamp (at its lower limit) pass the first operand's (x's) tangent,
  // abs at 0 passes none, the one-vector min the first extreme component's (y).
  auto A = from_vector(std::vector<double>{0.5, -1.0}), B = from_vector(std::vector<double>{0.5, -1.0});
  auto dA = from_vector(std::vector<double>{2.0, 3.0}), dB = from_vector(std::vector<double>{-7.0, 5.0});
  auto out = zeros<double>({10}), dout = zeros<double>({10});
  launch_tangent(fwd_features::ties, 2, {A, B, out}, {dA, dB, dout});
  auto d = dout.to_vector<double>();
  for (int i = 0; i < 2; ++i) {
    const double dx = i ? 3.0 : 2.0, dy = i ? 5.0 : -7.0;
    CHECK(d[size_t(5 * i)] == dx);
    CHECK(d[size_t(5 * i + 1)] == dx);
    CHECK(d[size_t(5 * i + 2)] == dx);
    CHECK(d[size_t(5 * i + 3)] == 0.0);
    CHECK(d[size_t(5 * i + 4)] == dy);
  }
  // The adjoint gives the same Jacobian at the ties: <J v, w> = <v, J^T w> for w = e_k.
  auto w = std::vector<double>(10, 0.0);
  for (int k = 0; k < 10; ++k) {
    w.assign(10, 0.0);
    w[size_t(k)] = 1.0;
    auto ga = zeros<double>({2}), gb = zeros<double>({2});
    launch(fwd_features::ties, 2, A, B, out);
    launch_adjoint(fwd_features::ties, 2, {A, B, out}, {ga, gb, from_vector(w)});
    auto x = ga.to_vector<double>(), y = gb.to_vector<double>();
    INFO("output " << k);
    CHECK(d[size_t(k)] == doctest::Approx(x[0] * 2.0 + x[1] * 3.0 + y[0] * -7.0 + y[1] * 5.0));
  }
}

TEST_CASE("print() prints the tangents after the values") {
  auto X = from_vector(std::vector<double>{3.0}), DX = from_vector(std::vector<double>{0.5});
  std::string printed = test::capture_stdout([&] {
    launch_tangent(fwd_features::printing, 1, {X, zeros<double>({1})}, {DX, zeros<double>({1})});
  });
  CHECK(printed.find("9") != std::string::npos);
  CHECK(printed.find("tan 3") != std::string::npos);  // d(x^2) = 2 x dx = 3
}
