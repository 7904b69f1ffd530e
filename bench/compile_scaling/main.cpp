// bench/compile_scaling/main.cpp — how compile time grows with kernel size (issue 15 item 4):
// straight-line kernels of N Var updates, forward and adjoint, traced, generated and compiled
// cold for the host, for sm_90 (NVRTC to CUBIN) and to PTX (NVVM without ptxas), at each N
// given; prints the seconds of each stage, wall (and CPU: the host compiler's processes, or
// this process for NVRTC, which the machine's other load disturbs less), and each size's time
// over the first size's, against the size ratio (linear = equal).
//   bench_compile_scaling [--targets host,sm_90,ptx] [--text DIR] [N ...]   (default: 500 1000 2000)
// --targets picks the compiles (a skipped one prints 0); --text DIR writes each module's text
// to DIR/scaling_N.cu and compiles nothing (for timing compilers by hand).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "compile_kernels.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"

using namespace kjit::dsl;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// CPU seconds of this process (every thread) and of its waited-for children.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return double(t.tv_sec) + t.tv_nsec / 1e9 + double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Span {
  double wall = 0, cpu = 0;
};

struct Times {
  int n = 0;
  double trace = 0, codegen = 0;
  Span host, sm90, ptx;
  size_t lines = 0;
};

struct Config {
  bool host = true, sm90 = true, ptx = true;
  std::string text_dir;  ///< write the texts here and compile nothing
};

Times measure(int n, const Config& config) {
  Times t;
  t.n = n;
  const std::string module = "scaling_" + std::to_string(n);
  // N updates of one Var, each a multiply-add with a different constant and a sine every
  // eighth (so that the adjoint has rules to apply, not only adds).
  auto k = kjit::make_kernel<Array<float>, Float, Array<float>>(
      "scaling::chain" + std::to_string(n), module, {"x", "c", "out"},
      [n](Array<float> x, Float c, Array<float> out) {
        Int i = tid();
        Var<Float> y = x[i];
        for (int s = 0; s < n; ++s) {
          if (s % 8 == 7) y = sin(y) * c;
          else y = y * c + Float(0.001f * float(s % 97));
        }
        out[i] = y;
      });
  const kjit::KernelDef* def = kjit::Registry::get().find_kernel("scaling::chain" + std::to_string(n));
  auto t0 = std::chrono::steady_clock::now();
  std::vector<const kjit::ir::Function*> fns{&def->ir()};
  t.trace = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const kjit::compiler::ModuleSource src = kjit_bench::module_source(module, *fns[0], true);
  t.codegen = seconds_since(t0);
  for (char c : src.text) t.lines += c == '\n';
  if (!config.text_dir.empty()) {
    std::ofstream(config.text_dir + "/" + module + ".cu") << src.text;
    return t;
  }

  kjit::compiler::CacheConfig cc;
  cc.in_memory = true;  // cold: every build compiles
  kjit::compiler::Cache cache(cc);
  auto timed = [&](bool on, const kjit::compiler::Target& target, Span* span) {
    if (!on) return;
    const double cpu0 = cpu_seconds();
    auto start = std::chrono::steady_clock::now();
    kjit::compiler::build_module(src, target, kjit::compiler::CompileOptions{}, cache);
    span->wall = seconds_since(start);
    span->cpu = cpu_seconds() - cpu0;
  };
  timed(config.host, kjit::compiler::Target::host(), &t.host);
  timed(config.sm90, kjit::compiler::Target::cubin(90), &t.sm90);
  timed(config.ptx, kjit::compiler::Target::ptx(90), &t.ptx);  // NVVM alone: sm_90 minus this is ptxas
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  Config config;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--text" && a + 1 < argc) {
      config.text_dir = argv[++a];
    } else if (arg == "--targets" && a + 1 < argc) {
      const std::string t = std::string(",") + argv[++a] + ",";
      config.host = t.find(",host,") != std::string::npos;
      config.sm90 = t.find(",sm_90,") != std::string::npos;
      config.ptx = t.find(",ptx,") != std::string::npos;
    } else if (std::atoi(arg.c_str()) > 0) {
      sizes.push_back(std::atoi(arg.c_str()));
    } else {
      std::fprintf(stderr, "usage: bench_compile_scaling [--targets host,sm_90,ptx] [--text DIR] [N ...]\n");
      return 2;
    }
  }
  if (sizes.empty()) sizes = {500, 1000, 2000};
  std::vector<Times> all;
  std::printf("seconds, wall (CPU)\n\n");
  std::printf("| statements | text lines | trace s | codegen s | host compile | sm_90 compile | of it PTX (NVVM) | host / first | sm_90 / first | PTX / first | size / first |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  auto cell = [](const Span& s) {
    static char buf[4][64];
    static int i = 0;
    i = (i + 1) % 4;
    std::snprintf(buf[i], sizeof buf[i], "%.2f (%.2f)", s.wall, s.cpu);
    return buf[i];
  };
  auto ratio = [](const Span& s, const Span& f) {
    return Span{f.wall > 0 ? s.wall / f.wall : 0, f.cpu > 0 ? s.cpu / f.cpu : 0};
  };
  for (int n : sizes) {
    Times t = measure(n, config);
    all.push_back(t);
    const Times& f = all.front();
    std::printf("| %d | %zu | %.3f | %.3f | %s | %s | %s |", t.n, t.lines, t.trace, t.codegen, cell(t.host), cell(t.sm90),
                cell(t.ptx));
    std::printf(" %s |", cell(ratio(t.host, f.host)));
    std::printf(" %s |", cell(ratio(t.sm90, f.sm90)));
    std::printf(" %s | %.2f |\n", cell(ratio(t.ptx, f.ptx)), double(t.n) / double(f.n));
    std::fflush(stdout);
  }
  return 0;
}
