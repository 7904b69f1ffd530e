// Malformed call frames: each returns INVALID_ARGUMENT (or NOT_FOUND for an unknown kernel)
// with a message naming the kernel, the argument and the mismatch — and never crashes.
#include <doctest/doctest.h>

#include "frame_builder.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::Outcome;
using kjit::test::call;

namespace {

std::vector<float> X(16, 1.f), Y(16, 2.f), OUT(16, 0.f);
std::vector<int32_t> I32(16, 1);

/// A saxpy frame with the given pieces replaced.
FrameBuilder saxpy(xla::DataType xt = xla::kF32, std::vector<int64_t> xd = {16}) {
  FrameBuilder b;
  b.arg(xt, xd, X.data()).arg(xla::kF32, {16}, Y.data()).ret(xla::kF32, {16}, OUT.data());
  b.attr_string("kjit_kernel", "demo::saxpy");
  return b;
}

void expect(Outcome o, xla::ErrorCode code, const std::string& text) {
  CHECK_FALSE(o.ok);
  CHECK(o.code == code);
  CHECK_MESSAGE(o.message.find(text) != std::string::npos, "message: ", o.message, "\nexpected: ", text);
}

}  // namespace

TEST_CASE("wrong dtype") {
  FrameBuilder b = saxpy(xla::kS32);
  b.attr_scalar("a", xla::kF32, 1.f);
  expect(call(&kjit_xla_launch_cpu, b.frame()), xla::kInvalidArgument,
         "kjit kernel 'demo::saxpy': Invalid data type for array argument 'x', expected float32, got int32");
}

TEST_CASE("wrong rank") {
  FrameBuilder b = saxpy(xla::kF32, {4, 4});
  b.attr_scalar("a", xla::kF32, 1.f);
  expect(call(&kjit_xla_launch_cpu, b.frame()), xla::kInvalidArgument,
         "Invalid dimensionality for array argument 'x', expected 1 dimensions, got 2");
  FrameBuilder c = saxpy(xla::kF32, {});
  c.attr_scalar("a", xla::kF32, 1.f);
  expect(call(&kjit_xla_launch_cpu, c.frame()), xla::kInvalidArgument,
         "Invalid dimensionality for array argument 'x', expected 1 dimensions, got 0");
}

TEST_CASE("wrong inner dims of a vector element type") {
  std::vector<float> x(4 * 4), rest(4), f(12);
  FrameBuilder b;
  b.arg(xla::kF32, {4, 4}, x.data()).arg(xla::kS32, {8}, I32.data()).arg(xla::kF32, {4}, rest.data());
  b.ret(xla::kF32, {4, 3}, f.data());
  b.attr_string("kjit_kernel", "demo::springs").attr_scalar("k", xla::kF32, 1.f);
  expect(call(&kjit_xla_launch_cpu, b.frame()), xla::kInvalidArgument,
         "Invalid inner dimensions for array argument 'x', expected (3,) for vec3f, got (4,)");
}

TEST_CASE("wrong argument count") {
  FrameBuilder b;
  b.arg(xla::kF32, {16}, X.data()).ret(xla::kF32, {16}, OUT.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.f);
  expect(call(&kjit_xla_launch_cpu, b.frame()), xla::kInvalidArgument,
         "the kernel has 3 array parameters (x, y, out); the call passes 1 input buffers and 1 results");
  FrameBuilder c;
  c.arg(xla::kF32, {16}, X.data()).arg(xla::kF32, {16}, Y.data());
  c.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.f);
  expect(call(&kjit_xla_launch_cpu, c.frame()), xla::kInvalidArgument, "the call has no result");
  FrameBuilder d;  // adjoint with too few buffers
  d.arg(xla::kF32, {16}, X.data()).ret(xla::kF32, {16}, OUT.data());
  d.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.f);
  expect(call(&kjit_xla_adjoint_cpu, d.frame()), xla::kInvalidArgument, "kjit adjoint of kernel 'demo::saxpy'");
}

