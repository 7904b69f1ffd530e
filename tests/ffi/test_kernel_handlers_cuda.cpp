// The kernel handlers on the CUDA platform (kjit_xla_launch_cuda, kjit_xla_adjoint_cuda) with
// hand-built frames on the recording fake driver, which performs copies and memsets but runs no
// kernel: XLA's stream and device ordinal, the packed parameter bytes, block_dim, the adjoint
// inputs zeroed (or seeded) on the stream before the launch, vmap batches, and an FFI api from
// an XLA older than DeviceOrdinal_Get; and the mesh BVH handler's copies to the host and back.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>

#include "callable_graphs_fixture.hpp"
#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/runtime/mesh.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;
using kjit::fake_cuda::CopyRecord;
using kjit::fake_cuda::LaunchOrigin;
using kjit::fake_cuda::LaunchRecord;
using kjit::test::FrameBuilder;
using kjit::test::Outcome;
using kjit::test::graphs::array_param;
using kjit::test::graphs::float_param;
using kjit::test::graphs::pointer_param;
using kjit::test::graphs::value_param;
using kjit::test::graphs::Records;

namespace {

/// One XLA executor thread's view on fake device `ordinal`: a stream of its own, which the
/// fake api's Stream_Get reports, and the ordinal DeviceOrdinal_Get reports.
struct OnDevice {
  Device device;
  Stream stream;
  explicit OnDevice(int ordinal) : device(Device::cuda(ordinal)), stream(Stream::create(device)) {
    kjit::test::set_execution_context(stream.handle(), ordinal);
  }
  ~OnDevice() { kjit::test::set_execution_context(nullptr, 0); }
  uintptr_t stream_id() const { return reinterpret_cast<uintptr_t>(stream.handle()); }
};

std::vector<float> ramp(int n, float scale, float offset = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = offset + scale * float(i % 89);
  return v;
}

NdArray on(const Device& d, const std::vector<float>& v) { return NdArray::from_vector(v, {int64_t(v.size())}, d); }
NdArray filled(const Device& d, int n, float value) { return on(d, std::vector<float>(size_t(n), value)); }

/// The forward and adjoint entry point names of `k`, as the driver sees its functions.
std::vector<std::string> entries(const KernelDef& k) {
  codegen::CodegenOptions o;
  o.enable_adjoint = true;
  return codegen::entry_points({&k.ir()}, o);
}

int module_block_dim(const KernelDef& k) { return Registry::get().module(k.module()).options().block_dim; }

kj::launch_bounds_t bounds_param(const LaunchRecord& l) {
  kj::launch_bounds_t b;
  REQUIRE(l.params.at(0).size() == sizeof b);
  std::memcpy(&b, l.params[0].data(), sizeof b);
  return b;
}

kj::array_t<void> array_desc(const LaunchRecord& l, size_t i) {
  kj::array_t<void> a;
  REQUIRE(l.params.at(i).size() == sizeof a);
  std::memcpy(&a, l.params[i].data(), sizeof a);
  return a;
}

/// Checks that packed parameter `i` describes a 1-D float array of `n` elements at `data`.
void check_float_array(const LaunchRecord& l, size_t i, const void* data, int n) {
  CAPTURE(i);
  kj::array_t<void> a = array_desc(l, i);
  CHECK(a.data == data);
  CHECK(a.ndim == 1);
  CHECK(a.shape[0] == n);
  CHECK(a.strides[0] == int64_t(sizeof(float)));
}

FrameBuilder saxpy_frame(const NdArray& x, const NdArray& y, const NdArray& out, float a) {
  FrameBuilder b;
  b.arg(xla::kF32, {x.shape(0)}, x.data()).arg(xla::kF32, {y.shape(0)}, y.data());
  b.ret(xla::kF32, {out.shape(0)}, out.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, a);
  return b;
}

/// The saxpy adjoint frame: x, y, out, the cotangent of out in; dx, dy out.
FrameBuilder saxpy_adjoint_frame(const NdArray& x, const NdArray& y, const NdArray& out, const NdArray& cot,
                                 const NdArray& dx, const NdArray& dy, float a) {
  const int64_t n = x.shape(0);
  FrameBuilder b;
  b.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, out.data());
  b.arg(xla::kF32, {n}, cot.data()).ret(xla::kF32, {n}, dx.data()).ret(xla::kF32, {n}, dy.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, a);
  return b;
}

bool all_equal(const NdArray& a, float v) {
  for (float f : a.to_vector<float>())
    if (f != v) return false;
  return true;
}

