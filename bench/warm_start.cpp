// Warm start: in a fresh process whose modules are all in the disk cache, the time from
// nothing loaded to the first launch done (trace, module key, cache hit verified, dlopen,
// launch), per module. Each iteration runs a new process (this program re-executed).
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kjit/kjit.hpp"
#include "kjit/runtime/modules.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

extern char** environ;

namespace {

/// The child's work: the first launch of each example module in turn (its module loaded from
/// the cache on the way); prints the microseconds each took and whether all were hits. The
/// first includes the process's one-time start-up (cache folder checks, thread pool).
int child(const std::string& first) {
  using Clock = std::chrono::steady_clock;
  const int n = 1024;
  auto x = kjit::zeros<float>({n}), y = kjit::zeros<float>({n}), out = kjit::zeros<float>({n});
  auto xd = kjit::zeros<double>({n}), v = kjit::zeros<kjit::vec3f>({n}), vo = kjit::zeros<kjit::vec3f>({n});
  auto pairs = kjit::zeros<int32_t>({2 * n});
  std::vector<std::pair<std::string, std::function<void()>>> steps = {
      {"saxpy", [&] { kjit::launch(demo::saxpy, n, x, y, 2.0f, out); }},
      {"springs", [&] { kjit::launch(demo::springs, 1, v, pairs, x, 1.0f, vo); }},
      {"loops", [&] { kjit::launch(demo::damp, n, v, 0.5f, 2, vo); }},
  };
  // The module asked for goes first: its time includes the process's start-up.
  std::stable_partition(steps.begin(), steps.end(), [&](const auto& s) { return s.first == first; });
  bool hits = true;
  for (auto& [module, launch_once] : steps) {
    auto start = Clock::now();
    launch_once();
    double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    hits = hits && kjit::load_module(module, kjit::Device::cpu()).build.from_cache;
    std::printf("%f ", us);
  }
  std::printf("%d\n", hits ? 1 : 0);
  return 0;
}

/// Runs in the child before main: the benchmark machinery is not needed there.
const int child_status = [] {
  if (const char* m = std::getenv("KJIT_WARM_START_MODULE")) std::exit(child(m));
  return 0;
}();

/// Runs a child that starts with `module`; returns its first launch's microseconds, and in
/// *later the mean of the other modules' first launches.
double run_child(const std::string& module, bool* hit, double* later = nullptr) {
  std::string env = "KJIT_WARM_START_MODULE=" + module;
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(env.data());
  envp.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  char* argv[] = {exe, nullptr};
  pid_t pid;
  posix_spawn(&pid, exe, &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  char buf[128] = {};
  ssize_t got = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
  double us = -1, b = 0, c = 0;
  int from_cache = 0;
  if (got > 0) std::sscanf(buf, "%lf %lf %lf %d", &us, &b, &c, &from_cache);
  *hit = from_cache == 1;
  if (later) *later = (b + c) / 2;
  return us;
}

/// `first`: the time of the process's first launch (module load and start-up); otherwise the
/// time of a later module's first launch in the same process (module load only).
void warm_start(benchmark::State& state, const std::string& module, bool first) {
  bool hit;
  run_child(module, &hit);  // make sure the modules are cached
  for (auto _ : state) {
    double later = 0;
    double us = run_child(module, &hit, &later);
    if (us < 0 || !hit) {
      state.SkipWithError("the child failed or missed the cache");
      break;
    }
    state.SetIterationTime((first ? us : later) * 1e-6);
  }
}

void BM_WarmStart_FirstModule(benchmark::State& s) { warm_start(s, "saxpy", true); }
void BM_WarmStart_EachFurtherModule(benchmark::State& s) { warm_start(s, "saxpy", false); }

}  // namespace

BENCHMARK(BM_WarmStart_FirstModule)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(30);
BENCHMARK(BM_WarmStart_EachFurtherModule)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(30);
