// Tangent kernels through the cpu handlers (what kjit.jax's forward mode sends): found by
// name ("<kernel>.tangent"), launched with kjit_array_order (inputs, then outputs and their
// tangents), their adjoint (second order) through kjit_adjoint, and malformed orders.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "frame_builder.hpp"
#include "kjit/kjit.hpp"
#include "saxpy.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::call;

namespace ffi_tangent {
using namespace kjit::dsl;
KJIT_MODULE(ffi_tangent_kernels)

/// The largest x: forward mode refuses it (which thread wins a float atomic_max is not known
/// while threads race).
KJIT_KERNEL(peak, (Array<Float> x, Array<Float> out)) { atomic_max(out, 0, x[tid()]); }
}  // namespace ffi_tangent

namespace {

std::vector<double> wave(int n, double scale, double phase) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = scale * std::sin(0.37 * i + phase);
  return v;
}

/// demo::daxpy.tangent's parameters: x 0, y 1, a 2, out 3, then d_x 4, d_y 5, d_a 6, d_out 7.
/// Operands x, y, d_x, d_y, then a, d_a (traced); results out, d_out.
struct TangentCall {
  int n;
  std::vector<double> x, y, dx, dy, out, dout;
  double a = 1.25, da = -0.5;
  explicit TangentCall(int count)
      : n(count), x(wave(count, 1, 0)), y(wave(count, 2, 1)), dx(wave(count, 0.5, 2)), dy(wave(count, 1.5, 3)),
        out(size_t(count), -7.0), dout(size_t(count), -7.0) {}
  FrameBuilder frame(std::vector<int64_t> order = {0, 1, 4, 5, 3, 7}) {
    FrameBuilder b;
    b.arg(xla::kF64, {n}, x.data()).arg(xla::kF64, {n}, y.data()).arg(xla::kF64, {n}, dx.data());
    b.arg(xla::kF64, {n}, dy.data()).arg(xla::kF64, {}, &a).arg(xla::kF64, {}, &da);
    b.ret(xla::kF64, {n}, out.data()).ret(xla::kF64, {n}, dout.data());
    b.attr_string("kjit_kernel", "demo::daxpy.tangent").attr_array<int64_t>("kjit_traced", xla::kS64, {2, 6});
    b.attr_array<int64_t>("kjit_array_order", xla::kS64, std::move(order));
    return b;
  }
};

}  // namespace

TEST_CASE("the tangent kernel by name through kjit_launch: the outputs and J v in one launch") {
  for (int n : {1, 37, 1003}) {  // lane blocks and tails
    CAPTURE(n);
    TangentCall t(n);
    auto o = call(&kjit_xla_launch_cpu, t.frame().frame());
    REQUIRE_MESSAGE(o.ok, o.message);
    for (int i = 0; i < n; ++i) {
      CHECK(t.out[size_t(i)] == doctest::Approx(t.a * t.x[size_t(i)] + t.y[size_t(i)]).epsilon(1e-15));
      // d(a x + y) = da x + a dx + dy: the traced scalar's tangent is the same for every thread.
      CHECK(t.dout[size_t(i)] ==
            doctest::Approx(t.da * t.x[size_t(i)] + t.a * t.dx[size_t(i)] + t.dy[size_t(i)]).epsilon(1e-15));
    }
  }
}

