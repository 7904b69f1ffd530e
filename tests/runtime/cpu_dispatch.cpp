// The cpu launch policy: small or cheap launches stay on the calling thread (the pool would
// cost more than it saves), large ones go to the pool, and the per-index cost the decision
// reads is measured from the kernel's own launches.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/internal/cpu_dispatch.hpp"
#include "kjit/runtime/internal/thread_pool.hpp"

using namespace kjit;
using namespace kjit::detail;

TEST_CASE("the pool is used only when the measured work outweighs waking it") {
  CHECK_FALSE(use_pool(0, 1 << 20, 1));  // one thread: nothing to share
  CHECK_FALSE(use_pool(0, 1000, 2));     // unmeasured and small: inline, and measured
  CHECK_FALSE(use_pool(0, kUnmeasuredInlineMax, 2));
  CHECK(use_pool(0, kUnmeasuredInlineMax + 1, 2));
  // saxpy-like: 0.5 ns an index. 64K indices are 33 µs of work: inline; 1M are 0.5 ms: pool.
  CHECK_FALSE(use_pool(0.5f, 65536, 2));
  CHECK(use_pool(0.5f, 1 << 20, 2));
  // An expensive body (a 16-step loop, 100 ns an index) pays for the pool from 500 indices.
  CHECK_FALSE(use_pool(100.0f, 400, 2));
  CHECK(use_pool(100.0f, 600, 2));
  CHECK(pool_grain(0) == 512);
  CHECK(pool_grain(0.5f) == 20000);  // ~10 µs a chunk
  CHECK(pool_grain(100.0f) == 512);
  CHECK(updated_cost(0, 3.0f) == 3.0f);
  CHECK(updated_cost(4.0f, 8.0f) == 5.0f);
}

namespace {
std::atomic<int64_t> g_indices{0};
std::atomic<int> g_calls{0};
void counting_entry(void** params, int64_t begin, int64_t end) {
  g_indices += end - begin;
  ++g_calls;
  // Some work per index, so that the measured cost is not zero.
  volatile double x = 0;
  for (int64_t i = begin; i < end; ++i) x = x + double(i) * 0.5;
  (void)params;
}
}  // namespace

TEST_CASE("run_cpu_entry covers the range exactly once, inline or pooled, and measures it") {
  CpuCost cost;
  g_indices = 0;
  g_calls = 0;
  run_cpu_entry(&counting_entry, nullptr, 100, cost);  // too small to measure
  CHECK(g_indices == 100);
  CHECK(g_calls == 1);
  CHECK(cost.ns_per_index.load() == 0);
  g_indices = 0;
  g_calls = 0;
  run_cpu_entry(&counting_entry, nullptr, 5000, cost);  // unmeasured, small: one inline call
  CHECK(g_indices == 5000);
  CHECK(g_calls == 1);
  CHECK(cost.ns_per_index.load() > 0);
  cost.ns_per_index = 1000.0f;  // as if measured expensive: the pool takes it in chunks
  g_indices = 0;
  g_calls = 0;
  run_cpu_entry(&counting_entry, nullptr, 5000, cost);
  CHECK(g_indices == 5000);
  if (ThreadPool::global().size() > 1) CHECK(g_calls > 1);
  CHECK(cost.ns_per_index.load() < 1000.0f);  // the real (cheaper) cost pulls it down
  CpuCost copy = cost;  // copies start unmeasured
  CHECK(copy.ns_per_index.load() == 0);
}

namespace {
struct Chunks {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> seen;
};
void record_chunk(void* context, int64_t begin, int64_t end) {
  auto* c = static_cast<Chunks*>(context);
  std::lock_guard<std::mutex> lock(c->mutex);
  c->seen.emplace_back(begin, end);
}
}  // namespace

TEST_CASE("pool chunks start at multiples of 64 indices and cover the range once") {
  // A cpu entry's lane blocks then start at cache-line boundaries of its arrays (whole lines
  // for non-temporal block stores).
  ThreadPool pool(3);
  for (int64_t n : {int64_t(1000), int64_t(100003), int64_t(1) << 20}) {
    for (int64_t grain : {int64_t(1), int64_t(100), int64_t(5000)}) {
      CAPTURE(n);
      CAPTURE(grain);
      Chunks c;
      pool.parallel_for(n, grain, &record_chunk, &c);
      std::sort(c.seen.begin(), c.seen.end());
      int64_t at = 0;
      for (auto [begin, end] : c.seen) {
        REQUIRE(begin == at);
        REQUIRE(begin % 64 == 0);
        REQUIRE(end > begin);
        at = end;
      }
      CHECK(at == n);
    }
  }
}

