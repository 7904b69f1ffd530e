// Warm start: in a fresh process whose modules are all in the disk cache, the time from
// nothing loaded to the first launch done (trace, module key, cache hit verified, dlopen,
// launch), per module. Each iteration runs a new process (this program re-executed).
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kjit/kjit.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

extern char** environ;

namespace {

/// The child's work: load `module` and launch its first kernel once; prints microseconds.
int child(const std::string& module) {
  using Clock = std::chrono::steady_clock;
  auto x = kjit::zeros<float>({1024}), y = kjit::zeros<float>({1024}), out = kjit::zeros<float>({1024});
  auto start = Clock::now();
  kjit::ModuleLoad l = kjit::load_module(module, kjit::Device::cpu());
  if (module == "saxpy") kjit::launch(demo::saxpy, 1024, x, y, 2.0f, out);
  double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  std::printf("%f %d\n", us, l.build.from_cache ? 1 : 0);
  return 0;
}

/// Runs in the child before main: the benchmark machinery is not needed there.
const int child_status = [] {
  if (const char* m = std::getenv("KJIT_WARM_START_MODULE")) std::exit(child(m));
  return 0;
}();

double run_child(const std::string& module, bool* hit) {
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
  double us = -1;
  int from_cache = 0;
  if (got > 0) std::sscanf(buf, "%lf %d", &us, &from_cache);
  *hit = from_cache == 1;
  return us;
}

void warm_start(benchmark::State& state, const std::string& module) {
  bool hit;
  run_child(module, &hit);  // make sure the module is cached
  for (auto _ : state) {
    double us = run_child(module, &hit);
    if (us < 0 || !hit) {
      state.SkipWithError("the child failed or missed the cache");
      break;
    }
    state.SetIterationTime(us * 1e-6);
  }
}

void BM_WarmStart_saxpy(benchmark::State& s) { warm_start(s, "saxpy"); }
void BM_WarmStart_springs(benchmark::State& s) { warm_start(s, "springs"); }
void BM_WarmStart_loops(benchmark::State& s) { warm_start(s, "loops"); }

}  // namespace

BENCHMARK(BM_WarmStart_saxpy)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(20);
BENCHMARK(BM_WarmStart_springs)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(20);
BENCHMARK(BM_WarmStart_loops)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(20);