void check_memset(const CopyRecord& c, const OnDevice& d, const NdArray& dst) {
  CHECK(c.memset);
  CHECK(c.dst == reinterpret_cast<uintptr_t>(dst.data()));
  CHECK(c.bytes == size_t(dst.size()) * sizeof(float));
  CHECK(c.stream == d.stream_id());
  CHECK(c.device == d.device.ordinal());
  CHECK(c.origin == LaunchOrigin::Direct);
}

}  // namespace

TEST_CASE("CUDA launch handler: saxpy runs on XLA's stream and device with the packed parameters") {
  kjit::test::use_fake_devices();
  for (int ordinal : {1, 0}) {  // DeviceOrdinal_Get picks the device, not a default of 0
    CAPTURE(ordinal);
    OnDevice d(ordinal);
    const int n = 1000;
    NdArray x = on(d.device, ramp(n, 0.5f)), y = on(d.device, ramp(n, -1.f, 3.f)), out = filled(d.device, n, -5.f);
    FrameBuilder b = saxpy_frame(x, y, out, 2.5f);
    Records r;
    Outcome o = kjit::test::call(&kjit_xla_launch_cuda, b.frame());
    REQUIRE_MESSAGE(o.ok, o.message);
    auto l = r.launches();
    REQUIRE(l.size() == 1);
    CHECK(l[0].device == ordinal);
    CHECK(l[0].stream == d.stream_id());
    CHECK(l[0].origin == LaunchOrigin::Direct);
    CHECK(l[0].function == entries(demo::saxpy.def()).at(0));
    const int block = module_block_dim(demo::saxpy.def());
    CHECK(l[0].block[0] == unsigned(block));
    CHECK(l[0].grid[0] == cuda::grid_size(cuda::properties(ordinal), n, block));
    REQUIRE(l[0].params.size() == 5);  // bounds, x, y, a, out
    kj::launch_bounds_t lb = bounds_param(l[0]);
    CHECK(lb.ndim == 1);
    CHECK(lb.shape[0] == n);
    CHECK(lb.size == n);
    check_float_array(l[0], 1, x.data(), n);
    check_float_array(l[0], 2, y.data(), n);
    CHECK(float_param(l[0], 3) == 2.5f);
    check_float_array(l[0], 4, out.data(), n);
    // saxpy only stores to out: nothing zeroes it, nothing waits on the stream.
    CHECK(r.copies().empty());
    CHECK(r.count_calls("cuStreamSynchronize") == 0);
    CHECK(all_equal(out, -5.f));  // the fake runs no kernel
  }
}

TEST_CASE("CUDA launch handler: a failing Stream_Get is reported with XLA's message, nothing launched") {
  kjit::test::use_fake_devices();
  OnDevice d(0);
  xla::Api api = *kjit::test::fake_api();
  api.Stream_Get = [](xla::StreamGetArgs*) -> xla::Error* {
    xla::ErrorCreateArgs e{};
    e.struct_size = sizeof e;
    e.message = "no stream on this thread";
    e.errc = xla::kInternal;
    return kjit::test::fake_api()->Error_Create(&e);
  };
  // As API 0.5's XLA_FFI_Error_GetDetails does: it checks struct_size against its own
  // STRUCT_SIZE (which ends at errc), then writes the message and the code. A 32-byte struct
  // (API 0.1's) would be written past: the sanitizer build reports the overflow.
  static size_t seen_struct_size = 0;
  api.Error_GetMessage = [](xla::ErrorGetMessageArgs* args) {
    seen_struct_size = args->struct_size;
    if (args->struct_size < offsetof(xla::ErrorGetMessageArgs, errc) + sizeof(xla::ErrorCode)) return;
    kjit::test::fake_api()->Error_GetMessage(args);
    args->errc = xla::kInternal;
  };
  NdArray x = filled(d.device, 8, 1.f), out = filled(d.device, 8, 0.f);
  FrameBuilder b = saxpy_frame(x, x, out, 1.f);
  b.frame()->api = &api;
  Records r;
  Outcome o = kjit::test::call(&kjit_xla_launch_cuda, b.frame());
  CHECK(o.code == xla::kInternal);
  CHECK(o.message == "XLA_FFI_Stream_Get failed: no stream on this thread");
  CHECK(seen_struct_size == sizeof(xla::ErrorGetMessageArgs));
  CHECK(seen_struct_size >= offsetof(xla::ErrorGetMessageArgs, errc) + sizeof(xla::ErrorCode));
  CHECK(seen_struct_size > xla::kErrorGetMessageSize01);  // what an API 0.1 XLA checks for: more is fine
  CHECK(r.launches().empty());
}