TEST_CASE("a pool's jobs from several submitters, back to back and after idle gaps, each run once") {
  // Workers poll for the next job for a while after each (then sleep): jobs that follow at
  // once meet polling workers, jobs after a gap sleeping ones; a pool destroyed right after a
  // job stops its polling workers.
  for (int round = 0; round < 3; ++round) {
    ThreadPool pool(3);
    std::vector<std::thread> submitters;
    std::atomic<int> failures{0};
    for (int t = 0; t < 3; ++t)
      submitters.emplace_back([&, t] {
        for (int job = 0; job < 60; ++job) {
          const int64_t n = 64 * (1 + (job * 7 + t * 13) % 50);
          Chunks c;
          pool.parallel_for(n, 64, &record_chunk, &c);
          int64_t covered = 0;
          for (auto [begin, end] : c.seen) covered += end - begin;
          if (covered != n) ++failures;
          if (job % 20 == 19) std::this_thread::sleep_for(std::chrono::microseconds(300 * (t + 1)));
        }
      });
    for (std::thread& s : submitters) s.join();
    CHECK(failures == 0);
  }
}

namespace dispatch_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_cpu_dispatch)
KJIT_KERNEL(iota, (Array<Int> out)) { out[tid()] = tid(); }
KJIT_KERNEL(contended, (Array<Int> ints, Array<UInt64> wide, Array<Float> floats, Array<Vec3f> vecs)) {
  Int i = tid();
  atomic_add(ints, 0, 1);
  atomic_sub(ints, 1, 2);
  atomic_or(ints, 2, Int(1) << (i % 31));
  atomic_xor(ints, 3, i);
  atomic_add(wide, 0, UInt64(i));
  atomic_add(floats, 0, 1.0f);
  atomic_add(vecs, 0, Vec3f(1.0f, 2.0f, -1.0f));
}
}  // namespace dispatch_tests

TEST_CASE("launches of every size write every index once, from small to pooled") {
  for (int64_t n : {1, 7, 1023, 1024, 65536, 65537, 300000}) {
    CAPTURE(n);
    auto out = zeros<int32_t>({n});
    for (int rep = 0; rep < 3; ++rep) {  // unmeasured, then measured
      launch(dispatch_tests::iota, n, out);
      std::vector<int32_t> v = out.to_vector<int32_t>();
      for (int64_t i = 0; i < n; ++i) REQUIRE(v[size_t(i)] == int32_t(i));
      out.zero();
    }
  }
}

TEST_CASE("atomics stay exact when a launch is large enough for the pool") {
  // Small launches now run on the calling thread, so the suite's small atomic tests no longer
  // contend: this one is sized to be pooled (past the unmeasured limit, and ~1 ms of work).
  const int64_t n = 300000;
  REQUIRE(use_pool(0, n, 2));
  int32_t xor_all = 0;
  for (int64_t i = 0; i < n; ++i) xor_all ^= int32_t(i);
  for (int rep = 0; rep < 3; ++rep) {
    CAPTURE(rep);
    auto ints = zeros<int32_t>({4}), wide = zeros<uint64_t>({1}), floats = zeros<float>({1});
    auto vecs = zeros<vec3f>({1});
    launch(dispatch_tests::contended, n, ints, wide, floats, vecs);
    std::vector<int32_t> iv = ints.to_vector<int32_t>();
    CHECK(iv[0] == n);
    CHECK(iv[1] == -2 * n);
    CHECK(iv[2] == 0x7fffffff);
    CHECK(iv[3] == xor_all);
    CHECK(wide.to_vector<uint64_t>()[0] == uint64_t(n) * uint64_t(n - 1) / 2);
    CHECK(floats.to_vector<float>()[0] == float(n));  // whole numbers below 2^24: exact in any order
    vec3f v = vecs.to_vector<vec3f>()[0];
    CHECK(v.c[0] == float(n));
    CHECK(v.c[1] == float(2 * n));
    CHECK(v.c[2] == -float(n));
  }
}
