// Start-up cost: spawns each program given on the command line many times, round-robin (so
// load drifts over all of them alike), and prints the median and minimum wall time from spawn
// to exit, and the median CPU time (user + system) of the child, which a loaded machine
// disturbs far less. bench/CMakeLists.txt builds an empty program with and without libkjit.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Sample {
  double wall_ms;
  double cpu_ms;  ///< the child's user + system time
};

/// One spawn-to-exit of `path`; exits the driver on failure.
Sample run_once(const char* path) {
  char* argv[] = {const_cast<char*>(path), nullptr};
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (int rc = posix_spawn(&pid, path, nullptr, nullptr, argv, environ); rc != 0) {
    std::fprintf(stderr, "cannot start %s: %s\n", path, std::strerror(rc));
    std::exit(2);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "%s did not exit cleanly (status %d)\n", path, status);
    std::exit(2);
  }
  double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto ms = [](const timeval& t) { return double(t.tv_sec) * 1e3 + double(t.tv_usec) / 1e3; };
  return {wall, ms(usage.ru_utime) + ms(usage.ru_stime)};
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[size_t(p * double(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 500;
  std::vector<const char*> programs;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else programs.push_back(argv[i]);
  }
  if (programs.empty()) {
    std::fprintf(stderr, "usage: bench_startup [--runs N] program...\n"
                         "  times N spawn-to-exit runs of each program, round-robin\n");
    return 2;
  }
  // Warm-up: the page cache holds every library afterwards, as it does for a user's rerun.
  for (int w = 0; w < 20; ++w)
    for (const char* p : programs) run_once(p);
  std::vector<std::vector<double>> wall(programs.size()), cpu(programs.size());
  for (int r = 0; r < runs; ++r)
    for (size_t i = 0; i < programs.size(); ++i) {
      Sample s = run_once(programs[i]);
      wall[i].push_back(s.wall_ms);
      cpu[i].push_back(s.cpu_ms);
    }
  std::printf("%-44s %11s %11s %11s %11s   (%d runs each)\n", "program", "median ms", "min ms",
              "p90 ms", "cpu med ms", runs);
  for (size_t i = 0; i < programs.size(); ++i)
    std::printf("%-44s %11.3f %11.3f %11.3f %11.3f\n", programs[i], percentile(wall[i], 0.5),
                percentile(wall[i], 0.0), percentile(wall[i], 0.9), percentile(cpu[i], 0.5));
  return 0;
}
