// Launches longer than the arrays a kernel indexes by the thread index without a guard are
// INVALID_ARGUMENT naming the argument (launch_dims too large, output_dims too small); guarded
// kernels may launch past their arrays, though not with an empty one.
#include <doctest/doctest.h>

#include "frame_builder.hpp"
#include "robust_kernels.hpp"
#include "saxpy.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::Outcome;
using kjit::test::call;

namespace {

void expect_invalid(const Outcome& o, const std::string& text) {
  CHECK_FALSE(o.ok);
  CHECK(o.code == xla::kInvalidArgument);
  CHECK_MESSAGE(o.message.find(text) != std::string::npos, "message: ", o.message, "\nexpected: ", text);
}

}  // namespace

TEST_CASE("launch_dims beyond an unguarded input's extent are refused, naming the argument") {
  std::vector<float> x(10, 1.f), y(20, 2.f), out(20, -1.f);
  FrameBuilder b;
  b.arg(xla::kF32, {10}, x.data()).arg(xla::kF32, {20}, y.data()).ret(xla::kF32, {20}, out.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.f);
  b.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {20});
  expect_invalid(call(&kjit_xla_launch_cpu, b.frame()),
                 "kjit kernel 'demo::saxpy': array argument 'x' has extent 10 in dimension 0, but the launch (20,) "
                 "(launch_dims) needs at least 20: the kernel indexes 'x' at tid() (saxpy.hpp:");
  CHECK(out[0] == -1.f);
}

TEST_CASE("output_dims smaller than the launch are refused, naming the output") {
  std::vector<float> x(10, 1.f), y(10, 2.f), out(4, -1.f);
  FrameBuilder b;
  b.arg(xla::kF32, {10}, x.data()).arg(xla::kF32, {10}, y.data()).ret(xla::kF32, {4}, out.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.f);
  expect_invalid(call(&kjit_xla_launch_cpu, b.frame()),
                 "output 'out' has extent 4 in dimension 0, but the launch (10,) needs at least 10");
  expect_invalid(call(&kjit_xla_launch_cpu, b.frame()), "output_dims must not be smaller than the launch");
}

TEST_CASE("the adjoint checks cotangents against their primals") {
  std::vector<float> x(8, 1.f), y(8, 2.f), out(8), g(3, 1.f), dx(8), dy(8);
  FrameBuilder b;
  b.arg(xla::kF32, {8}, x.data()).arg(xla::kF32, {8}, y.data()).arg(xla::kF32, {8}, out.data());
  b.arg(xla::kF32, {3}, g.data());  // a cotangent shorter than the launch
  b.ret(xla::kF32, {8}, dx.data()).ret(xla::kF32, {8}, dy.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.f);
  expect_invalid(call(&kjit_xla_adjoint_cpu, b.frame()),
                 "kjit adjoint of kernel 'demo::saxpy': cotangent 'out' has shape (3,) but 'out' has (8,)");
}

TEST_CASE("a guarded kernel may launch past its array; the rest of the launch is its own business") {
  std::vector<float> x(5, 3.f), out(12, -1.f);
  FrameBuilder b;
  b.arg(xla::kF32, {5}, x.data()).ret(xla::kF32, {12}, out.data());
  b.attr_string("kjit_kernel", "tests::robust::guarded_double");
  b.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {12});
  auto o = call(&kjit_xla_launch_cpu, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  for (int i = 0; i < 12; ++i) CHECK(out[size_t(i)] == (i < 5 ? 6.f : 0.f));
  // An empty x is still refused: the kernel reads its elements (under a guard kjit does not
  // interpret), and a zero-size buffer may have no memory at all.
  FrameBuilder c;
  c.arg(xla::kF32, {0}, nullptr).ret(xla::kF32, {12}, out.data());
  c.attr_string("kjit_kernel", "tests::robust::guarded_double");
  c.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {12});
  expect_invalid(call(&kjit_xla_launch_cpu, c.frame()), "array argument 'x' is empty (shape (0,)) but the launch has 12 threads");
}

TEST_CASE("a gradient or cotangent whose shape differs from its primal's is refused (the fuzzer's find)") {
  // springs' adjoint indexes the gradient of x by pair indices (no extent fact): an empty
  // gradient of a non-empty x was written through (SIGSEGV past a guard page).
  std::vector<float> x(3, 1.f), rest(1, 1.f), f(3), g(3, 1.f), dx(3), drest(1);
  std::vector<int32_t> pairs(2, 0);
  FrameBuilder b;
  b.arg(xla::kF32, {1, 3}, x.data()).arg(xla::kS32, {2}, pairs.data()).arg(xla::kF32, {1}, rest.data());
  b.arg(xla::kF32, {1, 3}, f.data()).arg(xla::kF32, {1, 3}, g.data());
  b.ret(xla::kF32, {0, 3}, dx.data()).ret(xla::kF32, {1}, drest.data());
  b.attr_string("kjit_kernel", "demo::springs").attr_scalar("k", xla::kF32, 1.f);
  expect_invalid(call(&kjit_xla_adjoint_cpu, b.frame()),
                 "gradient 'x' has shape (0, 3) but 'x' has (1, 3): the adjoint indexes both alike");
  FrameBuilder c;
  c.arg(xla::kF32, {1, 3}, x.data()).arg(xla::kS32, {2}, pairs.data()).arg(xla::kF32, {1}, rest.data());
  c.arg(xla::kF32, {1, 3}, f.data()).arg(xla::kF32, {0, 3}, g.data());
  c.ret(xla::kF32, {1, 3}, dx.data()).ret(xla::kF32, {1}, drest.data());
  c.attr_string("kjit_kernel", "demo::springs").attr_scalar("k", xla::kF32, 1.f);
  expect_invalid(call(&kjit_xla_adjoint_cpu, c.frame()), "cotangent 'f' has shape (0, 3) but 'f' has (1, 3)");
}
