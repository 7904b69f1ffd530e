// bench/host_compile/main.cpp — cold host compile of a small module (issue 15): the saxpy
// module, forward and adjoint (the text `kjit source ... demo::saxpy --adjoint` prints), built
// for the cpu N times through build_module with an in-memory cache, interleaved with the
// compiler run by hand and stopped after each of its phases, so that the differences say where
// the time goes. Reports the median and minimum of wall time and of user+sys time (the
// compiler's processes, from wait4).
//   bench_host_compile [--runs N] [--module saxpy|springs|damp] [--text FILE]
// --text FILE also writes the module's text there (for timing the compiler by hand).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "compile_kernels.hpp"
#include "host_compiler.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"

namespace {

struct Sample {
  double wall_ms = 0, cpu_ms = 0;
};

double ms(const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; }

/// The CPU time of this process's waited-for children so far.
double children_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return ms(u.ru_utime) + ms(u.ru_stime);
}

/// Runs `program args...` with its output discarded; exits on failure.
Sample run(const std::string& program, const std::vector<std::string>& args) {
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  rusage u{};
  if (pid < 0 || wait4(pid, &status, 0, &u) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "%s failed\n", program.c_str());
    std::exit(1);
  }
  Sample s;
  s.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  s.cpu_ms = ms(u.ru_utime) + ms(u.ru_stime);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 21;
  std::string module = "saxpy", text_file;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--runs" && a + 1 < argc) runs = std::max(1, std::atoi(argv[++a]));
    else if (arg == "--module" && a + 1 < argc) module = argv[++a];
    else if (arg == "--text" && a + 1 < argc) text_file = argv[++a];
    else {
      std::fprintf(stderr, "usage: bench_host_compile [--runs N] [--module saxpy|springs|damp] [--text FILE]\n");
      return 2;
    }
  }
  const kjit::compiler::ModuleSource src = kjit_bench::bench_module(module, true, module + "_host_compile");
  if (!text_file.empty()) std::ofstream(text_file) << src.text;

  // The compiler as build_module runs it, by hand: the same flags, stopped after each phase.
  char dir_template[] = "/tmp/kjit-host-compile-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string source = dir + "/source.cu", empty = dir + "/empty.cu";
  std::ofstream(source) << src.text;
  std::ofstream(empty) << "int kj_empty;\n";
  const std::string cxx = kjit::compiler::host_compiler_path();
  const std::vector<std::string> flags = kjit::compiler::host_options(kjit::compiler::CompileOptions{});
  auto with = [&](std::vector<std::string> tail) {
    std::vector<std::string> args = flags;
    args.insert(args.end(), tail.begin(), tail.end());
    return args;
  };
  const std::vector<std::pair<std::string, std::vector<std::string>>> phases = {
      {"empty file, linked", with({empty, "-lm", "-lgcc", "-o", dir + "/empty.so"})},
      {"parse (-fsyntax-only)", with({"-fsyntax-only", source})},
      {"compile (-S)", with({"-S", source, "-o", dir + "/module.s"})},
      {"assemble (-c)", with({"-c", source, "-o", dir + "/module.o"})},
      {"link (the whole command)", with({source, "-lm", "-lgcc", "-o", dir + "/module.so"})},
  };

  std::map<std::string, std::vector<double>> wall, cpu;
  const std::string build = "build_module (cold)";
  for (int r = 0; r < runs; ++r) {
    kjit::compiler::CacheConfig cc;
    cc.in_memory = true;  // cold: every build compiles
    kjit::compiler::Cache cache(cc);
    const double c0 = children_cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    kjit::compiler::build_module(src, kjit::compiler::Target::host(), kjit::compiler::CompileOptions{}, cache);
    wall[build].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    cpu[build].push_back(children_cpu_ms() - c0);
    for (const auto& [name, args] : phases) {
      Sample s = run(cxx, args);
      wall[name].push_back(s.wall_ms);
      cpu[name].push_back(s.cpu_ms);
    }
  }

  size_t lines = 0;
  for (char c : src.text) lines += c == '\n';
  std::printf("module %s: %zu lines; %s", module.c_str(), lines, cxx.c_str());
  for (const std::string& f : flags) std::printf(" %s", f.c_str());
  std::printf("\n%d interleaved runs, ms\n\n", runs);
  std::printf("| step | user+sys median | user+sys min | wall median | wall min |\n|---|---|---|---|---|\n");
  std::vector<std::string> order{build};
  for (const auto& p : phases) order.push_back(p.first);
  for (const std::string& name : order)
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f |\n", name.c_str(), median(cpu[name]),
                *std::min_element(cpu[name].begin(), cpu[name].end()), median(wall[name]),
                *std::min_element(wall[name].begin(), wall[name].end()));
  std::string cleanup = "rm -rf '" + dir + "'";
  return std::system(cleanup.c_str()) == 0 ? 0 : 1;
}
