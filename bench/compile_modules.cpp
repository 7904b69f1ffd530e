// Cold NVRTC compile time of example-like modules (forward + adjoint) for sm_90 (CUBIN) and
// compute_90 (PTX), and the effect of each option: fast-compile, adjoints off, --minimal,
// NVRTC's precompiled headers, ptxas levels, and an unroll pragma on the grid-stride loop.
// Every iteration compiles (the cache is in memory); a warm-up compile runs first.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "compile_kernels.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "nvrtc_compiler.hpp"

using namespace kjit::compiler;

namespace {

Cache& memory_cache() {
  static Cache cache([] {
    CacheConfig c;
    c.in_memory = true;
    return c;
  }());
  return cache;
}

/// NVRTC's first compile in a process pays its initialisation; no measurement should.
void warm_up() {
  static bool done = [] {
    build_module(kjit_bench::bench_module("saxpy"), Target::cubin(90), CompileOptions{}, memory_cache());
    return true;
  }();
  (void)done;
}

void report(benchmark::State& st, const std::string& text, size_t bytes) {
  st.counters["text_lines"] = double(std::count(text.begin(), text.end(), '\n'));
  st.counters["artifact_KB"] = double(bytes) / 1024.0;
}

/// A module through the driver, with its default (or given) options.
void BM_Compile(benchmark::State& st, const char* kernel, const char* target, bool adjoint, CompileOptions o) {
  ModuleSource m = kjit_bench::bench_module(kernel, adjoint);
  Target t = Target::parse(target);
  warm_up();
  size_t bytes = 0;
  for (auto _ : st) bytes = build_module(m, t, o, memory_cache()).image.size();
  report(st, m.text, bytes);
}

/// The saxpy module through NVRTC with exactly `options`, with the text optionally split into
/// a prelude header (for -pch) or given `#pragma unroll 1` on the grid-stride loops.
void BM_Raw(benchmark::State& st, std::vector<std::string> options, bool split_prelude, bool unroll1) {
  ModuleSource m = kjit_bench::bench_module("saxpy");
  std::string text = m.text;
  if (unroll1) {
    const std::string loop = "  for (kj_int64 kj_index = (kj_int64)blockIdx.x";
    for (size_t at = text.find(loop); at != std::string::npos; at = text.find(loop, at + 20))
      text.insert(at, "  #pragma unroll 1\n");
  }
  std::vector<NvrtcHeader> headers;
  if (split_prelude) {  // the prelude becomes a header, the part NVRTC can precompile
    size_t cut = text.find("\n// kernel ");
    headers.push_back({"kjit_prelude.h", text.substr(0, cut + 1)});
    text = "#include \"kjit_prelude.h\"\n" + text.substr(cut + 1);
  }
  TargetKind kind = std::find(options.begin(), options.end(), "--gpu-architecture=compute_90") != options.end()
                        ? TargetKind::Ptx
                        : TargetKind::Cubin;
  warm_up();
  nvrtc_run(text, "kjit_module_saxpy.cu", kind, options, headers);  // creates the PCH, if any
  size_t bytes = 0;
  for (auto _ : st) {
    CompileOutput out = nvrtc_run(text, "kjit_module_saxpy.cu", kind, options, headers);
    if (!out.ok) st.SkipWithError(out.log.c_str());
    bytes = out.bytes.size();
  }
  report(st, text, bytes);
}

CompileOptions with(bool CompileOptions::*flag) {
  CompileOptions o;
  o.*flag = true;
  return o;
}

CompileOptions level(int n) {
  CompileOptions o;
  o.opt_level = n;
  return o;
}

const std::vector<std::string> kSm90 = {"--gpu-architecture=sm_90", "-std=c++17", "-w", "--minimal"};
const std::vector<std::string> kSm90Full = {"--gpu-architecture=sm_90", "-std=c++17", "-w"};

std::vector<std::string> plus(std::vector<std::string> v, std::initializer_list<const char*> more) {
  for (const char* m : more) v.push_back(m);
  return v;
}

}  // namespace

#define KJIT_COLD(b) b->Unit(benchmark::kMillisecond)->Iterations(3)->Repetitions(5)->ReportAggregatesOnly(true)

// Cold compile per example-like module, forward + adjoint.
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, saxpy/sm_90, "saxpy", "sm_90", true, CompileOptions{}));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, saxpy/compute_90, "saxpy", "compute_90", true, CompileOptions{}));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, springs/sm_90, "springs", "sm_90", true, CompileOptions{}));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, springs/compute_90, "springs", "compute_90", true, CompileOptions{}));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, damp/sm_90, "damp", "sm_90", true, CompileOptions{}));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, damp/compute_90, "damp", "compute_90", true, CompileOptions{}));

// Options, on saxpy for sm_90.
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, saxpy/sm_90/adjoints_off, "saxpy", "sm_90", false, CompileOptions{}));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, saxpy/sm_90/fast_compile, "saxpy", "sm_90", true, with(&CompileOptions::fast_compile)));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, saxpy/sm_90/fast_math, "saxpy", "sm_90", true, with(&CompileOptions::fast_math)));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, saxpy/sm_90/line_info, "saxpy", "sm_90", true, with(&CompileOptions::line_info)));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Compile, saxpy/sm_90/opt_level_1, "saxpy", "sm_90", true, level(1)));

// Flags the driver does or does not use, measured on the raw NVRTC call.
KJIT_COLD(BENCHMARK_CAPTURE(BM_Raw, saxpy/sm_90/driver_flags, kSm90, false, false));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Raw, saxpy/sm_90/without_minimal, kSm90Full, false, false));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Raw, saxpy/sm_90/pch, plus(kSm90, {"-pch"}), true, false));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Raw, saxpy/sm_90/Ofc_mid, plus(kSm90, {"-Ofc=mid"}), false, false));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Raw, saxpy/sm_90/Ofc_max, plus(kSm90, {"-Ofc=max"}), false, false));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Raw, saxpy/sm_90/syntax_only, plus(kSm90, {"-fdevice-syntax-only"}), false, false));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Raw, saxpy/sm_90/unroll1, kSm90, false, true));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Raw, saxpy/sm_90/unroll1_pch, plus(kSm90, {"-pch"}), true, true));
KJIT_COLD(BENCHMARK_CAPTURE(BM_Raw, saxpy/sm_90/unroll1_Ofc_min, plus(kSm90, {"-Ofc=min"}), false, true));