TEST_CASE("CUDA handlers: kjit_block_dim sets the block; 0 and 2048 are INVALID_ARGUMENT") {
  kjit::test::use_fake_devices();
  OnDevice d(0);
  const int n = 1000;
  NdArray x = on(d.device, ramp(n, 1.f)), y = on(d.device, ramp(n, 2.f)), out = filled(d.device, n, 0.f);
  NdArray cot = on(d.device, ramp(n, 0.5f)), dx = filled(d.device, n, 3.f), dy = filled(d.device, n, 3.f);
  REQUIRE(module_block_dim(demo::saxpy.def()) != 64);  // so that 64 can only come from the attribute

  FrameBuilder f = saxpy_frame(x, y, out, 2.f);
  f.attr_scalar("kjit_block_dim", xla::kS64, int64_t(64));
  FrameBuilder g = saxpy_adjoint_frame(x, y, out, cot, dx, dy, 2.f);
  g.attr_scalar("kjit_block_dim", xla::kS32, int32_t(64));
  Records r;
  REQUIRE(kjit::test::call(&kjit_xla_launch_cuda, f.frame()).ok);
  REQUIRE(kjit::test::call(&kjit_xla_adjoint_cuda, g.frame()).ok);
  auto l = r.launches();
  REQUIRE(l.size() == 2);
  for (const LaunchRecord& rec : l) {
    CHECK(rec.block[0] == 64u);
    CHECK(rec.grid[0] == cuda::grid_size(cuda::properties(0), n, 64));
  }
  CHECK(l[0].function == entries(demo::saxpy.def()).at(0));
  CHECK(l[1].function == entries(demo::saxpy.def()).at(1));

  for (int64_t bad : {int64_t(0), int64_t(2048)}) {
    CAPTURE(bad);
    FrameBuilder fb = saxpy_frame(x, y, out, 2.f);
    fb.attr_scalar("kjit_block_dim", xla::kS64, bad);
    FrameBuilder gb = saxpy_adjoint_frame(x, y, out, cot, dx, dy, 2.f);
    gb.attr_scalar("kjit_block_dim", xla::kS64, bad);
    r.reset();
    Outcome of = kjit::test::call(&kjit_xla_launch_cuda, fb.frame());
    Outcome og = kjit::test::call(&kjit_xla_adjoint_cuda, gb.frame());
    CHECK(of.code == xla::kInvalidArgument);
    CHECK(of.message == "kjit kernel 'demo::saxpy': block_dim must be 1..1024, got " + std::to_string(bad));
    CHECK(og.code == xla::kInvalidArgument);
    CHECK(og.message == "kjit adjoint of kernel 'demo::saxpy': block_dim must be 1..1024, got " + std::to_string(bad));
    CHECK(r.launches().empty());
    CHECK(r.copies().empty());  // rejected before the gradients are zeroed
  }
}

TEST_CASE("CUDA adjoint handler: the gradients are zeroed on XLA's stream, then the adjoint launches") {
  kjit::test::use_fake_devices();
  OnDevice d(1);
  const int n = 700;
  NdArray x = on(d.device, ramp(n, 1.f)), y = on(d.device, ramp(n, 2.f)), out = on(d.device, ramp(n, 3.f));
  NdArray cot = on(d.device, ramp(n, 0.1f, 1.f));
  NdArray dx = filled(d.device, n, 99.f), dy = filled(d.device, n, -99.f);  // garbage XLA may leave
  FrameBuilder b = saxpy_adjoint_frame(x, y, out, cot, dx, dy, 1.5f);
  Records r;
  Outcome o = kjit::test::call(&kjit_xla_adjoint_cuda, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  // The memsets really ran (the fake performs them); no kernel ran to overwrite the zeros.
  CHECK(all_equal(dx, 0.f));
  CHECK(all_equal(dy, 0.f));
  auto c = r.copies();
  REQUIRE(c.size() == 2);
  check_memset(c[0], d, dx);
  check_memset(c[1], d, dy);
  CHECK(r.call_names("cuMemsetD8Async", "cuLaunchKernel") ==
        std::vector<std::string>{"cuMemsetD8Async", "cuMemsetD8Async", "cuLaunchKernel"});
  auto l = r.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].function == entries(demo::saxpy.def()).at(1));
  CHECK(l[0].device == 1);
  CHECK(l[0].stream == d.stream_id());
  // bounds, x, y, a, out, then one adjoint per parameter: dx, dy, where da goes (nowhere: a is
  // static), the cotangent of out.
  REQUIRE(l[0].params.size() == 9);
  CHECK(bounds_param(l[0]).size == n);
  check_float_array(l[0], 1, x.data(), n);
  check_float_array(l[0], 2, y.data(), n);
  CHECK(float_param(l[0], 3) == 1.5f);
  check_float_array(l[0], 4, out.data(), n);
  check_float_array(l[0], 5, dx.data(), n);
  check_float_array(l[0], 6, dy.data(), n);
  CHECK(pointer_param(l[0], 7) == nullptr);
  check_float_array(l[0], 8, cot.data(), n);
  CHECK(r.count_calls("cuStreamSynchronize") == 0);  // saxpy has no status word to read
}

