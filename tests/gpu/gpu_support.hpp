// Helpers of the gpu suite: arrays from host data on any device, results back as doubles,
// and comparisons with stated tolerances.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"

namespace kjit::gpu_test {

/// Tolerances of GPU results against the cpu's: |gpu - cpu| <= rtol * max(|cpu|, floor), with
/// floor = 1e-3 * max |cpu| over the array (so sums that cancel are judged against the size of
/// their terms). float32 differs by FMA contraction, atomic summation order and libm versus
/// CUDA math (a few ulp, amplified by a few loop iterations); float64 by the same, far less.
constexpr double kRtolF32 = 1e-4;
constexpr double kRtolF64 = 1e-9;

/// Every scalar of `a` (copied to the host) as a double, in row-major order.
inline std::vector<double> scalars_of(const NdArray& a) {
  NdArray host = a.to(Device::cpu());
  Stream::default_for(a.device()).synchronize();
  const ir::Scalar s = host.element().scalar;
  const size_t bytes = size_t(ir::scalar_bytes(s));
  const size_t count = size_t(host.size()) * host.element_bytes() / bytes;
  const auto* p = static_cast<const unsigned char*>(host.data());
  std::vector<double> out(count);
  for (size_t i = 0; i < count; ++i) {
    switch (s) {
      case ir::Scalar::F32: { float v; std::memcpy(&v, p + i * 4, 4); out[i] = v; break; }
      case ir::Scalar::F64: { double v; std::memcpy(&v, p + i * 8, 8); out[i] = v; break; }
      case ir::Scalar::I32: { int32_t v; std::memcpy(&v, p + i * 4, 4); out[i] = v; break; }
      default: FAIL("unexpected element type"); break;
    }
  }
  return out;
}

/// Checks `gpu` against `cpu` with the tolerance of `scalar` (integers exactly); `what` names
/// the array in failure messages, with the first mismatching index.
inline void check_close(const std::vector<double>& gpu, const std::vector<double>& cpu,
                        ir::Scalar scalar, const std::string& what) {
  REQUIRE_MESSAGE(gpu.size() == cpu.size(), what);
  double rtol = scalar == ir::Scalar::F32 ? kRtolF32 : scalar == ir::Scalar::F64 ? kRtolF64 : 0.0;
  double peak = 0;
  for (double v : cpu) peak = std::max(peak, std::fabs(v));
  double floor = 1e-3 * peak;
  double worst = 0;
  size_t worst_at = 0, bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    double err = std::fabs(gpu[i] - cpu[i]);
    double allowed = rtol * std::max(std::fabs(cpu[i]), floor);
    if (err > allowed) ++bad;
    if (err > worst) worst = err, worst_at = i;
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << cpu.size()
                               << " values differ beyond tolerance; worst at [" << worst_at
                               << "]: gpu " << gpu[worst_at] << " cpu " << cpu[worst_at]);
}

/// Uniform random floats from a fixed seed.
template <class T>
std::vector<T> random_values(size_t n, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = T(u(rng));
  return v;
}

}  // namespace kjit::gpu_test
