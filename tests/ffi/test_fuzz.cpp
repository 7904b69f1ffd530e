// Fuzz-style test: ten thousand call frames, each a valid frame of a demo kernel with a few
// random mutations (counts, dtypes, ranks, dims, launch dims, null data, attributes, stages,
// frame faults). Every buffer is sized exactly from its dims and ends at a guard page, so any
// access past it faults. Every frame must either run — and then its outputs are checked
// against a reference — or return INVALID_ARGUMENT / NOT_FOUND with a message; never crash.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "frame_builder.hpp"
#include "guarded_buffer.hpp"

using namespace kjit;
using kjit::test::FrameBuilder;
using kjit::test::call;

namespace {

struct BufSpec {
  xla::DataType dtype;
  std::vector<int64_t> dims;
  bool null_data = false;  ///< a mutation: no data pointer
};

struct Spec {
  std::string kernel;
  std::vector<BufSpec> args, rets;
  std::vector<std::pair<std::string, std::pair<xla::DataType, double>>> scalars;
  std::vector<int64_t> launch_dims;
  bool adjoint = false;
  int frame_fault = 0;  ///< 0: none; else a fault in the frame itself (see apply_frame_fault)
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
  std::uniform_int_distribution<int> what(0, 14), small(0, 5);
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
    case 11: {  // launch dims just past (or within) the first array
      int64_t e = s.args.empty() || s.args[0].dims.empty() ? 3 : s.args[0].dims[0];
      s.launch_dims = {e + small(rng) - 2};
      break;
    }
    case 12: if (auto* b = any_buf(s.rets)) { if (!b->dims.empty()) b->dims[0] = std::max<int64_t>(0, b->dims[0] - 1 - small(rng) % 2); } break;
    case 13: if (auto* b = any_buf(small(rng) % 2 ? s.args : s.rets)) b->null_data = true; break;
    case 14: s.frame_fault = 1 + small(rng); break;
    case 10: {  // a vmap batch dim on everything
      int64_t b = 1 + small(rng) % 3;
      for (auto* v : {&s.args, &s.rets})
        for (auto& x : *v) x.dims.insert(x.dims.begin(), b);
    }
  }
}

int bytes_of(xla::DataType t) {
  switch (t) {
    case xla::kF64: case xla::kS64: case xla::kC64: return 8;
    case xla::kF16: return 2;
    case xla::kPred: return 1;
    default: return 4;
  }
}

int64_t count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= std::max<int64_t>(d, 0);
  return n;
}

/// The frame faults of issue 13 (item 8), now refused: each makes the call fail cleanly.
void apply_frame_fault(xla::CallFrame* f, int fault, xla::ExtensionBase* cycle) {
  switch (fault) {
    case 1: f->args.size += int64_t(1) << 32; break;  // int() of it would be the true count
    case 2: f->rets.size = (int64_t(1) << 31) + f->rets.size; break;
    case 3:
      cycle[0] = {sizeof(xla::ExtensionBase), xla::ExtensionType(5), &cycle[1]};
      cycle[1] = {sizeof(xla::ExtensionBase), xla::ExtensionType(6), &cycle[0]};
      f->extension_start = &cycle[0];
      break;
    case 4: f->attrs.size = -1; break;
    case 5: f->struct_size = 8; break;
    default: break;  // 6: none (keeps the other mutations' odds)
  }
}

/// A buffer of the frame with its spec.
struct Buf {
  const BufSpec* spec;
  std::unique_ptr<test::GuardedBuffer> mem;
  void* data() const { return spec->null_data ? nullptr : mem->data(); }
};