TEST_CASE("CUDA handlers: the tangent kernel by name, and its adjoint, launch from the tangent module in the call's order") {
  kjit::test::use_fake_devices();
  OnDevice d(1);
  const int n = 700;
  const KernelDef& t = tangent_of(demo::saxpy.def());  // x, y, a, out, d_x, d_y, d_a, d_out
  NdArray x = on(d.device, ramp(n, 1.f)), y = on(d.device, ramp(n, 2.f)), dx = on(d.device, ramp(n, 0.5f));
  NdArray dy = on(d.device, ramp(n, -1.f)), out = filled(d.device, n, 7.f), dout = filled(d.device, n, 7.f);
  // Operands: the arrays and their tangents; results: out and d_out (kjit_array_order).
  FrameBuilder b;
  b.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, dx.data());
  b.arg(xla::kF32, {n}, dy.data()).ret(xla::kF32, {n}, out.data()).ret(xla::kF32, {n}, dout.data());
  b.attr_string("kjit_kernel", "demo::saxpy.tangent").attr_scalar("a", xla::kF32, 1.5f);
  b.attr_scalar("d_a", xla::kF32, -2.0f).attr_array<int64_t>("kjit_array_order", xla::kS64, {0, 1, 4, 5, 3, 7});
  Records r;
  Outcome o = kjit::test::call(&kjit_xla_launch_cuda, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  auto l = r.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].function == entries(t).at(0));
  CHECK(l[0].stream == d.stream_id());
  REQUIRE(l[0].params.size() == 9);  // bounds, then the parameters in the kernel's order
  check_float_array(l[0], 1, x.data(), n);
  check_float_array(l[0], 2, y.data(), n);
  CHECK(float_param(l[0], 3) == 1.5f);
  check_float_array(l[0], 4, out.data(), n);
  check_float_array(l[0], 5, dx.data(), n);
  check_float_array(l[0], 6, dy.data(), n);
  CHECK(float_param(l[0], 7) == -2.0f);
  check_float_array(l[0], 8, dout.data(), n);
  CHECK(r.copies().empty());  // out and d_out are only stored

  // Its adjoint: inputs, outputs, one cotangent per output; a gradient per input array.
  NdArray w1 = on(d.device, ramp(n, 0.25f)), w2 = on(d.device, ramp(n, 0.75f));
  NdArray gx = filled(d.device, n, 9.f), gy = filled(d.device, n, 9.f), gdx = filled(d.device, n, 9.f),
          gdy = filled(d.device, n, 9.f);
  FrameBuilder g;
  g.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, dx.data());
  g.arg(xla::kF32, {n}, dy.data()).arg(xla::kF32, {n}, out.data()).arg(xla::kF32, {n}, dout.data());
  g.arg(xla::kF32, {n}, w1.data()).arg(xla::kF32, {n}, w2.data());
  g.ret(xla::kF32, {n}, gx.data()).ret(xla::kF32, {n}, gy.data()).ret(xla::kF32, {n}, gdx.data());
  g.ret(xla::kF32, {n}, gdy.data());
  g.attr_string("kjit_kernel", "demo::saxpy.tangent").attr_scalar("a", xla::kF32, 1.5f);
  g.attr_scalar("d_a", xla::kF32, -2.0f).attr_array<int64_t>("kjit_array_order", xla::kS64, {0, 1, 4, 5, 3, 7});
  r.reset();
  o = kjit::test::call(&kjit_xla_adjoint_cuda, g.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  auto c = r.copies();
  REQUIRE(c.size() == 4);  // the four gradients zeroed, in the call's order
  check_memset(c[0], d, gx);
  check_memset(c[1], d, gy);
  check_memset(c[2], d, gdx);
  check_memset(c[3], d, gdy);
  l = r.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].function == entries(t).at(1));
  REQUIRE(l[0].params.size() == 17);  // bounds, 8 parameters, 8 adjoints
  check_float_array(l[0], 4, out.data(), n);
  check_float_array(l[0], 9, gx.data(), n);
  check_float_array(l[0], 10, gy.data(), n);
  CHECK(pointer_param(l[0], 11) == nullptr);  // a is static
  check_float_array(l[0], 12, w1.data(), n);
  check_float_array(l[0], 13, gdx.data(), n);
  check_float_array(l[0], 14, gdy.data(), n);
  CHECK(pointer_param(l[0], 15) == nullptr);
  check_float_array(l[0], 16, w2.data(), n);
}

