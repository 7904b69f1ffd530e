// The persistent cpu thread pool.
#include "kjit/runtime/internal/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <string>

namespace kjit::detail {

struct ThreadPool::Job {
  void (*body)(void*, int64_t, int64_t);
  void* context;
  int64_t n;
  int64_t chunk;
  int64_t chunks;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<int> users{0};         ///< workers inside run_chunks (changed under the pool mutex)
  std::condition_variable finished;  ///< waits with the pool mutex
};

ThreadPool& ThreadPool::global() {
  static ThreadPool* pool = [] {
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
    if (const char* env = std::getenv("KJIT_NUM_THREADS")) {
      long v = std::strtol(env, nullptr, 10);
      if (v >= 1 && v <= 4096) n = unsigned(v);
    }
    return new ThreadPool(n);  // never destroyed: launches may run during static teardown
  }();
  return *pool;
}

namespace {
thread_local unsigned t_slot = 0;  ///< ThreadPool::current_slot(): set by each worker

/// How long an idle worker polls for the next job, and a submitter for its job's last chunks,
/// before sleeping on a condition variable. Waking a sleeping thread costs a futex call and
/// a trip through the scheduler, tens of microseconds on a virtual machine: against a pooled
/// launch's 50 µs or more of work (kPoolMinWorkNs) that is most of the second thread's share,
/// and a caller launching in a loop (a Python training step, a rollout) pays it every time.
/// Spinning at most this long after a pooled job costs at most a fraction of the job's own
/// work; the spinner yields as it polls, so a busy machine's other threads keep the core.
constexpr std::chrono::microseconds kSpin{50};

/// Polls `ready` for up to kSpin; whether it became true.
template <class Ready>
bool spin_until(Ready ready) {
  if (ready()) return true;  // before reading the clock: often the case
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() >= until) return ready();
      std::this_thread::yield();
    }
  }
}
}  // namespace

unsigned ThreadPool::current_slot() { return t_slot; }

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 1; i < std::max(1u, threads); ++i) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks(Job& job) {
  int64_t c;
  while ((c = job.next.fetch_add(1, std::memory_order_relaxed)) < job.chunks) {
    int64_t begin = c * job.chunk;
    int64_t end = std::min(job.n, begin + job.chunk);
    job.body(job.context, begin, end);
    job.done.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::work(unsigned slot) {
  t_slot = slot;
  for (;;) {
    spin_until([this] { return queued_.load(std::memory_order_acquire) > 0; });
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleeping_;
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      --sleeping_;
      if (stop_ && queue_.empty()) return;
      job = queue_.front();
      // A job leaves the queue once all its chunks are claimed; until then every worker
      // that wakes helps with it.
      if (job->next.load(std::memory_order_relaxed) >= job->chunks) {
        queue_.pop_front();
        queue_changed();
        continue;
      }
      ++job->users;  // the submitter waits for users to leave before the job dies
    }
    run_chunks(*job);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!queue_.empty() && queue_.front() == job) {
      queue_.pop_front();
      queue_changed();
    }
    // Under the mutex: the submitter takes it once more before the job dies.
    if (--job->users == 0) job->finished.notify_all();
  }
}

/// A job run on a team: each member takes the job's chunks under its team number as slot.
struct ThreadPool::TeamCall {
  Job* job;
  const Team* team;
};

void ThreadPool::run_team_member(void* context) {
  auto* call = static_cast<TeamCall*>(context);
  const unsigned outer = t_slot;  // a worker of this pool that submits keeps its own slot after
  t_slot = unsigned(call->team->thread_num());
  run_chunks(*call->job);
  t_slot = outer;
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, void (*body)(void*, int64_t, int64_t),
                              void* context, int64_t align) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (workers_.empty() || n <= grain) {
    body(context, 0, n);
    return;
  }
  Job job;
  job.body = body;
  job.context = context;
  job.n = n;
  // Several chunks per thread balance uneven work; the grain keeps them large enough. Chunks
  // start at multiples of 64 indices: a cpu entry's lane blocks (16 threads) then start at
  // cache-line boundaries of its arrays (whole lines for non-temporal block stores, and no
  // line written by two threads); and at multiples of `align` (whole blocks of value sums).
  align = std::lcm<int64_t>(64, std::max<int64_t>(1, align));
  job.chunk = std::max(grain, (n + int64_t(size()) * 4 - 1) / (int64_t(size()) * 4));
  job.chunk = (job.chunk + align - 1) / align * align;
  job.chunks = (n + job.chunk - 1) / job.chunk;
  if (const Team* team = team_.load(std::memory_order_acquire)) {
    // The region ends when every member has left it: every chunk has run.
    TeamCall call{&job, team};
    team->parallel(&run_team_member, &call, size(), 0);
    return;
  }
  bool sleepers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(&job);
    queue_changed();
    sleepers = sleeping_ > 0;  // spinning workers see queued_; a worker about to sleep sees the queue
  }
  if (sleepers) wake_.notify_all();
  run_chunks(job);
  // Every chunk was claimed (run_chunks returned); wait for the workers still running one.
  auto finished = [&] {
    return job.users.load(std::memory_order_acquire) == 0 && job.done.load(std::memory_order_acquire) == job.chunks;
  };
  spin_until(finished);
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = std::find(queue_.begin(), queue_.end(), &job);
  if (it != queue_.end()) {
    queue_.erase(it);
    queue_changed();
  }
  job.finished.wait(lock, finished);
}

}  // namespace kjit::detail