TEST_CASE("missing or mistyped attributes") {
  FrameBuilder b = saxpy();
  expect(call(&kjit_xla_launch_cpu, b.frame()), xla::kInvalidArgument, "Missing static argument 'a' (float32)");
  FrameBuilder c = saxpy();
  c.attr_scalar("a", xla::kF64, 1.0);
  expect(call(&kjit_xla_launch_cpu, c.frame()), xla::kInvalidArgument,
         "Invalid data type for static argument 'a', expected float32, got float64");
  FrameBuilder d = saxpy();
  d.attr_string("a", "1.0");
  expect(call(&kjit_xla_launch_cpu, d.frame()), xla::kInvalidArgument,
         "static argument 'a' must be a scalar attribute of float32");
  FrameBuilder e;
  e.arg(xla::kF32, {16}, X.data()).arg(xla::kF32, {16}, Y.data()).ret(xla::kF32, {16}, OUT.data());
  expect(call(&kjit_xla_launch_cpu, e.frame()), xla::kInvalidArgument, "no 'kjit_kernel' attribute");
  FrameBuilder f;
  f.arg(xla::kF32, {16}, X.data()).arg(xla::kF32, {16}, Y.data()).ret(xla::kF32, {16}, OUT.data());
  f.attr_scalar("kjit_kernel", xla::kS64, int64_t(3));
  expect(call(&kjit_xla_launch_cpu, f.frame()), xla::kInvalidArgument, "attribute 'kjit_kernel' must be a string");
  FrameBuilder g = saxpy();
  g.attr_scalar("a", xla::kF32, 1.f).attr_string("kjit_launch_dims", "16");
  expect(call(&kjit_xla_launch_cpu, g.frame()), xla::kInvalidArgument,
         "attribute 'kjit_launch_dims' must be an array of integers");
  FrameBuilder h = saxpy();
  h.attr_scalar("a", xla::kF32, 1.f).attr_array<int64_t>("kjit_in_out", xla::kS64, {2});
  expect(call(&kjit_xla_launch_cpu, h.frame()), xla::kInvalidArgument,
         "attribute 'kjit_in_out' names parameter 2, which is not an array parameter");
}

TEST_CASE("unknown kernel name") {
  FrameBuilder b;
  b.arg(xla::kF32, {16}, X.data()).ret(xla::kF32, {16}, OUT.data());
  b.attr_string("kjit_kernel", "demo::nope");
  expect(call(&kjit_xla_launch_cpu, b.frame()), xla::kNotFound, "no kernel named 'demo::nope'");
  expect(call(&kjit_xla_adjoint_cpu, b.frame()), xla::kNotFound, "no kernel named 'demo::nope'");
}

TEST_CASE("zero-sized arrays in a non-empty launch, and missing data") {
  FrameBuilder b;
  b.arg(xla::kF32, {16}, X.data()).arg(xla::kF32, {0}, nullptr).ret(xla::kF32, {16}, OUT.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.f);
  expect(call(&kjit_xla_launch_cpu, b.frame()), xla::kInvalidArgument,
         "array argument 'y' is empty (shape (0,)) but the launch has 16 threads");
  FrameBuilder c;
  c.arg(xla::kF32, {16}, X.data()).arg(xla::kF32, {16}, nullptr).ret(xla::kF32, {16}, OUT.data());
  c.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.f);
  expect(call(&kjit_xla_launch_cpu, c.frame()), xla::kInvalidArgument, "array argument 'y' has no data but shape (16,)");
}

TEST_CASE("structurally malformed frames") {
  FrameBuilder b = saxpy();
  b.attr_scalar("a", xla::kF32, 1.f);
  xla::CallFrame* f = b.frame();
  xla::ArgType bad = xla::ArgType(7);
  f->args.types[1] = bad;
  expect(call(&kjit_xla_launch_cpu, f), xla::kInvalidArgument, "argument 1 is not a buffer");

  FrameBuilder c = saxpy(xla::kF32, {-3});
  c.attr_scalar("a", xla::kF32, 1.f);
  expect(call(&kjit_xla_launch_cpu, c.frame()), xla::kInvalidArgument, "negative extent -3");

  FrameBuilder d = saxpy();
  d.attr_scalar("a", xla::kF32, 1.f);
  xla::CallFrame* g = d.frame();
  g->args.args = nullptr;
  expect(call(&kjit_xla_launch_cpu, g), xla::kInvalidArgument, "argument table is malformed");

  FrameBuilder e = saxpy();
  e.attr_scalar("a", xla::kF32, 1.f);
  xla::CallFrame* h = e.frame();
  h->struct_size = 16;
  expect(call(&kjit_xla_launch_cpu, h), xla::kFailedPrecondition, "smaller");

  CHECK(kjit_xla_launch_cpu(nullptr) == nullptr);  // nothing to report through, no crash
}

TEST_CASE("adjoint preconditions: overwritten in/out arrays and read-back outputs are rejected") {
  // saxpy's `out` is overwritten; as an in/out array its in-place gradient is undefined.
  std::vector<float> g(16, 1.f), dx(16), dy(16), dout(16);
  FrameBuilder b;
  b.arg(xla::kF32, {16}, X.data()).arg(xla::kF32, {16}, Y.data()).arg(xla::kF32, {16}, OUT.data());
  b.arg(xla::kF32, {16}, g.data());
  b.ret(xla::kF32, {16}, dx.data()).ret(xla::kF32, {16}, dy.data()).ret(xla::kF32, {16}, dout.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 1.f);
  b.attr_array<int64_t>("kjit_in_out", xla::kS64, {3});
  expect(call(&kjit_xla_adjoint_cpu, b.frame()), xla::kInvalidArgument,
         "in/out argument 'out' is overwritten by the kernel");
}