/// Element (b, i) of a buffer for parameter rank `prank` (array dims + inner dims) in a call
/// with batch dims `call_batch`: its offset in elements of `lanes` scalars, broadcasting a
/// missing or size-1 batch dim as the handler does.
int64_t offset(const BufSpec& s, int prank, const std::vector<int64_t>& call_batch, int64_t b, int64_t i, int lanes) {
  const int br = int(s.dims.size()) - prank;
  int64_t per = 1;
  for (size_t d = size_t(br); d < s.dims.size(); ++d) per *= s.dims[d];
  int64_t off = 0, stride = per, rest = b;
  std::vector<int64_t> idx(call_batch.size());
  for (size_t d = call_batch.size(); d-- > 0;) {
    idx[d] = rest % call_batch[d];
    rest /= call_batch[d];
  }
  for (int d = br - 1; d >= 0; --d) {
    const int64_t cd = int64_t(call_batch.size()) - br + d;
    if (s.dims[size_t(d)] != 1) off += idx[size_t(cd)] * stride;
    stride *= s.dims[size_t(d)];
  }
  return off + i * lanes;
}

/// The elementwise demo kernels' forward values (saxpy, daxpy, iterate, damp) and saxpy's and
/// daxpy's gradients, checked for every batch item and thread of a frame that ran; elements
/// past the launch keep their sentinel (forward) or are zero (gradients).
struct Checker {
  const Spec& s;
  std::vector<Buf>& args;
  std::vector<Buf>& rets;
  int checked = 0;

  bool run() {
    const bool f64 = s.kernel == "demo::daxpy" || s.kernel == "demo::iterate";
    const bool is_damp = s.kernel == "demo::damp";
    if (s.kernel != "demo::saxpy" && s.kernel != "demo::daxpy" && s.kernel != "demo::iterate" && !is_damp)
      return true;
    if (s.adjoint && (s.kernel == "demo::iterate" || is_damp)) return true;
    const int lanes = is_damp ? 3 : 1, prank = is_damp ? 2 : 1;
    // Batch dims: the first result's leading dims; the launch: launch_dims, else args[0]'s.
    const BufSpec& r0 = *rets[0].spec;
    std::vector<int64_t> batch(r0.dims.begin(), r0.dims.end() - prank);
    int64_t items = count(batch), launch = 0;
    if (!s.launch_dims.empty()) launch = count(s.launch_dims);
    else launch = args[0].spec->dims[args[0].spec->dims.size() - size_t(prank)];
    const int64_t extent = r0.dims[r0.dims.size() - size_t(prank)];
    auto in = [&](size_t a, int64_t b, int64_t i, int lane) {
      const int64_t o = offset(*args[a].spec, prank, batch, b, i, lanes) + lane;
      return f64 ? args[a].mem->as<double>()[o] : double(args[a].mem->as<float>()[o]);
    };
    for (int64_t b = 0; b < items; ++b)
      for (size_t r = 0; r < rets.size(); ++r)
        for (int64_t i = 0; i < extent; ++i)
          for (int lane = 0; lane < lanes; ++lane) {
            const int64_t o = offset(*rets[r].spec, prank, batch, b, i, lanes) + lane;
            const double got = f64 ? rets[r].mem->as<double>()[o] : double(rets[r].mem->as<float>()[o]);
            double want;
            if (i >= launch) {
              if (!s.adjoint) {  // untouched: the sentinel's bytes
                uint8_t byte;
                std::memcpy(&byte, static_cast<char*>(rets[r].mem->data()) + o * (f64 ? 8 : 4), 1);
                if (byte != 0x5a) return false;
                continue;
              }
              want = 0;
            } else if (s.adjoint) {  // saxpy / daxpy: dx = a g, dy = g (g: the 4th argument)
              const double a = s.kernel == "demo::saxpy" ? 2.0 : -1.0, g = in(3, b, i, 0);
              want = r == 0 ? a * g : g;
            } else if (s.kernel == "demo::saxpy" || s.kernel == "demo::daxpy") {
              const double a = s.kernel == "demo::saxpy" ? 2.0 : -1.0;
              want = a * in(0, b, i, 0) + in(1, b, i, 0);
            } else if (s.kernel == "demo::iterate") {
              double y = in(0, b, i, 0);
              for (int k = 0; k < 3; ++k) y = y * in(1, b, i, 0) + std::sin(y);
              want = y;
            } else {
              want = in(0, b, i, lane) * 0.0625;  // 0.5^4; |v| < 10: no clamp
            }
            const double tol = f64 ? 1e-12 : 1e-5;
            if (!(std::fabs(got - want) <= tol * (1 + std::fabs(want)))) return false;
            ++checked;
          }
    return true;
  }
};

}  // namespace

