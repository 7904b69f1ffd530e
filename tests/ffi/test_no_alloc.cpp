// The handlers' hot path allocates nothing once the kernel is known, counted by the replaced
// operator new of this binary (alloc_counter.cpp).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "frame_builder.hpp"
#include "launch_plan.hpp"
#include "saxpy.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;

namespace {

/// Allocations on this thread while `f` runs.
template <class F>
long allocations_in(F&& f) {
  kjit::test::start_counting_allocations();
  f();
  return kjit::test::stop_counting_allocations();
}

/// Calls the cpu launch and adjoint handlers on `forward` and `adjoint` once (which prepares the
/// kernel and may allocate), then again: those calls succeed and allocate nothing.
void expect_handlers_allocate_nothing(FrameBuilder& forward, FrameBuilder& adjoint) {
  REQUIRE(kjit::test::call(&kjit_xla_launch_cpu, forward.frame()).ok);
  REQUIRE(kjit::test::call(&kjit_xla_adjoint_cpu, adjoint.frame()).ok);
  xla::Error* errors[2] = {};
  CHECK(allocations_in([&] { errors[0] = kjit_xla_launch_cpu(forward.frame()); }) == 0);
  CHECK(allocations_in([&] { errors[1] = kjit_xla_adjoint_cpu(adjoint.frame()); }) == 0);
  CHECK(errors[0] == nullptr);
  CHECK(errors[1] == nullptr);
}

}  // namespace

TEST_CASE("decoding a forward and an adjoint call allocates nothing once the kernel is known") {
  const int n = 64;
  std::vector<float> x(n, 1.f), y(n, 2.f), out(n), g(n, 1.f), dx(n), dy(n);
  FrameBuilder f;
  f.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).ret(xla::kF32, {n}, out.data());
  f.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 2.f);
  FrameBuilder a;
  a.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, out.data());
  a.arg(xla::kF32, {n}, g.data()).ret(xla::kF32, {n}, dx.data()).ret(xla::kF32, {n}, dy.data());
  a.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 2.f);
  auto plan = std::make_unique<ffi::detail::Plan>();
  // The first calls prepare the kernel (and may allocate); the next ones are the hot path.
  ffi::detail::plan_forward(f.frame(), *plan);
  ffi::detail::plan_adjoint(a.frame(), *plan);
  CHECK(allocations_in([&] { ffi::detail::plan_forward(f.frame(), *plan); }) == 0);
  CHECK(allocations_in([&] { ffi::detail::plan_adjoint(a.frame(), *plan); }) == 0);
  CHECK(plan->adjoint);
  CHECK(plan->fill_count == 2);  // dx and dy are zeroed before the launch

  // The whole cpu handlers too: decode, zero the gradients, dispatch on the pool.
  expect_handlers_allocate_nothing(f, a);
  CHECK(out[5] == 4.f);
  CHECK(dx[5] == 2.f);
}

TEST_CASE("a traced value and its gradient's partial sums allocate nothing after the first call") {
  const int n = 3000;  // three blocks of partial sums
  std::vector<float> x(n, 1.f), y(n, 2.f), out(n), g(n, 0.5f), dx(n), dy(n);
  float a = 2.f, da = 0;
  FrameBuilder f;
  f.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {}, &a);
  f.ret(xla::kF32, {n}, out.data());
  f.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  FrameBuilder b;
  b.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, out.data());
  b.arg(xla::kF32, {n}, g.data()).arg(xla::kF32, {}, &a);
  b.ret(xla::kF32, {n}, dx.data()).ret(xla::kF32, {n}, dy.data()).ret(xla::kF32, {}, &da);
  b.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  expect_handlers_allocate_nothing(f, b);
  CHECK(out[5] == 4.f);
  CHECK(da == 0.5f * n);
}

TEST_CASE("the allocation counter sees allocations (so that zero above means none)") {
  std::vector<int>* volatile sink = nullptr;  // escapes: the allocations cannot be elided
  CHECK(allocations_in([&] { sink = new std::vector<int>(100); }) == 2);
  delete sink;
  CHECK(allocations_in([] {}) == 0);
}
