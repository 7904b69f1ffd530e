// bench/compile_scaling/main.cpp — how compile time grows with kernel size (issue 15 item 4):
// straight-line kernels of N Var updates, forward and adjoint, traced, generated and compiled
// cold for the host, for sm_90 (NVRTC to CUBIN) and to PTX (NVVM without ptxas), at each N
// given; prints the seconds of each stage, wall (and CPU: the host compiler's processes, or
// this process for NVRTC, which the machine's other load disturbs less), and each size's time
// over the first size's, against the size ratio (linear = equal).
//   bench_compile_scaling [--targets host,sm_90,ptx] [--text DIR] [--span S] [--branch] [--launch T] [N ...]
//   (default: 500 1000 2000)
// --targets picks the compiles (a skipped one prints 0); --text DIR writes each module's text
// to DIR/scaling_N.cu and compiles nothing (for timing compilers by hand); --span S sets
// ModuleOptions::adjoint_span (0: the adjoint sweeps back in one piece); --branch starts the
// kernel with a branch, which gives it the cpu's lane functions (forward and adjoint);
// --launch T also times the cpu's forward and adjoint launches over T threads (median ms).
#include <sys/resource.h>

#include <algorithm>
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
  double forward_ms = 0, adjoint_ms = 0;
};

struct Config {
  bool host = true, sm90 = true, ptx = true;
  std::string text_dir;  ///< write the texts here and compile nothing
  int span = kjit::ModuleOptions{}.adjoint_span;
  bool branch = false;  ///< a branch in the kernel: the cpu's lane functions, forward and adjoint
  int launch_threads = 0;  ///< also time cpu launches of the forward and adjoint over this many
};

/// Median milliseconds of `f` over 7 runs after one warm-up.
template <class F>
double median_ms(F&& f) {
  f();
  std::vector<double> ms;
  for (int r = 0; r < 7; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(seconds_since(t0) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

Times measure(int n, const Config& config) {
  Times t;
  t.n = n;
  const std::string module = "scaling_" + std::to_string(n);
  // N updates of one Var, each a multiply-add with a different constant and a sine every
  // eighth (so that the adjoint has rules to apply, not only adds).
  auto k = kjit::make_kernel<Array<float>, Float, Array<float>>(
      "scaling::chain" + std::to_string(n), module, {"x", "c", "out"},
      [n, branch = config.branch](Array<float> x, Float c, Array<float> out) {
        Int i = tid();
        Var<Float> y = x[i];
        if (branch) If(y < 0.0f, [&] { y = -y; });
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
  const kjit::compiler::ModuleSource src = kjit_bench::module_source(module, *fns[0], true, config.span);
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
  if (config.launch_threads > 0) {  // the module's own build, with ModuleOptions::adjoint_span
    kjit::ModuleOptions mo;
    mo.adjoint_span = config.span;
    kjit::module(module).set_options(mo);
    const int64_t m = config.launch_threads;
    std::vector<float> xs(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) xs[size_t(j)] = -1.0f + 2.0f * float(j) / float(m);
    auto X = kjit::from_vector(xs), out = kjit::zeros<float>({m}), gx = kjit::zeros<float>({m});
    auto gout = kjit::from_vector(std::vector<float>(size_t(m), 1.0f));
    float gc = 0;
    t.forward_ms = median_ms([&] { kjit::launch(k, m, X, 0.999f, out); });
    t.adjoint_ms = median_ms([&] { kjit::launch_adjoint(k, m, {X, 0.999f, out}, {gx, &gc, gout}); });
  }
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
    } else if (arg == "--launch" && a + 1 < argc) {
      config.launch_threads = std::atoi(argv[++a]);
    } else if (arg == "--branch") {
      config.branch = true;
    } else if (arg == "--span" && a + 1 < argc) {
      config.span = std::atoi(argv[++a]);
    } else if (arg == "--targets" && a + 1 < argc) {
      const std::string t = std::string(",") + argv[++a] + ",";
      config.host = t.find(",host,") != std::string::npos;
      config.sm90 = t.find(",sm_90,") != std::string::npos;
      config.ptx = t.find(",ptx,") != std::string::npos;
    } else if (std::atoi(arg.c_str()) > 0) {
      sizes.push_back(std::atoi(arg.c_str()));
    } else {
      std::fprintf(stderr, "usage: bench_compile_scaling [--targets host,sm_90,ptx] [--text DIR] [--span S] [--branch] [--launch THREADS] [N ...]\n");
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
    if (config.launch_threads > 0)
      std::printf("|   launches over %d threads: forward %.2f ms, adjoint %.2f ms |\n", config.launch_threads,
                  t.forward_ms, t.adjoint_ms);
    std::fflush(stdout);
  }
  return 0;
}