TEST_CASE("fuzz: ten thousand random frames over exactly sized, guarded buffers run correctly or fail cleanly") {
  std::mt19937 rng(20240611);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  int ran = 0, failed = 0, values = 0, faults = 0;
  constexpr int kFrames = 10000;
  for (int iter = 0; iter < kFrames; ++iter) {
    Spec s = valid_spec(rng);
    int mutations = std::uniform_int_distribution<int>(0, 3)(rng);
    for (int m = 0; m < mutations; ++m) mutate(s, rng);
    FrameBuilder b;
    std::vector<Buf> args, rets;
    auto make = [&](const BufSpec& spec, bool input) {
      Buf buf{&spec, std::make_unique<test::GuardedBuffer>(size_t(count(spec.dims)) * size_t(bytes_of(spec.dtype)))};
      // Integer buffers (springs' pair indices) stay zero, so indices are in bounds; floats
      // get values; results a sentinel that shows what the kernel left untouched.
      const int64_t n = count(spec.dims);
      if (spec.dtype == xla::kF32 && input)
        for (int64_t i = 0; i < n; ++i) buf.mem->as<float>()[i] = float(value(rng));
      else if (spec.dtype == xla::kF64 && input)
        for (int64_t i = 0; i < n; ++i) buf.mem->as<double>()[i] = value(rng);
      else if (!input)
        std::memset(buf.mem->data(), 0x5a, buf.mem->bytes());
      return buf;
    };
    for (auto& a : s.args) args.push_back(make(a, true));
    for (auto& r : s.rets) rets.push_back(make(r, false));
    for (auto& a : args) b.arg(a.spec->dtype, a.spec->dims, a.data());
    for (auto& r : rets) b.ret(r.spec->dtype, r.spec->dims, r.data());
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
    const bool prepare = std::uniform_int_distribution<int>(0, 30)(rng) == 0;
    if (prepare) b.stage(xla::kPrepare);
    xla::CallFrame* frame = b.frame();
    xla::ExtensionBase cycle[2];
    apply_frame_fault(frame, s.frame_fault, cycle);
    if (s.frame_fault >= 1 && s.frame_fault <= 5) ++faults;
    auto o = call(s.adjoint ? &kjit_xla_adjoint_cpu : &kjit_xla_launch_cpu, frame);
    if (o.ok) {
      ++ran;
      CHECK_MESSAGE(!(s.frame_fault >= 1 && s.frame_fault <= 5), "a faulty frame ran: fault ", s.frame_fault);
      if (!prepare) {
        Checker c{s, args, rets};
        CHECK_MESSAGE(c.run(), "wrong outputs for frame ", iter, " of ", s.kernel, s.adjoint ? " (adjoint)" : "");
        values += c.checked;
      }
    } else {
      ++failed;
      CHECK_MESSAGE((o.code == xla::kInvalidArgument || o.code == xla::kNotFound ||
                     (o.code == xla::kFailedPrecondition && s.frame_fault == 5)),
                    o.message);
      CHECK_FALSE(o.message.empty());
    }
  }
  MESSAGE("fuzzed ", kFrames, " frames: ran ", ran, " (", values, " output values checked), rejected ", failed,
          " (", faults, " with frame faults)");
  CHECK(ran > 1000);
  CHECK(failed > 1000);
  CHECK(values > 5000);
}
