// The bytes kjit::launch hands cuLaunchKernel are exactly the generated kernels' parameters:
// for every example kernel, forward and adjoint, on a cubin device and on a PTX device, the
// fake driver reads each parameter with the size NVRTC laid out and we compare the bytes with
// the ABI of kjit/abi.h built independently from the arguments.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "integration/fake_devices.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;

namespace {

using Bytes = std::vector<unsigned char>;

template <class T>
Bytes bytes_of(const T& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(&v);
  return Bytes(p, p + sizeof(T));
}

/// The array_t a kernel must receive for `a` (all zero for an absent array).
Bytes descriptor_bytes(const NdArray& a) {
  kj::array_t<void> d;
  std::memset(&d, 0, sizeof d);
  if (a.defined()) {
    d.data = a.data();
    d.grad = a.has_grad() ? a.grad().data() : nullptr;
    d.ndim = kj_int32(a.ndim());
    for (int i = 0; i < a.ndim(); ++i) {
      d.shape[i] = kj_int32(a.shape(i));
      d.strides[i] = a.strides()[size_t(i)];
    }
  }
  return bytes_of(d);
}

/// The kj::value_t a kernel must receive for `v`: no pointer, the value.
template <class T>
Bytes value_bytes(T v) {
  kj::value_t<T> x;
  std::memset(&x, 0, sizeof x);
  x.value = v;
  return bytes_of(x);
}

/// A scalar argument of type `t` holding `v`, and its bytes as the kernel reads them.
std::pair<LaunchArg, Bytes> scalar(const ir::Type& t, double v) {
  switch (t.scalar) {
    case ir::Scalar::F32: return {LaunchArg(float(v)), value_bytes(float(v))};
    case ir::Scalar::F64: return {LaunchArg(v), value_bytes(v)};
    case ir::Scalar::I32: return {LaunchArg(int32_t(v)), value_bytes(int32_t(v))};
    case ir::Scalar::Bool: case ir::Scalar::I8: case ir::Scalar::U8: case ir::Scalar::I16: case ir::Scalar::U16:
    case ir::Scalar::U32: case ir::Scalar::I64: case ir::Scalar::U64: case ir::Scalar::F16: case ir::Scalar::BF16:
      break;  // the examples take none
  }
  FAIL("example parameter of an unexpected type " << t.str());
  return {};
}

struct Call {
  std::vector<LaunchArg> args, adj;
  std::vector<Bytes> expected_fwd, expected_adj;
  std::vector<NdArray> keep;  // the arrays stay alive while the launch record is checked
};

/// Arguments for every parameter of `k` on `device`: arrays of n elements (2n pairs; with gradient
/// buffers), scalars 3, 4, 5...; adjoints: every other array gets a gradient array, floating
/// scalars a one-element destination (its device address is the slot), integers none (null).
Call make_call(const KernelDef& k, const Device& device, int64_t n) {
  Call c;
  kj::launch_bounds_t bounds;
  std::memset(&bounds, 0, sizeof bounds);
  bounds.shape[0] = kj_int32(n);
  for (int i = 1; i < kj::kMaxDims; ++i) bounds.shape[i] = 1;
  bounds.ndim = 1;
  bounds.size = n;
  c.expected_fwd.push_back(bytes_of(bounds));
  std::vector<Bytes> adj_bytes;
  double value = 3;
  int arrays = 0;
  for (const KernelParam& p : k.params()) {
    if (p.type.is_array()) {
      ir::Type element = p.type;
      element.ndim = 0;
      Shape shape(size_t(p.type.ndim), 4);
      // springs reads pairs[2 s + 1] unguarded: kjit::launch refuses pairs shorter than 2n.
      shape[0] = p.name == "pairs" ? 2 * n : n;
      NdArray a = NdArray::zeros(element, shape, device);
      a.requires_grad();
      c.keep.push_back(a);
      c.args.emplace_back(a);
      c.expected_fwd.push_back(descriptor_bytes(a));
      if (arrays++ % 2 == 0) {
        NdArray g = NdArray::zeros(element, shape, device);
        c.keep.push_back(g);
        c.adj.emplace_back(g);
        adj_bytes.push_back(descriptor_bytes(g));
      } else {
        c.adj.emplace_back();
        adj_bytes.push_back(descriptor_bytes(NdArray()));
      }
    } else {
      auto [arg, bytes] = scalar(p.type, value++);
      c.args.push_back(arg);
      c.expected_fwd.push_back(bytes);
      void* destination = nullptr;
      if (p.type.is_differentiable()) {
        NdArray g = NdArray::zeros(p.type, {1}, device);
        c.keep.push_back(g);
        c.adj.emplace_back(g);
        destination = g.data();
      } else {
        c.adj.emplace_back();
      }
      adj_bytes.push_back(bytes_of(destination));
    }
  }
  c.expected_adj = c.expected_fwd;
  c.expected_adj.insert(c.expected_adj.end(), adj_bytes.begin(), adj_bytes.end());
  return c;
}

const fake_cuda::LaunchRecord& last_launch(std::vector<fake_cuda::LaunchRecord>& all) {
  REQUIRE(!all.empty());
  return all.back();
}

}  // namespace

