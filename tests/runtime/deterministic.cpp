// Deterministic launches (LaunchOptions::deterministic, KJIT_DETERMINISTIC): a scatter-add of
// 10^6 floats, the slots a counter hands out, and a gather's adjoint give the same bits with
// 1, 2 and 8 pool threads (each run in its own process, KJIT_NUM_THREADS being read at start).
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "test_support.hpp"
#include "user_error.hpp"

namespace deterministic_kernels {
using namespace kjit::dsl;
KJIT_MODULE(runtime_deterministic)

KJIT_KERNEL(scatter_add, (Array<Float> values, Array<Int> bin, Array<Float> sums)) {
  Int i = tid();
  atomic_add(sums, bin[i], values[i]);
}
/// Every thread takes a slot from a counter and writes its index there.
KJIT_KERNEL(take_slot, (Array<Int> counter, Array<Int> order)) {
  Int i = tid();
  Int slot = atomic_add(counter, 0, 1);
  order[slot] = i;
}
/// y[i] = x[idx[i]]^2: its adjoint adds into x's gradient from many threads.
KJIT_KERNEL(gather_square, (Array<Float> x, Array<Int> idx, Array<Float> y)) {
  Int i = tid();
  Float v = x[idx[i]];
  y[i] = v * v;
}
KJIT_KERNEL(no_atomics, (Array<Float> x, Array<Float> y)) {
  Int i = tid();
  y[i] = x[i] * 2.0f;
}
}  // namespace deterministic_kernels

using namespace kjit;
using namespace deterministic_kernels;

namespace {
const int64_t kN = 1000000, kBins = 97;

struct Inputs {
  NdArray values, bins, idx;
  Inputs() {
    std::vector<float> v(static_cast<size_t>(kN));
    std::vector<int32_t> b(static_cast<size_t>(kN)), g(static_cast<size_t>(kN));
    uint32_t s = 12345;
    for (int64_t i = 0; i < kN; ++i) {
      s = s * 1664525u + 1013904223u;
      // Magnitudes over 12 decades: the sum's bits depend on the order of the adds.
      v[size_t(i)] = float(int32_t(s >> 8) - (1 << 23)) * std::pow(10.0f, float(int(s % 13) - 6));
      b[size_t(i)] = int32_t((s >> 3) % uint32_t(kBins));
      g[size_t(i)] = int32_t((s >> 5) % 1000u);
    }
    values = from_vector(v);
    bins = from_vector(b);
    idx = from_vector(g);
  }
};

/// The three results' bits, in one vector.
std::vector<uint32_t> run_all(bool deterministic) {
  Inputs in;
  LaunchOptions o;
  o.deterministic = deterministic;
  NdArray sums = zeros<float>({kBins});
  launch(scatter_add.def(), kN, {in.values, in.bins, sums}, o);
  NdArray counter = zeros<int32_t>({1}), order = zeros<int32_t>({kN});
  launch(take_slot.def(), kN, {counter, order}, o);
  NdArray x = zeros<float>({1000}), y = zeros<float>({kN});
  x.fill(1.5f);
  NdArray gx = zeros<float>({1000}), gy = zeros<float>({kN});
  gy.fill(1.0f);
  launch_adjoint(gather_square, kN, {x, in.idx, y}, {gx, {}, gy}, o);
  std::vector<uint32_t> bits;
  for (float f : sums.to_vector<float>()) { uint32_t b; std::memcpy(&b, &f, 4); bits.push_back(b); }
  for (int32_t k : order.to_vector<int32_t>()) bits.push_back(uint32_t(k));
  for (float f : gx.to_vector<float>()) { uint32_t b; std::memcpy(&b, &f, 4); bits.push_back(b); }
  return bits;
}

std::vector<uint32_t> in_process(int threads, const std::string& extra_env) {
  test::TempDir dir("deterministic");
  const std::string file = dir / "bits.txt";
  std::string output;
  int rc = test::run_test_case("KJIT_NUM_THREADS=" + std::to_string(threads) + " " + extra_env +
                                   " KJIT_DETERMINISTIC_FILE=" + file, "deterministic dump", &output);
  INFO(output);
  REQUIRE(rc == 0);
  std::ifstream f(file);
  std::vector<uint32_t> bits;
  for (uint32_t v; f >> v;) bits.push_back(v);
  return bits;
}
}  // namespace

// Run by the tests below in other processes.
TEST_CASE("deterministic dump" * doctest::skip(std::getenv("KJIT_DETERMINISTIC_FILE") == nullptr)) {
  std::ofstream f(std::getenv("KJIT_DETERMINISTIC_FILE"));
  for (uint32_t v : run_all(std::getenv("KJIT_DUMP_OPTION") != nullptr)) f << v << "\n";
}

TEST_CASE("deterministic launches give the same bits for 1, 2 and 8 threads: scatter-add, counter slots, adjoint") {
  // The launch option, then the environment variable alone.
  for (const std::string env : {"KJIT_DUMP_OPTION=1", "KJIT_DETERMINISTIC=1"}) {
    INFO(env);
    std::vector<uint32_t> one = in_process(1, env), two = in_process(2, env), eight = in_process(8, env);
    REQUIRE(one.size() == size_t(kBins + kN + 1000));
    CHECK(one == two);
    CHECK(one == eight);
    // The counter hands out slots in index order.
    bool in_order = true;
    for (int64_t k = 0; k < kN; ++k) in_order = in_order && one[size_t(kBins + k)] == uint32_t(k);
    CHECK(in_order);
  }
}

TEST_CASE("set_deterministic, and the cost of in-order launches on this machine") {
  CHECK_FALSE(deterministic_launches());
  set_deterministic(true);
  CHECK(deterministic_launches());
  set_deterministic(false);
  Inputs in;
  auto time_ms = [&](bool det) {
    LaunchOptions o;
    o.deterministic = det;
    NdArray sums = zeros<float>({kBins});
    launch(scatter_add.def(), kN, {in.values, in.bins, sums}, o);  // warm
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 5; ++r) launch(scatter_add.def(), kN, {in.values, in.bins, sums}, o);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 5;
  };
  MESSAGE("scatter-add of 10^6 floats: " << time_ms(false) << " ms pooled, " << time_ms(true) << " ms deterministic");
}

TEST_CASE("a kernel without atomics runs as usual under deterministic launches") {
  // Same values either way (no order to fix).
  NdArray x = from_vector(std::vector<float>(1 << 16, 3.0f)), y = zeros<float>({1 << 16});
  LaunchOptions o;
  o.deterministic = true;
  launch(no_atomics.def(), 1 << 16, {x, y}, o);
  CHECK(y.to_vector<float>()[12345] == 6.0f);
}
