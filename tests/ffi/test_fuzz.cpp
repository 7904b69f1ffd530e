// Fuzz-style test: a few thousand call frames, each a valid frame of a demo kernel with a
// few random mutations (counts, dtypes, ranks, dims, attributes, stages). Every one must
// either run or return INVALID_ARGUMENT / NOT_FOUND with a message — never crash.
#include <doctest/doctest.h>

#include <random>

#include "frame_builder.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::call;

namespace {

/// Zero-filled memory every buffer points into: large enough for any shape the fuzzer makes
/// (at most 5^5 elements of 8 bytes, three lanes), so no launch can leave it.
constexpr size_t kPoolBytes = 1 << 18;

struct Pools {
  std::vector<std::vector<double>> mem;
  static constexpr size_t kZero = 11;
  Pools() : mem(12, std::vector<double>(kPoolBytes / sizeof(double), 0.0)) {}
  void* get(size_t i) { return mem[i == kZero ? kZero : i % kZero].data(); }
};

struct BufSpec {
  xla::DataType dtype;
  std::vector<int64_t> dims;
};

struct Spec {
  std::string kernel;
  std::vector<BufSpec> args, rets;
  std::vector<std::pair<std::string, std::pair<xla::DataType, double>>> scalars;
  std::vector<int64_t> launch_dims;
  bool adjoint = false;
};

Spec valid_spec(std::mt19937& rng) {
  std::uniform_int_distribution<int> n(0, 5), pick(0, 5);
  int64_t e = n(rng);
  Spec s;
  switch (pick(rng)) {
    case 0:
      s.kernel = "demo::saxpy";
      s.args = {{xla::kF32, {e}}, {xla::kF32, {e}}};
      s.rets = {{xla::kF32, {e}}};
      s.scalars = {{"a", {xla::kF32, 2.0}}};
      break;
    case 1:
      s.kernel = "demo::daxpy";
      s.args = {{xla::kF64, {e}}, {xla::kF64, {e}}};
      s.rets = {{xla::kF64, {e}}};
      s.scalars = {{"a", {xla::kF64, -1.0}}};
      break;
    case 2:
      s.kernel = "demo::springs";
      s.args = {{xla::kF32, {e, 3}}, {xla::kS32, {2 * e}}, {xla::kF32, {e}}};
      s.rets = {{xla::kF32, {e, 3}}};
      s.scalars = {{"k", {xla::kF32, 3.0}}};
      break;
    case 3:
      s.kernel = "demo::iterate";
      s.args = {{xla::kF64, {e}}, {xla::kF64, {e}}};
      s.rets = {{xla::kF64, {e}}};
      s.scalars = {{"n", {xla::kS32, 3.0}}};
      break;
    case 4:
      s.kernel = "demo::damp";
      s.args = {{xla::kF32, {e, 3}}};
      s.rets = {{xla::kF32, {e, 3}}};
      s.scalars = {{"c", {xla::kF32, 0.5}}, {"steps", {xla::kS32, 4.0}}};
      break;
    default:
      s.kernel = "demo::unknown_kernel";
      s.args = {{xla::kF32, {e}}};
      s.rets = {{xla::kF32, {e}}};
      break;
  }
  s.adjoint = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
  if (s.adjoint) {  // args: inputs, outputs, cotangents; rets: gradients of float inputs
    std::vector<BufSpec> grads;
    for (auto& a : s.args)
      if (a.dtype == xla::kF32 || a.dtype == xla::kF64) grads.push_back(a);
    auto outs = s.rets;
    for (auto& o : outs) s.args.push_back(o);
    for (auto& o : outs) s.args.push_back(o);
    s.rets = grads;
  }
  return s;
}

void mutate(Spec& s, std::mt19937& rng) {
  std::uniform_int_distribution<int> what(0, 10), small(0, 5);
  const xla::DataType dtypes[] = {xla::kF32, xla::kF64, xla::kS32, xla::kS64, xla::kPred, xla::kF16, xla::kC64, xla::DataType(99)};
  auto any_buf = [&](std::vector<BufSpec>& v) -> BufSpec* {
    if (v.empty()) return nullptr;
    return &v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  switch (what(rng)) {
    case 0: if (!s.args.empty()) s.args.pop_back(); break;
    case 1: s.args.push_back({xla::kF32, {int64_t(small(rng))}}); break;
    case 2: if (!s.rets.empty()) s.rets.pop_back(); else s.rets.push_back({xla::kF32, {3}}); break;
    case 3: if (auto* b = any_buf(s.args)) b->dtype = dtypes[small(rng) + 2 > 7 ? 7 : small(rng) + 2]; break;
    case 4: if (auto* b = any_buf(s.args)) b->dims.push_back(small(rng)); break;
    case 5: if (auto* b = any_buf(s.rets)) { if (!b->dims.empty()) b->dims.pop_back(); } break;
    case 6: if (auto* b = any_buf(s.args)) { if (!b->dims.empty()) b->dims.back() = small(rng) - 1; } break;
    case 7: if (!s.scalars.empty()) s.scalars.back().second.first = dtypes[small(rng)]; break;
    case 8: if (!s.scalars.empty()) s.scalars.pop_back(); break;
    case 9: s.launch_dims.assign(size_t(small(rng)), int64_t(small(rng)) - 1); break;
    default: {  // a vmap batch dim on everything
      int64_t b = 1 + small(rng) % 3;
      for (auto* v : {&s.args, &s.rets})
        for (auto& x : *v) x.dims.insert(x.dims.begin(), b);
    }
  }
}

}  // namespace

TEST_CASE("fuzz: thousands of random frames run or fail cleanly") {
  std::mt19937 rng(20240611);
  Pools pools;
  int ran = 0, failed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Spec s = valid_spec(rng);
    int mutations = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int m = 0; m < mutations; ++m) mutate(s, rng);
    FrameBuilder b;
    // Integer buffers (springs' pair indices) share a pool nothing writes: kernels only
    // write float outputs, so indices stay zero and in bounds.
    size_t pool = 0;
    auto mem = [&](xla::DataType t) {
      return t == xla::kS32 || t == xla::kS64 ? pools.get(Pools::kZero) : pools.get(pool++);
    };
    for (auto& a : s.args) b.arg(a.dtype, a.dims, mem(a.dtype));
    for (auto& r : s.rets) b.ret(r.dtype, r.dims, mem(r.dtype));
    b.attr_string("kjit_kernel", s.kernel);
    for (auto& [name, tv] : s.scalars) {
      auto [t, v] = tv;
      if (t == xla::kF32) b.attr_scalar(name, t, float(v));
      else if (t == xla::kF64) b.attr_scalar(name, t, v);
      else if (t == xla::kS32) b.attr_scalar(name, t, int32_t(v));
      else b.attr_scalar(name, t, int64_t(v));
    }
    if (!s.launch_dims.empty() || std::uniform_int_distribution<int>(0, 20)(rng) == 0)
      b.attr_array<int64_t>("kjit_launch_dims", xla::kS64, s.launch_dims);
    if (std::uniform_int_distribution<int>(0, 30)(rng) == 0) b.stage(xla::kPrepare);
    auto o = call(s.adjoint ? &kjit_xla_adjoint_cpu : &kjit_xla_launch_cpu, b.frame());
    if (o.ok) {
      ++ran;
    } else {
      ++failed;
      CHECK_MESSAGE((o.code == xla::kInvalidArgument || o.code == xla::kNotFound), o.message);
      CHECK_FALSE(o.message.empty());
    }
  }
  MESSAGE("ran ", ran, " frames, rejected ", failed);
  CHECK(ran > 300);
  CHECK(failed > 300);
}