TEST_CASE("packed parameters equal the generated layout for every example, forward and adjoint") {
  kjit::test::use_fake_devices();
  std::vector<const KernelDef*> kernels;
  for (const char* module : {"saxpy", "springs", "loops"}) {
    const ModuleDef* m = Registry::get().find_module(module);
    REQUIRE(m != nullptr);
    for (const KernelDef* k : m->kernels()) kernels.push_back(k);
  }
  REQUIRE(kernels.size() == 6);  // saxpy, daxpy, springs, springs_f64, damp, iterate
  for (int ordinal : {0, 1}) {
    Device device = Device::cuda(ordinal);
    for (const KernelDef* k : kernels) {
      CAPTURE(ordinal);
      CAPTURE(k->name());
      const int64_t n = 16;
      Call call = make_call(*k, device, n);
      LaunchOptions options;
      options.device = device;

      launch(*k, n, call.args, options);
      auto launches = fake_cuda::launches();
      const fake_cuda::LaunchRecord& fwd = last_launch(launches);
      CHECK(fwd.device == ordinal);
      CHECK(fwd.function == codegen::entry_name(k->name(), codegen::EntryKind::Forward));
      CHECK(fwd.block[0] == 256);
      CHECK(fwd.grid[0] == 1);
      REQUIRE(fwd.params.size() == call.expected_fwd.size());
      for (size_t i = 0; i < fwd.params.size(); ++i) {
        CAPTURE(i);
        CHECK(fwd.params[i] == call.expected_fwd[i]);
      }

      launch_adjoint(*k, n, call.args, call.adj, options);
      launches = fake_cuda::launches();
      const fake_cuda::LaunchRecord& adj = last_launch(launches);
      CHECK(adj.function == codegen::entry_name(k->name(), codegen::EntryKind::Adjoint));
      REQUIRE(adj.params.size() == call.expected_adj.size());
      // The adjoint of a kernel with dynamic loops carries its launch's status slot (a
      // device address that differs per thread); the rest of the bounds is as packed.
      std::vector<Bytes> got = adj.params;
      kj::launch_bounds_t dim;
      REQUIRE(got[0].size() == sizeof dim);
      std::memcpy(&dim, got[0].data(), sizeof dim);
      bool loops = false;
      ir::for_each_stmt(k->ir().body, [&](const ir::Stmt& s) { loops |= s.op == ir::Op::For || s.op == ir::Op::While; });
      CHECK((dim.status != nullptr) == loops);
      dim.status = nullptr;
      got[0] = bytes_of(dim);
      for (size_t i = 0; i < adj.params.size(); ++i) {
        CAPTURE(i);
        CHECK(got[i] == call.expected_adj[i]);
      }
    }
  }
  // Device 0 ran cubins (parameters from .nv.info), device 1 PTX (from the .param list).
  bool cubin0 = false, ptx1 = false;
  for (auto& load : fake_cuda::module_loads()) {
    if (load.device == 0) cubin0 |= load.cubin && load.arch == 80;
    if (load.device == 1) ptx1 |= !load.cubin;
  }
  CHECK(cubin0);
  CHECK(ptx1);
}

TEST_CASE("a launch's block size comes from the launch, else the module, and is validated") {
  kjit::test::use_fake_devices();
  Device device = Device::cuda(1);
  auto x = NdArray::zeros(ir_type_of<float>(), {1000}, device);
  auto y = NdArray::zeros(ir_type_of<float>(), {1000}, device);
  auto out = NdArray::zeros(ir_type_of<float>(), {1000}, device);
  LaunchOptions options;
  options.block_dim = 128;
  launch(demo::saxpy.def(), 1000, {x, y, 2.0f, out}, options);
  auto l = fake_cuda::launches().back();
  CHECK(l.block[0] == 128);
  CHECK(l.grid[0] == 8);
  options.block_dim = 4096;
  try {
    launch(demo::saxpy.def(), 1000, {x, y, 2.0f, out}, options);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()).find("block_dim 4096") != std::string::npos);
  }
}
