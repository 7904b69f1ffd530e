// The cpu device's pooled work on a shared OpenMP team (kjit::share_cpu_threads): every chunk
// runs inside the team's parallel region under its team number as slot, launches give the
// results of kjit's own pool, and a library that is not a loaded OpenMP runtime is refused.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>
#include <numeric>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/cpu_threads.hpp"
#include "kjit/runtime/internal/thread_pool.hpp"

using namespace kjit;
using namespace kjit::detail;

namespace {

/// GCC's OpenMP runtime, loaded into this process as a torch process has it (the test binary
/// does not link it, so that only this file's cases run on it).
constexpr const char* kLibgomp = "libgomp.so.1";

struct Omp {
  int (*in_parallel)() = nullptr;
  int (*thread_num)() = nullptr;
};

Omp load_libgomp() {
  void* handle = dlopen(kLibgomp, RTLD_NOW | RTLD_GLOBAL);
  REQUIRE_MESSAGE(handle, "libgomp.so.1 (GCC's OpenMP runtime) is not installed: ", dlerror());
  Omp omp;
  omp.in_parallel = reinterpret_cast<int (*)()>(dlsym(handle, "omp_in_parallel"));
  omp.thread_num = reinterpret_cast<int (*)()>(dlsym(handle, "omp_get_thread_num"));
  REQUIRE_MESSAGE(bool(omp.in_parallel && omp.thread_num), "libgomp.so.1 lacks omp_in_parallel or omp_get_thread_num");
  return omp;
}

struct TeamChunks {
  const Omp* omp;
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> seen;
  std::vector<unsigned> slots;
  int outside_region = 0;   ///< chunks that ran outside a parallel region
  int slot_mismatches = 0;  ///< chunks whose slot was not the thread's team number
};

void record_team_chunk(void* context, int64_t begin, int64_t end) {
  auto* c = static_cast<TeamChunks*>(context);
  const bool inside = c->omp->in_parallel() != 0;
  const bool slot_is_number = ThreadPool::current_slot() == unsigned(c->omp->thread_num());
  std::lock_guard<std::mutex> lock(c->mutex);
  c->seen.emplace_back(begin, end);
  c->slots.push_back(ThreadPool::current_slot());
  c->outside_region += !inside;
  c->slot_mismatches += !slot_is_number;
}

/// Restores kjit's own threads when a case ends, however it ends.
struct OwnThreadsAfter {
  ~OwnThreadsAfter() { use_own_cpu_threads(); }
};

}  // namespace

namespace cpu_threads_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_cpu_threads)
KJIT_KERNEL(iota, (Array<Int> out)) { out[tid()] = tid(); }
KJIT_KERNEL(sums, (Array<Float> x, Array<Int> count, Array<Float> total)) {
  atomic_add(count, 0, 1);
  atomic_add(total, tid() % 4, x[tid()]);
}
}  // namespace cpu_threads_tests

TEST_CASE("share_cpu_threads refuses what is not a loaded OpenMP runtime, changing nothing") {
  OwnThreadsAfter restore;
  CHECK(cpu_threads() == "kjit");
  CHECK_THROWS_WITH_AS(share_cpu_threads("/nonexistent/libgomp.so.1"),
                       "kjit::share_cpu_threads: '/nonexistent/libgomp.so.1' is not loaded in this process (kjit "
                       "shares an OpenMP runtime that is already running, never loads one)",
                       Error);
  CHECK(cpu_threads() == "kjit");
  // libm is loaded (the runtime links it) but is not an OpenMP runtime.
  CHECK_THROWS_WITH_AS(share_cpu_threads("libm.so.6"),
                       "kjit::share_cpu_threads: 'libm.so.6' is not a GCC OpenMP runtime (libgomp): it has no "
                       "GOMP_parallel and omp_get_thread_num",
                       Error);
  CHECK(cpu_threads() == "kjit");
  CHECK(ThreadPool::global().team() == nullptr);
}

TEST_CASE("a pool's jobs on a shared OpenMP team: every chunk inside the region, under its team number") {
  const Omp omp = load_libgomp();
  OwnThreadsAfter restore;
  share_cpu_threads(kLibgomp);
  CHECK(cpu_threads() == kLibgomp);
  const ThreadPool::Team* team = ThreadPool::global().team();
  REQUIRE(team != nullptr);
  // A pool of its own on the same team: three threads whatever this machine has.
  ThreadPool pool(3);
  pool.use_team(team);
  for (int64_t n : {int64_t(65), int64_t(100003), int64_t(1) << 20}) {
    CAPTURE(n);
    TeamChunks c;
    c.omp = &omp;
    pool.parallel_for(n, 64, &record_team_chunk, &c);
    CHECK(c.outside_region == 0);
    CHECK(c.slot_mismatches == 0);
    for (unsigned s : c.slots) CHECK(s < pool.size());
    std::sort(c.seen.begin(), c.seen.end());
    int64_t at = 0;
    for (auto [begin, end] : c.seen) {
      REQUIRE(begin == at);
      REQUIRE(begin % 64 == 0);
      at = end;
    }
    CHECK(at == n);
  }
  CHECK(ThreadPool::current_slot() == 0);  // the submitter's slot is its own again
}

TEST_CASE("launches on a shared OpenMP team give kjit's own pool's results") {
  load_libgomp();
  OwnThreadsAfter restore;
  const int64_t n = 300001;  // past the unmeasured limit: pooled where there are two threads
  std::vector<float> xs(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xs[size_t(i)] = float(i % 8);  // sums of whole numbers below 2^24: exact in any order
  auto x = from_vector(xs, {n});
  auto run = [&] {
    auto out = zeros<int32_t>({n});
    auto count = zeros<int32_t>({1});
    auto total = zeros<float>({4});
    launch(cpu_threads_tests::iota, n, out);
    launch(cpu_threads_tests::sums, n, x, count, total);
    return std::make_tuple(out.to_vector<int32_t>(), count.to_vector<int32_t>()[0], total.to_vector<float>());
  };
  const auto own = run();
  std::vector<int32_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  REQUIRE(std::get<0>(own) == ids);
  share_cpu_threads(kLibgomp);
  for (int rep = 0; rep < 3; ++rep) {  // unmeasured, then measured
    CAPTURE(rep);
    const auto shared = run();
    CHECK(std::get<0>(shared) == std::get<0>(own));  // every index once: 0, 1, ..., n - 1
    CHECK(std::get<1>(shared) == n);
    CHECK(std::get<2>(shared) == std::get<2>(own));
  }
  use_own_cpu_threads();
  CHECK(cpu_threads() == "kjit");
  CHECK(std::get<2>(run()) == std::get<2>(own));
}