TEST_CASE("CUDA handlers: springs zero an accumulated output; an in/out gradient is seeded with its cotangent") {
  kjit::test::use_fake_devices();
  OnDevice d(0);
  const int points = 6, springs = 8;
  std::vector<float> xs = ramp(3 * points, 0.3f), rest = ramp(springs, 0.05f, 0.3f);
  std::vector<int32_t> pairs;
  for (int s = 0; s < springs; ++s) pairs.insert(pairs.end(), {s % points, (s + 1) % points});
  NdArray x = NdArray::from_vector(xs, {3 * points}, d.device);
  NdArray p = NdArray::from_vector(pairs, {2 * springs}, d.device);
  NdArray r_ = on(d.device, rest);

  // Forward: f is a pure output the kernel accumulates into: zeroed on the stream first.
  NdArray f = filled(d.device, 3 * points, 123.f);
  FrameBuilder fb;
  fb.arg(xla::kF32, {points, 3}, x.data()).arg(xla::kS32, {2 * springs}, p.data());
  fb.arg(xla::kF32, {springs}, r_.data()).ret(xla::kF32, {points, 3}, f.data());
  fb.attr_string("kjit_kernel", "demo::springs").attr_scalar("k", xla::kF32, 50.f);
  fb.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {springs});
  Records rec;
  Outcome o = kjit::test::call(&kjit_xla_launch_cuda, fb.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  CHECK(all_equal(f, 0.f));
  REQUIRE(rec.copies().size() == 1);
  check_memset(rec.copies()[0], d, f);
  CHECK(rec.call_names("cuMemsetD8Async", "cuLaunchKernel") ==
        std::vector<std::string>{"cuMemsetD8Async", "cuLaunchKernel"});
  REQUIRE(rec.launches().size() == 1);
  CHECK(bounds_param(rec.launches()[0]).size == springs);

  // Adjoint with f in/out: args x, pairs, rest, f (its value before the call), f's cotangent;
  // results dx, drest, df. dx and drest are zeroed; df starts as a copy of the cotangent.
  NdArray f0 = filled(d.device, 3 * points, 1.f), fcot = on(d.device, ramp(3 * points, 0.25f, 2.f));
  NdArray dx = filled(d.device, 3 * points, 7.f), drest = filled(d.device, springs, 7.f);
  NdArray df = filled(d.device, 3 * points, 7.f);
  FrameBuilder gb;
  gb.arg(xla::kF32, {points, 3}, x.data()).arg(xla::kS32, {2 * springs}, p.data());
  gb.arg(xla::kF32, {springs}, r_.data()).arg(xla::kF32, {points, 3}, f0.data());
  gb.arg(xla::kF32, {points, 3}, fcot.data());
  gb.ret(xla::kF32, {points, 3}, dx.data()).ret(xla::kF32, {springs}, drest.data());
  gb.ret(xla::kF32, {points, 3}, df.data());
  gb.attr_string("kjit_kernel", "demo::springs").attr_scalar("k", xla::kF32, 50.f);
  gb.attr_array<int64_t>("kjit_in_out", xla::kS64, {4});
  gb.attr_array<int64_t>("kjit_launch_dims", xla::kS64, {springs});
  rec.reset();
  o = kjit::test::call(&kjit_xla_adjoint_cuda, gb.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  CHECK(all_equal(dx, 0.f));
  CHECK(all_equal(drest, 0.f));
  CHECK(df.to_vector<float>() == fcot.to_vector<float>());
  auto c = rec.copies();
  REQUIRE(c.size() == 3);  // in parameter order: x, rest, f
  check_memset(c[0], d, dx);
  check_memset(c[1], d, drest);
  CHECK_FALSE(c[2].memset);
  CHECK(c[2].src == reinterpret_cast<uintptr_t>(fcot.data()));
  CHECK(c[2].dst == reinterpret_cast<uintptr_t>(df.data()));
  CHECK(c[2].stream == d.stream_id());
  auto l = rec.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].function == entries(demo::springs.def()).at(1));
  // bounds, x, pairs, rest, k, f, then dx, (no gradient for the int pairs), drest, dk, df.
  REQUIRE(l[0].params.size() == 11);
  CHECK(array_param(l[0], 5) == f0.data());
  CHECK(array_param(l[0], 6) == dx.data());
  CHECK(array_param(l[0], 7) == nullptr);
  CHECK(array_param(l[0], 8) == drest.data());
  CHECK(pointer_param(l[0], 9) == nullptr);
  CHECK(array_param(l[0], 10) == df.data());
}

