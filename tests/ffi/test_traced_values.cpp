// Traced values through the cpu handlers: value parameters passed as buffers (kjit_traced)
// instead of attributes — forward, their gradients from the adjoint handler (the sum over the
// launch's threads), vmap batches of them, mixed with static values, and malformed frames.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "frame_builder.hpp"
#include "kjit/kjit.hpp"
#include "saxpy.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::call;

namespace ffi_values {
using namespace kjit::dsl;
KJIT_MODULE(ffi_traced_values)

/// A vector and a scalar value, one static integer: out = (v + d) * s^n.
KJIT_KERNEL(shift_scale, (Array<Vec3d> v, Vec3d d, Double s, Int n, Array<Vec3d> out)) {
  Int i = tid();
  Var<Vec3d> w = v[i] + d;
  For(0, n, [&](Int) { w = w * s; });
  out[i] = w;
}
}  // namespace ffi_values

namespace {

std::vector<float> ramp(int n, float scale, float offset = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = offset + scale * float(i % 13);
  return v;
}

/// saxpy with `a` traced: operands x, y, then a.
FrameBuilder traced_saxpy(std::vector<float>& x, std::vector<float>& y, float* a, std::vector<float>& out) {
  const int64_t n = int64_t(x.size());
  FrameBuilder b;
  b.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {}, a);
  b.ret(xla::kF32, {n}, out.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  return b;
}

/// Its adjoint: x, y, out, the cotangent, then a; gradients of x, y, then a.
FrameBuilder traced_saxpy_adjoint(std::vector<float>& x, std::vector<float>& y, std::vector<float>& out,
                                  std::vector<float>& cot, float* a, std::vector<float>& gx, std::vector<float>& gy,
                                  float* ga) {
  const int64_t n = int64_t(x.size());
  FrameBuilder b;
  b.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, out.data());
  b.arg(xla::kF32, {n}, cot.data()).arg(xla::kF32, {}, a);
  b.ret(xla::kF32, {n}, gx.data()).ret(xla::kF32, {n}, gy.data()).ret(xla::kF32, {}, ga);
  b.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  return b;
}

}  // namespace

TEST_CASE("a traced value is read from its buffer; its gradient sums over the threads") {
  for (int n : {1, 37, 1003, 100000}) {
    CAPTURE(n);
    std::vector<float> x = ramp(n, 0.25f), y = ramp(n, -0.5f, 1.0f), out(size_t(n), -1.0f);
    float a = 1.5f;
    auto o = call(&kjit_xla_launch_cpu, traced_saxpy(x, y, &a, out).frame());
    REQUIRE_MESSAGE(o.ok, o.message);
    for (int i = 0; i < n; i += 7) CHECK(out[size_t(i)] == a * x[size_t(i)] + y[size_t(i)]);

    std::vector<float> cot = ramp(n, 0.5f, -3.0f), gx(size_t(n), 99.0f), gy(size_t(n), 99.0f);
    float ga = 12345.0f;  // XLA leaves results undefined: the handler zeroes it
    o = call(&kjit_xla_adjoint_cpu, traced_saxpy_adjoint(x, y, out, cot, &a, gx, gy, &ga).frame());
    REQUIRE_MESSAGE(o.ok, o.message);
    double want = 0;  // every term a multiple of 1/8 under 2^13: the float sum is exact
    for (int i = 0; i < n; ++i) want += double(x[size_t(i)]) * double(cot[size_t(i)]);
    CHECK(double(ga) == want);
    for (int i = 0; i < n; i += 7) CHECK(gx[size_t(i)] == a * cot[size_t(i)]);
  }
}

