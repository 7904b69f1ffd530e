// On cuda:0: random streams from rand_init(seed, offset) equal the cpu's — bit for bit for the
// integer draws and plain randf (integer code and an exact scaling), within stated tolerances
// for randf(lo, hi) (FMA contraction) and randn (CUDA's logf, cosf against libm's).
#include <cstring>

#include "gpu_support.hpp"

namespace gpu_random {
using namespace kjit::dsl;
KJIT_MODULE(gpu_random)

constexpr int kDraws = 8;

/// kDraws draws per thread of each stream, from rand_init(seed, offset + tid) and, for the
/// first column of `single`, rand_init(seed + tid).
KJIT_KERNEL(streams, (Int seed, Int offset, Array<uint32_t, 2> bits, Array<int32_t, 2> ints,
                      Array<float, 2> uniform, Array<float, 2> ranged, Array<float, 2> normal,
                      Array<uint32_t> single)) {
  Int i = tid();
  Var<UInt32> s = rand_init(seed, offset + i);
  For(0, kDraws, [&](Int k) {
    bits(i, k) = randu(s);
    ints(i, k) = randi(s, -1000, 1000);
    uniform(i, k) = randf(s);
    ranged(i, k) = randf(s, -2.0f, 6.0f);
    normal(i, k) = randn(s);
  });
  Var<UInt32> t = rand_init(seed + i);
  single[i] = randu(t);
}
}  // namespace gpu_random

using namespace kjit;
using namespace kjit::gpu_test;

namespace {

constexpr int kThreads = 5000;  // more than one block, not a multiple of it

struct Streams {
  NdArray bits, ints, uniform, ranged, normal, single;
  explicit Streams(const Device& d)
      : bits(NdArray::zeros(ir_type_of<uint32_t>(), {kThreads, gpu_random::kDraws}, d)),
        ints(NdArray::zeros(ir_type_of<int32_t>(), {kThreads, gpu_random::kDraws}, d)),
        uniform(NdArray::zeros(ir_type_of<float>(), {kThreads, gpu_random::kDraws}, d)),
        ranged(NdArray::zeros(ir_type_of<float>(), {kThreads, gpu_random::kDraws}, d)),
        normal(NdArray::zeros(ir_type_of<float>(), {kThreads, gpu_random::kDraws}, d)),
        single(NdArray::zeros(ir_type_of<uint32_t>(), {kThreads}, d)) {}
};

Streams draw(const Device& d, int seed, int offset) {
  Streams s(d);
  launch(gpu_random::streams, kThreads, seed, offset, s.bits, s.ints, s.uniform, s.ranged, s.normal, s.single);
  Stream::default_for(d).synchronize();
  return s;
}

/// The float bits of `v` (so that a bitwise comparison prints integers).
std::vector<uint32_t> float_bits(const std::vector<float>& v) {
  std::vector<uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

/// Counts the values where |gpu - cpu| > tol * max(1, |cpu|).
size_t beyond(const std::vector<float>& gpu, const std::vector<float>& cpu, double tol) {
  size_t bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i)
    bad += std::fabs(double(gpu[i]) - cpu[i]) > tol * std::max(1.0, std::fabs(double(cpu[i])));
  return bad;
}

}  // namespace

TEST_CASE("random streams on cuda:0 equal the cpu's for the same seed and offset") {
  for (auto [seed, offset] : {std::pair<int, int>{1234, 0}, {-7, 100000}}) {
    CAPTURE(seed);
    CAPTURE(offset);
    Streams gpu = draw(Device::cuda(0), seed, offset);
    Streams cpu = draw(Device::cpu(), seed, offset);
    CHECK(gpu.bits.to_vector<uint32_t>() == cpu.bits.to_vector<uint32_t>());
    CHECK(gpu.ints.to_vector<int32_t>() == cpu.ints.to_vector<int32_t>());
    CHECK(gpu.single.to_vector<uint32_t>() == cpu.single.to_vector<uint32_t>());
    CHECK(float_bits(gpu.uniform.to_vector<float>()) == float_bits(cpu.uniform.to_vector<float>()));
    // lo + (hi - lo) * u: NVRTC may fuse it into one FMA; one rounding of a value below 8.
    CHECK(beyond(gpu.ranged.to_vector<float>(), cpu.ranged.to_vector<float>(), 1e-6) == 0);
    // Box-Muller: a few ulp of logf, sqrtf and cosf (|randn| < 6 here).
    CHECK(beyond(gpu.normal.to_vector<float>(), cpu.normal.to_vector<float>(), 1e-5) == 0);
  }
  // Not a constant: other seeds and offsets give other streams.
  Streams a = draw(Device::cuda(0), 1234, 0), b = draw(Device::cuda(0), 1234, 1);
  auto va = a.bits.to_vector<uint32_t>(), vb = b.bits.to_vector<uint32_t>();
  CHECK(va != vb);
  CHECK(va[gpu_random::kDraws] == vb[0]);  // offset 1 at thread 0 is offset 0 at thread 1
}