TEST_CASE("CUDA launch handler: a vmap batch launches once per item on the stream, broadcasting y") {
  kjit::test::use_fake_devices();
  OnDevice d(0);
  const int B = 3, n = 300;
  NdArray x = on(d.device, ramp(B * n, 1.f)), y = on(d.device, ramp(n, 2.f)), out = filled(d.device, B * n, 0.f);
  FrameBuilder b;
  b.arg(xla::kF32, {B, n}, x.data()).arg(xla::kF32, {n}, y.data()).ret(xla::kF32, {B, n}, out.data());
  b.attr_string("kjit_kernel", "demo::saxpy").attr_scalar("a", xla::kF32, 2.f);
  Records r;
  REQUIRE(kjit::test::call(&kjit_xla_launch_cuda, b.frame()).ok);
  auto l = r.launches();
  REQUIRE(l.size() == size_t(B));
  for (int i = 0; i < B; ++i) {
    CAPTURE(i);
    CHECK(l[size_t(i)].stream == d.stream_id());
    check_float_array(l[size_t(i)], 1, static_cast<float*>(x.data()) + i * n, n);
    check_float_array(l[size_t(i)], 2, y.data(), n);
    check_float_array(l[size_t(i)], 4, static_cast<float*>(out.data()) + i * n, n);
  }
}

namespace {

/// An FFI api from an XLA older than DeviceOrdinal_Get: its struct ends before that entry,
/// and the byte after it starts a page no one may read, so reading the entry would crash.
class OldApi {
 public:
  OldApi() {
    page_ = size_t(sysconf(_SC_PAGESIZE));
    mem_ = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(mem_ != MAP_FAILED);
    char* at = static_cast<char*>(mem_) + page_ - size();
    std::memcpy(at, kjit::test::fake_api(), size());
    api_ = reinterpret_cast<xla::Api*>(at);
    api_->struct_size = size();
    REQUIRE(mprotect(static_cast<char*>(mem_) + page_, page_, PROT_NONE) == 0);
  }
  ~OldApi() { munmap(mem_, 2 * page_); }
  OldApi(const OldApi&) = delete;
  OldApi& operator=(const OldApi&) = delete;
  static constexpr size_t size() { return offsetof(xla::Api, DeviceOrdinal_Get); }
  const xla::Api* get() const { return api_; }

 private:
  size_t page_ = 0;
  void* mem_ = nullptr;
  xla::Api* api_ = nullptr;
};

}  // namespace

TEST_CASE("an FFI api without DeviceOrdinal_Get: UNIMPLEMENTED with several GPUs, never read past struct_size") {
  kjit::test::use_fake_devices();
  REQUIRE(cuda::device_count() == 2);
  OldApi old;
  OnDevice d(1);
  NdArray x = filled(d.device, 16, 1.f), out = filled(d.device, 16, 0.f), dx = filled(d.device, 16, 5.f);
  FrameBuilder f = saxpy_frame(x, x, out, 1.f);
  f.frame()->api = old.get();
  FrameBuilder g = saxpy_adjoint_frame(x, x, out, x, dx, dx, 1.f);
  g.frame()->api = old.get();
  Records r;
  const std::string why = "kjit: this XLA does not offer XLA_FFI_DeviceOrdinal_Get (FFI api struct_size " +
                          std::to_string(OldApi::size()) +
                          "), so kjit cannot tell which of several GPUs a call runs on; upgrade jaxlib";
  for (auto [handler, frame] : {std::pair{&kjit_xla_launch_cuda, f.frame()}, std::pair{&kjit_xla_adjoint_cuda, g.frame()}}) {
    Outcome o = kjit::test::call(handler, frame);
    CHECK(o.code == xla::kUnimplemented);
    CHECK(o.message == why);
  }
  CHECK(r.launches().empty());
  CHECK(r.copies().empty());  // the gradients are not touched either
  CHECK(all_equal(dx, 5.f));
}

