// The cpu launch policy (inline or pooled, from measured per-index costs) and its timing.
#include "kjit/runtime/internal/cpu_dispatch.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "kjit/runtime/internal/thread_pool.hpp"

namespace kjit::detail {

namespace {

using Clock = std::chrono::steady_clock;

int64_t elapsed_ns(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

struct PooledCall {
  CpuEntry entry;
  void** params;
  PrivateLaunch* private_launch;    ///< null, or each thread's parameters with its own copies
  std::atomic<int64_t> work_ns{0};  ///< summed over chunks: the work alone, no waiting
};

void run_timed_chunk(void* context, int64_t begin, int64_t end) {
  auto* call = static_cast<PooledCall*>(context);
  Clock::time_point t0 = Clock::now();
  call->entry(call->private_launch ? call->private_launch->params_for_this_thread() : call->params, begin, end);
  call->work_ns.fetch_add(elapsed_ns(t0), std::memory_order_relaxed);
}

}  // namespace

bool use_pool(float ns_per_index, int64_t size, unsigned threads) {
  if (threads <= 1 || size < 2) return false;
  if (ns_per_index <= 0) return size > kUnmeasuredInlineMax;
  return double(ns_per_index) * double(size) >= kPoolMinWorkNs;
}

int64_t pool_grain(float ns_per_index) {
  if (ns_per_index <= 0) return 512;
  return std::max<int64_t>(512, int64_t(10000.0 / double(ns_per_index)));
}

float updated_cost(float previous, float sample) {
  return previous <= 0 ? sample : 0.75f * previous + 0.25f * sample;
}

void run_cpu_entry(CpuEntry entry, void** params, int64_t size, CpuCost& cost, const CpuPrivateAdds* adds,
                   int64_t align, bool in_order) {
  if (size <= 0) return;
  ThreadPool& pool = ThreadPool::global();
  const float ns = cost.ns_per_index.load(std::memory_order_relaxed);
  const bool pooled = !in_order && use_pool(ns, size, pool.size());
  // Arrays added into plainly in place: all of an in-order launch's (index order: a private
  // copy would add each element's sum at once, which rounds otherwise — Warp's cpu order), and
  // those every thread adds to at its own element only.
  PlainAdds plain(adds, params, in_order);
  params = plain.params();
  std::optional<PrivateLaunch> private_launch;
  if (adds && !adds->targets.empty() && !in_order) {
    private_launch.emplace(*adds, params, size, pooled ? pool.size() : 1u);
    if (!private_launch->active()) private_launch.reset();
  }
  PrivateLaunch* p = private_launch ? &*private_launch : nullptr;
  // Launches below kMinMeasuredSize are dominated by the fixed cost of a call and are not
  // measured, so they read no clock either (two reads are a tenth of a small launch).
  const bool measured = size >= kMinMeasuredSize;
  int64_t work_ns;
  if (pooled) {
    PooledCall call{entry, params, p};
    pool.parallel_for(size, pool_grain(ns), &run_timed_chunk, &call, align);
    work_ns = call.work_ns.load(std::memory_order_relaxed);
  } else {
    Clock::time_point t0 = measured ? Clock::now() : Clock::time_point();
    entry(p ? p->params_for_this_thread() : params, 0, size);
    work_ns = measured ? elapsed_ns(t0) : 0;
  }
  if (p) p->merge();
  // Racing launches of one kernel may each store; any of their averages will do.
  if (!measured) return;
  cost.ns_per_index.store(updated_cost(ns, float(double(work_ns) / double(size))),
                          std::memory_order_relaxed);
}

}  // namespace kjit::detail
