// Choosing the threads of the cpu device's pooled work: kjit's pool or a loaded libgomp's team.
#include "kjit/runtime/cpu_threads.hpp"

#include <dlfcn.h>

#include <deque>
#include <mutex>

#include "kjit/error.hpp"
#include "kjit/runtime/internal/thread_pool.hpp"

namespace kjit {

namespace {

struct SharedTeam {
  std::string library;
  detail::ThreadPool::Team team;
};

std::mutex g_mutex;
/// Every team ever set: the pool may still run a job on one after it is replaced, so none is
/// freed (a process sets one or two).
std::deque<SharedTeam> g_teams;
const SharedTeam* g_current = nullptr;

}  // namespace

void share_cpu_threads(const std::string& openmp_library) {
  // RTLD_NOLOAD: the copy the process runs, never a second runtime with threads of its own.
  void* handle = dlopen(openmp_library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!handle)
    throw Error(ErrorKind::User, "kjit::share_cpu_threads: '" + openmp_library +
                                     "' is not loaded in this process (kjit shares an OpenMP runtime that is "
                                     "already running, never loads one)");
  using Parallel = void (*)(void (*)(void*), void*, unsigned, unsigned);
  using ThreadNum = int (*)();
  auto parallel = reinterpret_cast<Parallel>(dlsym(handle, "GOMP_parallel"));
  auto thread_num = reinterpret_cast<ThreadNum>(dlsym(handle, "omp_get_thread_num"));
  // The handle is kept (never closed): the pool calls into the library from now on.
  if (!parallel || !thread_num)
    throw Error(ErrorKind::User, "kjit::share_cpu_threads: '" + openmp_library +
                                     "' is not a GCC OpenMP runtime (libgomp): it has no GOMP_parallel and "
                                     "omp_get_thread_num");
  std::lock_guard<std::mutex> lock(g_mutex);
  g_current = &g_teams.emplace_back(SharedTeam{openmp_library, {parallel, thread_num}});
  detail::ThreadPool::global().use_team(&g_current->team);
}

void use_own_cpu_threads() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_current = nullptr;
  detail::ThreadPool::global().use_team(nullptr);
}

std::string cpu_threads() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_current ? g_current->library : "kjit";
}

}  // namespace kjit