TEST_CASE("vmap: each batch item reads its own traced value and gets its own gradient") {
  const int B = 3, n = 37;
  std::vector<float> x = ramp(B * n, 0.25f), y = ramp(n, 1.0f), out(size_t(B * n));
  float a[B] = {0.5f, -2.0f, 4.0f};
  FrameBuilder f;
  f.arg(xla::kF32, {B, n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {B}, a);
  f.ret(xla::kF32, {B, n}, out.data());
  f.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  auto o = call(&kjit_xla_launch_cpu, f.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < n; ++i) CHECK(out[size_t(b * n + i)] == a[b] * x[size_t(b * n + i)] + y[size_t(i)]);

  std::vector<float> cot = ramp(B * n, 0.5f, -1.0f), gx(size_t(B * n)), gy(size_t(B * n));
  float ga[B] = {7, 7, 7};
  FrameBuilder g;
  g.arg(xla::kF32, {B, n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {B, n}, out.data());
  g.arg(xla::kF32, {B, n}, cot.data()).arg(xla::kF32, {B}, a);
  g.ret(xla::kF32, {B, n}, gx.data()).ret(xla::kF32, {B, n}, gy.data()).ret(xla::kF32, {B}, ga);
  g.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  o = call(&kjit_xla_adjoint_cpu, g.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  for (int b = 0; b < B; ++b) {
    double want = 0;
    for (int i = 0; i < n; ++i) want += double(x[size_t(b * n + i)]) * double(cot[size_t(b * n + i)]);
    CHECK(double(ga[b]) == want);
  }

  // A size-1 batch dim broadcasts: one value for every item.
  float one = 3.0f;
  FrameBuilder h;
  h.arg(xla::kF32, {B, n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {1}, &one);
  h.ret(xla::kF32, {B, n}, out.data());
  h.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  o = call(&kjit_xla_launch_cpu, h.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  CHECK(out[size_t(2 * n + 5)] == 3.0f * x[size_t(2 * n + 5)] + y[5]);
}

TEST_CASE("mixed: a traced vector and a traced scalar beside a static integer, against launch_adjoint") {
  const int n = 1003;
  std::vector<vec3d> v(static_cast<size_t>(n)), w(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = vec3d{{0.01 * i, -0.5, 1.0}}, w[size_t(i)] = vec3d{{1.0, 0.25 * (i % 4), -1.0}};
  vec3d d{{0.5, 0.25, -0.125}};
  double s = 0.9;
  const int32_t steps = 3;
  std::vector<vec3d> out(static_cast<size_t>(n)), gv(static_cast<size_t>(n));
  vec3d gd{{5, 5, 5}};
  double gs = 5;
  FrameBuilder b;
  b.arg(xla::kF64, {n, 3}, v.data()).arg(xla::kF64, {n, 3}, out.data()).arg(xla::kF64, {n, 3}, w.data());
  b.arg(xla::kF64, {3}, &d).arg(xla::kF64, {}, &s);
  b.ret(xla::kF64, {n, 3}, gv.data()).ret(xla::kF64, {3}, &gd).ret(xla::kF64, {}, &gs);
  b.attr_string("kjit_kernel", "ffi_values::shift_scale").attr_array<int64_t>("kjit_traced", xla::kS64, {1, 2});
  b.attr_scalar("n", xla::kS32, steps);
  auto o = call(&kjit_xla_adjoint_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);

  vec3d rd{};
  double rs = 0;
  NdArray rgv = zeros<vec3d>({n});
  launch_adjoint(ffi_values::shift_scale, n, {from_vector(v), d, s, steps, zeros<vec3d>({n})},
                 {rgv, &rd, &rs, {}, from_vector(w)});
  for (int c = 0; c < 3; ++c) CHECK(gd[c] == rd[c]);  // the same entry point and partials
  CHECK(gs == rs);
  std::vector<vec3d> rv = rgv.to_vector<vec3d>();
  CHECK(std::memcmp(gv.data(), rv.data(), rv.size() * sizeof(vec3d)) == 0);
  // And the analytic value: d out / d s = 3 s^2 (v + d).
  double want = 0;
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) want += w[size_t(i)][c] * 3 * s * s * (v[size_t(i)][c] + d[c]);
  CHECK(gs == doctest::Approx(want).epsilon(1e-12));
}

TEST_CASE("malformed traced values are refused with INVALID_ARGUMENT naming the argument") {
  const int n = 8;
  std::vector<float> x = ramp(n, 1), y = ramp(n, 1), out(static_cast<size_t>(n));
  double a64 = 1;
  float a2[2] = {1, 2}, a = 1;
  auto message = [&](FrameBuilder b) {
    auto o = call(&kjit_xla_launch_cpu, b.frame());
    CHECK(!o.ok);
    CHECK(o.code == xla::kInvalidArgument);
    return o.message;
  };
  auto frame = [&](xla::DataType t, std::vector<int64_t> dims, void* data, std::vector<int64_t> traced) {
    FrameBuilder b;
    b.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(t, std::move(dims), data);
    b.ret(xla::kF32, {n}, out.data());
    b.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, std::move(traced));
    return b;
  };
  CHECK(message(frame(xla::kF64, {}, &a64, {2})) ==
        "kjit kernel 'demo::saxpy': Invalid data type for traced argument 'a', expected float32, got float64");
  CHECK(message(frame(xla::kF32, {2}, a2, {2})) ==
        "kjit kernel 'demo::saxpy': Invalid dimensionality for traced argument 'a', expected 0 dimensions, got 1");
  CHECK(message(frame(xla::kF32, {}, nullptr, {2})) ==
        "kjit kernel 'demo::saxpy': traced argument 'a' has no data but shape ()");
  CHECK(message(frame(xla::kF32, {}, &a, {0})) ==
        "kjit kernel 'demo::saxpy': attribute 'kjit_traced' names parameter 0, which is not a value parameter");
  CHECK(message(frame(xla::kF32, {}, &a, {2, 2})) ==
        "kjit kernel 'demo::saxpy': attribute 'kjit_traced' must list parameters in increasing order");
  // Traced, but the operand is missing: the array count no longer adds up.
  FrameBuilder missing;
  missing.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).ret(xla::kF32, {n}, out.data());
  missing.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  CHECK(message(missing).find("the call passes 1 input buffers (besides 1 traced values) and 1 results") !=
        std::string::npos);
  // Not traced and no attribute: the static's message stays.
  FrameBuilder untraced;
  untraced.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).ret(xla::kF32, {n}, out.data());
  untraced.attr_string("kjit_kernel", "demo::saxpy");
  CHECK(message(untraced).find("Missing static argument 'a'") != std::string::npos);

  // The adjoint wants one more result: the traced value's gradient, of its shape.
  std::vector<float> cot = ramp(n, 1), gx(static_cast<size_t>(n)), gy(static_cast<size_t>(n));
  FrameBuilder short_adj;
  short_adj.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, out.data());
  short_adj.arg(xla::kF32, {n}, cot.data()).arg(xla::kF32, {}, &a);
  short_adj.ret(xla::kF32, {n}, gx.data()).ret(xla::kF32, {n}, gy.data());
  short_adj.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  auto o = call(&kjit_xla_adjoint_cpu, short_adj.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK(o.message ==
        "kjit adjoint of kernel 'demo::saxpy': expected 3 results (one gradient per differentiable input array, then "
        "per differentiable traced value: x, y, a), got 2");
  double ga64 = 0;
  FrameBuilder wrong_grad;
  wrong_grad.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, out.data());
  wrong_grad.arg(xla::kF32, {n}, cot.data()).arg(xla::kF32, {}, &a);
  wrong_grad.ret(xla::kF32, {n}, gx.data()).ret(xla::kF32, {n}, gy.data()).ret(xla::kF64, {}, &ga64);
  wrong_grad.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  o = call(&kjit_xla_adjoint_cpu, wrong_grad.frame());
  CHECK(o.code == xla::kInvalidArgument);
  CHECK(o.message == "kjit adjoint of kernel 'demo::saxpy': Invalid data type for gradient 'a', expected float32, got float64");
}