// Run alone by the ctest entry ffi_graphs_one_gpu (one fake device in its process); skipped in
// the ffi_graphs run, whose process has two.
TEST_CASE("an FFI api without DeviceOrdinal_Get on a one-GPU machine launches on device 0" * doctest::skip()) {
  ::setenv("KJIT_CUDA_DRIVER", KJIT_FAKE_CUDA_LIBRARY, 1);
  ::setenv("KJIT_FAKE_CUDA_DEVICES", "8.0", 1);
  fake_cuda::reset();
  REQUIRE_MESSAGE(cuda::device_count() == 1, "run this test case alone: ctest -R ffi_graphs_one_gpu");
  OldApi old;
  OnDevice d(0);
  kjit::test::set_execution_context(d.stream.handle(), 5);  // DeviceOrdinal_Get would say 5: unread
  const int n = 64;
  NdArray x = on(d.device, ramp(n, 1.f)), out = filled(d.device, n, 0.f);
  FrameBuilder f = saxpy_frame(x, x, out, 3.f);
  f.frame()->api = old.get();
  Records r;
  Outcome o = kjit::test::call(&kjit_xla_launch_cuda, f.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  auto l = r.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].device == 0);
  CHECK(l[0].stream == d.stream_id());
  CHECK(float_param(l[0], 3) == 3.f);
  check_float_array(l[0], 4, out.data(), n);
}

namespace {

/// The driver calls that would wait for XLA's stream: a handler captured into a command buffer
/// must make none.
int waits(const Records& r) {
  return r.count_calls("cuStreamSynchronize") + r.count_calls("cuCtxSynchronize") +
         r.count_calls("cuMemcpyDtoH") + r.count_calls("cuMemcpyDtoHAsync");
}

}  // namespace

TEST_CASE("CUDA handlers: a traced value travels as its device address; its gradient is zeroed, then summed there") {
  kjit::test::use_fake_devices();
  OnDevice d(1);
  const int n = 1000;
  NdArray x = on(d.device, ramp(n, 0.5f)), y = on(d.device, ramp(n, 1.f)), out = filled(d.device, n, 0.f);
  NdArray a = filled(d.device, 1, 2.5f);
  FrameBuilder f;
  f.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {}, a.data());
  f.ret(xla::kF32, {n}, out.data());
  f.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  Records r;
  Outcome o = kjit::test::call(&kjit_xla_launch_cuda, f.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  auto l = r.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].function == entries(demo::saxpy.def()).at(0));
  kj::value_t<float> av = value_param<float>(l[0], 3);
  CHECK(av.ptr == a.data());  // every thread reads it there: the host never does
  CHECK(av.value == 0.f);
  CHECK(r.copies().empty());
  CHECK(waits(r) == 0);

  NdArray cot = on(d.device, ramp(n, 0.25f)), dx = filled(d.device, n, 9.f), dy = filled(d.device, n, 9.f);
  NdArray da = filled(d.device, 1, 9.f);
  FrameBuilder g;
  g.arg(xla::kF32, {n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {n}, out.data());
  g.arg(xla::kF32, {n}, cot.data()).arg(xla::kF32, {}, a.data());
  g.ret(xla::kF32, {n}, dx.data()).ret(xla::kF32, {n}, dy.data()).ret(xla::kF32, {}, da.data());
  g.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  r.reset();
  o = kjit::test::call(&kjit_xla_adjoint_cuda, g.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  auto c = r.copies();
  REQUIRE(c.size() == 3);  // dx, dy, then da: the blocks' atomic adds start from zero
  check_memset(c[0], d, dx);
  check_memset(c[1], d, dy);
  check_memset(c[2], d, da);
  CHECK(all_equal(da, 0.f));
  CHECK(r.call_names("cuMemsetD8Async", "cuLaunchKernel").back() == "cuLaunchKernel");
  l = r.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].function == entries(demo::saxpy.def()).at(1));
  REQUIRE(l[0].params.size() == 9);
  CHECK(value_param<float>(l[0], 3).ptr == a.data());
  CHECK(pointer_param(l[0], 7) == da.data());  // the destination itself: no partials on CUDA
  check_float_array(l[0], 8, cot.data(), n);
  CHECK(waits(r) == 0);
}