TEST_CASE("the adjoint of the tangent kernel through kjit_adjoint: J^T w and its derivative (second order)") {
  const int n = 1003;
  TangentCall t(n);
  REQUIRE(call(&kjit_xla_launch_cpu, t.frame().frame()).ok);
  std::vector<double> w1 = wave(n, 1, 4), w2 = wave(n, 1, 5);  // cotangents of out and d_out
  std::vector<double> gx(size_t(n), 9), gy(size_t(n), 9), gdx(size_t(n), 9), gdy(size_t(n), 9);
  double ga = 9, gda = 9;
  FrameBuilder b;
  b.arg(xla::kF64, {n}, t.x.data()).arg(xla::kF64, {n}, t.y.data()).arg(xla::kF64, {n}, t.dx.data());
  b.arg(xla::kF64, {n}, t.dy.data()).arg(xla::kF64, {n}, t.out.data()).arg(xla::kF64, {n}, t.dout.data());
  b.arg(xla::kF64, {n}, w1.data()).arg(xla::kF64, {n}, w2.data());
  b.arg(xla::kF64, {}, &t.a).arg(xla::kF64, {}, &t.da);
  b.ret(xla::kF64, {n}, gx.data()).ret(xla::kF64, {n}, gy.data()).ret(xla::kF64, {n}, gdx.data());
  b.ret(xla::kF64, {n}, gdy.data()).ret(xla::kF64, {}, &ga).ret(xla::kF64, {}, &gda);
  b.attr_string("kjit_kernel", "demo::daxpy.tangent").attr_array<int64_t>("kjit_traced", xla::kS64, {2, 6});
  b.attr_array<int64_t>("kjit_array_order", xla::kS64, {0, 1, 4, 5, 3, 7});
  auto o = call(&kjit_xla_adjoint_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  // L = <w1, a x + y> + <w2, da x + a dx + dy>.
  double want_a = 0, want_da = 0;
  for (int i = 0; i < n; ++i) {
    const size_t k = size_t(i);
    CHECK(gx[k] == doctest::Approx(t.a * w1[k] + t.da * w2[k]).epsilon(1e-14));
    CHECK(gy[k] == w1[k]);
    CHECK(gdx[k] == doctest::Approx(t.a * w2[k]).epsilon(1e-14));
    CHECK(gdy[k] == w2[k]);
    want_a += t.x[k] * w1[k] + t.dx[k] * w2[k];
    want_da += t.x[k] * w2[k];
  }
  CHECK(ga == doctest::Approx(want_a).epsilon(1e-12));
  CHECK(gda == doctest::Approx(want_da).epsilon(1e-12));
}

TEST_CASE("kjit_array_order: malformed orders and unknown or refused tangent kernels are clear errors") {
  TangentCall t(8);
  auto message = [&](FrameBuilder b, xla::ErrorCode code = xla::kInvalidArgument) {
    auto o = call(&kjit_xla_launch_cpu, b.frame());
    CHECK(!o.ok);
    CHECK(o.code == code);
    return o.message;
  };
  const std::string pre = "kjit kernel 'demo::daxpy.tangent': attribute 'kjit_array_order' ";
  CHECK(message(t.frame({0, 1, 4, 5, 3})) ==
        pre + "lists 5 parameters, but the kernel has 6 array parameters (x, y, out, d_x, d_y, d_out)");
  CHECK(message(t.frame({0, 1, 4, 5, 3, 2})) == pre + "names parameter 2, which is not an array parameter");
  CHECK(message(t.frame({0, 1, 4, 5, 3, 99})) == pre + "names parameter 99, which is not an array parameter");
  CHECK(message(t.frame({0, 1, 4, 4, 3, 7})) == pre + "names parameter 'd_x' twice");
  // Without the order, the tangent kernel's own order makes out an input: the counts disagree.
  FrameBuilder plain;
  plain.arg(xla::kF64, {8}, t.x.data()).ret(xla::kF64, {8}, t.out.data());
  plain.attr_string("kjit_kernel", "demo::daxpy.tangent");
  CHECK(message(plain).find("the kernel has 6 array parameters") != std::string::npos);

  FrameBuilder unknown;
  unknown.arg(xla::kF64, {8}, t.x.data()).ret(xla::kF64, {8}, t.out.data());
  unknown.attr_string("kjit_kernel", "demo::nothing.tangent");
  CHECK(message(unknown, xla::kNotFound).find("no kernel named 'demo::nothing.tangent'") != std::string::npos);

  std::vector<float> xs(8, 1.0f), peak(1, 0.0f);
  FrameBuilder refused;
  refused.arg(xla::kF32, {8}, xs.data()).ret(xla::kF32, {1}, peak.data());
  refused.attr_string("kjit_kernel", "ffi_tangent::peak.tangent");
  const std::string m = message(refused);
  CHECK(m.find("ffi_tangent::peak") != std::string::npos);
  CHECK(m.find("atomic_max") != std::string::npos);
}
