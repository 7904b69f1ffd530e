// vmap batches through the launch and adjoint handlers for every element kind (scalar, vector,
// matrix, quaternion, transform), with batched, size-1 and missing batch dims: every batch
// item's values are checked, and buffers end at a guard page so a wrong stride faults.
#include <doctest/doctest.h>

#include "frame_builder.hpp"
#include "guarded_buffer.hpp"
#include "robust_kernels.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::call;

namespace {

/// `n` floats that end exactly at an inaccessible page: reading or writing past them faults.
class Guarded {
 public:
  explicit Guarded(size_t n) : n_(n), buf_(n * sizeof(float)) {}
  float* data() { return buf_.as<float>(); }
  float& operator[](size_t i) { return data()[i]; }
  size_t size() const { return n_; }

 private:
  size_t n_;
  kjit::test::GuardedBuffer buf_;
};

struct Kind {
  const char* kernel;
  std::vector<int64_t> inner;
  int lanes;
};

const Kind kKinds[] = {{"tests::robust::axpy_f", {}, 1},
                       {"tests::robust::axpy_v", {3}, 3},
                       {"tests::robust::axpy_m", {3, 3}, 9},
                       {"tests::robust::axpy_q", {4}, 4},
                       {"tests::robust::axpy_t", {7}, 7}};

std::vector<int64_t> dims(std::vector<int64_t> lead, const Kind& k) {
  lead.insert(lead.end(), k.inner.begin(), k.inner.end());
  return lead;
}

}  // namespace

TEST_CASE("vmap of every element kind: each batch item reads and writes its own elements") {
  const int64_t B = 3, n = 5;
  const float a = 1.5f;
  for (const Kind& k : kKinds) {
    // y: batched (B), size-1 (broadcast) or without a batch dim; x always batched.
    for (int y_mode = 0; y_mode < 3; ++y_mode) {
      CAPTURE(k.kernel);
      CAPTURE(y_mode);
      const size_t per = size_t(n * k.lanes);
      Guarded x(size_t(B) * per), y(y_mode == 0 ? size_t(B) * per : per), out(size_t(B) * per);
      for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);
      for (size_t i = 0; i < y.size(); ++i) y[i] = 1000.f + float(i);
      FrameBuilder f;
      f.arg(xla::kF32, dims({B, n}, k), x.data());
      f.arg(xla::kF32, y_mode == 0 ? dims({B, n}, k) : y_mode == 1 ? dims({1, n}, k) : dims({n}, k), y.data());
      f.ret(xla::kF32, dims({B, n}, k), out.data());
      f.attr_string("kjit_kernel", k.kernel).attr_scalar("a", xla::kF32, a);
      auto o = call(&kjit_xla_launch_cpu, f.frame());
      REQUIRE_MESSAGE(o.ok, o.message);
      for (size_t i = 0; i < out.size(); ++i) {
        const float yv = y_mode == 0 ? y[i] : y[i % per];
        REQUIRE(out[i] == doctest::Approx(a * x[i] + yv));
      }
    }
  }
}

TEST_CASE("vmap of an adjoint of vectors: every batch item's gradient (jax.jacrev's call)") {
  // jacrev batches the cotangent; x and y are unbatched, the gradients batched.
  const int64_t B = 4, n = 6;
  const float a = -2.f;
  Guarded x(size_t(n * 3)), y(size_t(n * 3)), out(size_t(n * 3)), g(size_t(B * n * 3));
  Guarded dx(size_t(B * n * 3)), dy(size_t(B * n * 3));
  for (size_t i = 0; i < g.size(); ++i) g[i] = float(i) * 0.5f;
  for (size_t i = 0; i < dx.size(); ++i) dx[i] = dy[i] = 77.f;
  FrameBuilder f;
  f.arg(xla::kF32, {n, 3}, x.data()).arg(xla::kF32, {n, 3}, y.data()).arg(xla::kF32, {n, 3}, out.data());
  f.arg(xla::kF32, {B, n, 3}, g.data());
  f.ret(xla::kF32, {B, n, 3}, dx.data()).ret(xla::kF32, {B, n, 3}, dy.data());
  f.attr_string("kjit_kernel", "tests::robust::axpy_v").attr_scalar("a", xla::kF32, a);
  auto o = call(&kjit_xla_adjoint_cpu, f.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  for (size_t i = 0; i < g.size(); ++i) {
    REQUIRE(dx[i] == doctest::Approx(a * g[i]));
    REQUIRE(dy[i] == doctest::Approx(g[i]));
  }
}