TEST_CASE("CUDA handlers: vmap over a traced value: each item's launch reads its own value and sums into its own gradient") {
  kjit::test::use_fake_devices();
  OnDevice d(0);
  const int B = 3, n = 300;
  NdArray x = NdArray::from_vector(ramp(B * n, 0.5f), {B, n}, d.device), y = on(d.device, ramp(n, 1.f));
  NdArray out = NdArray::zeros(ir::Type::scalar_of(ir::Scalar::F32), {B, n}, d.device);
  NdArray a = on(d.device, {1.f, 2.f, 3.f});
  NdArray cot = NdArray::from_vector(ramp(B * n, 0.25f), {B, n}, d.device);
  NdArray dx = NdArray::zeros(ir::Type::scalar_of(ir::Scalar::F32), {B, n}, d.device);
  NdArray dy = NdArray::zeros(ir::Type::scalar_of(ir::Scalar::F32), {B, n}, d.device);
  NdArray da = filled(d.device, B, 9.f);
  FrameBuilder g;
  g.arg(xla::kF32, {B, n}, x.data()).arg(xla::kF32, {n}, y.data()).arg(xla::kF32, {B, n}, out.data());
  g.arg(xla::kF32, {B, n}, cot.data()).arg(xla::kF32, {B}, a.data());
  g.ret(xla::kF32, {B, n}, dx.data()).ret(xla::kF32, {B, n}, dy.data()).ret(xla::kF32, {B}, da.data());
  g.attr_string("kjit_kernel", "demo::saxpy").attr_array<int64_t>("kjit_traced", xla::kS64, {2});
  Records r;
  Outcome o = kjit::test::call(&kjit_xla_adjoint_cuda, g.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  auto l = r.launches();
  REQUIRE(l.size() == size_t(B));
  for (int b = 0; b < B; ++b) {
    CAPTURE(b);
    CHECK(value_param<float>(l[size_t(b)], 3).ptr == static_cast<const float*>(a.data()) + b);
    CHECK(pointer_param(l[size_t(b)], 7) == static_cast<const float*>(da.data()) + b);
    CHECK(array_param(l[size_t(b)], 1) == static_cast<const float*>(x.data()) + n * b);
  }
  CHECK(all_equal(da, 0.f));
  CHECK(waits(r) == 0);
}

TEST_CASE("CUDA mesh BVH handler: the inputs come to the host, kjit::Mesh's tree goes back, on XLA's stream") {
  kjit::test::use_fake_devices();
  OnDevice d(1);
  // A 4 x 4 height field: 18 triangles.
  std::vector<vec3f> p;
  std::vector<int32_t> idx;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) p.push_back(vec3f(float(i), float(j), 0.1f * float((i * j) % 3)));
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i)
      for (int v : {0, 1, 5, 0, 5, 4}) idx.push_back(j * 4 + i + v);
  const int64_t faces = int64_t(idx.size() / 3), capacity = 2 * faces - 1;
  NdArray points = from_vector(p).to(d.device), indices = from_vector(idx).to(d.device);
  NdArray bounds = zeros<vec3f>({2 * capacity}, d.device), links = zeros<int32_t>({2 * capacity + faces}, d.device);
  FrameBuilder b;
  b.arg(xla::kF32, {int64_t(p.size()), 3}, points.data()).arg(xla::kS32, {int64_t(idx.size())}, indices.data());
  b.ret(xla::kF32, {2 * capacity, 3}, bounds.data()).ret(xla::kS32, {2 * capacity + faces}, links.data());
  Records r;
  Outcome o = kjit::test::call(&kjit_xla_mesh_bvh_cuda, b.frame());
  REQUIRE_MESSAGE(o.ok, o.message);
  const auto copies = r.copies();
  REQUIRE(copies.size() == 4);  // points and indices to the host, bounds and links back
  for (const CopyRecord& c : copies) {
    CHECK(c.stream == d.stream_id());
    CHECK(c.device == 1);
  }
  CHECK(copies[0].src == reinterpret_cast<uintptr_t>(points.data()));
  CHECK(copies[2].dst == reinterpret_cast<uintptr_t>(bounds.data()));
  CHECK(copies[3].dst == reinterpret_cast<uintptr_t>(links.data()));
  CHECK(r.count_calls("cuStreamSynchronize") == 2);
  Mesh host(from_vector(p), from_vector(idx));
  const std::vector<vec3f> want_b = host.node_bounds().to_vector<vec3f>(), got_b = bounds.to_vector<vec3f>();
  const std::vector<int32_t> want_l = host.node_links().to_vector<int32_t>(), got_l = links.to_vector<int32_t>();
  REQUIRE(want_l.size() <= got_l.size());
  CHECK(std::equal(want_l.begin(), want_l.end(), got_l.begin()));
  CHECK(std::memcmp(want_b.data(), got_b.data(), want_b.size() * sizeof(vec3f)) == 0);
}
