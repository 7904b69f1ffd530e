// The cpu device's persistent thread pool: splits a launch's index range across all
// hardware threads, the launching thread included, on its own workers or on the thread team
// of an OpenMP runtime the process already runs (internal).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace kjit::detail {

/// A fixed set of worker threads that run chunks of index ranges. Any number of threads may
/// submit at once (XLA runs handlers concurrently); each submitter works on its own range
/// too and returns when the range is done.
class ThreadPool {
 public:
  /// The process-wide pool: `KJIT_NUM_THREADS`, else the hardware concurrency.
  static ThreadPool& global();

  /// A pool with `threads` threads in all (threads - 1 workers plus the submitter).
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Threads that share a range, the submitter included.
  unsigned size() const { return unsigned(workers_.size()) + 1; }

  /// The calling thread's slot among the threads that may run a job's chunks: worker k of
  /// its pool is k + 1; every other thread (a submitter) is 0. Within one job the slots of the
  /// threads running it differ (a job's chunks run on its submitter and on workers only), so
  /// a launch can keep per-thread state in an array of size() slots.
  static unsigned current_slot();

  /// Calls `body(context, begin, end)` over [0, n) in chunks of about `grain` indices, on
  /// the workers and the calling thread, each chunk's length a multiple of both 64 and
  /// `align` (the last one shorter), so each chunk starts at a multiple of both. Returns when
  /// every chunk has run.
  void parallel_for(int64_t n, int64_t grain, void (*body)(void* context, int64_t, int64_t),
                    void* context, int64_t align = 1);

  /// An OpenMP runtime's entry points (GCC's libgomp ABI): a parallel region of `threads`
  /// threads running `fn(data)`, and the calling thread's number in its team.
  struct Team {
    void (*parallel)(void (*fn)(void*), void* data, unsigned threads, unsigned flags);
    int (*thread_num)();
  };
  /// From now on, jobs run on `team`'s threads (size() of them, numbered as slots) instead of
  /// the workers, which sleep; null: on the workers again. Two thread sets that both poll for
  /// work take turns on the same cores, so a process that also runs an OpenMP team (PyTorch's
  /// intra-op threads) shares that team. `team` must outlive every later job.
  void use_team(const Team* team) { team_.store(team, std::memory_order_release); }
  /// The team jobs run on (null: the pool's own workers).
  const Team* team() const { return team_.load(std::memory_order_acquire); }

 private:
  struct Job;
  struct TeamCall;
  static void run_team_member(void* context);
  void work(unsigned slot);
  static void run_chunks(Job& job);
  void queue_changed() { queued_.store(int(queue_.size()), std::memory_order_release); }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job*> queue_;
  std::atomic<int> queued_{0};  ///< queue_.size(), read without the mutex by idle workers
  int sleeping_ = 0;            ///< workers waiting on wake_ (guarded by mutex_)
  std::atomic<const Team*> team_{nullptr};
  bool stop_ = false;
};

}  // namespace kjit::detail
