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

/// One way of compiling a module through NVRTC: exactly `options`, with the text optionally
/// split into a prelude header (for -pch) or given `#pragma unroll 1` on its loops (what
/// codegen would emit).
struct RawConfig {
  const char* name;
  std::vector<std::string> options;
  bool split_prelude = false;
  int unroll1 = 0;  ///< 1: on the grid-stride loops; 2: on every loop of the kernels
};

struct RawInput {
  std::string text;
  std::vector<NvrtcHeader> headers;
  TargetKind kind;
};

RawInput raw_input(const ModuleSource& m, const RawConfig& c) {
  RawInput in{m.text, {}, TargetKind::Cubin};
  const std::string loop = c.unroll1 == 1 ? "for (kj_int64 kj_index = (kj_int64)blockIdx.x" : "for (";
  for (size_t at = c.unroll1 ? in.text.find(loop, in.text.find("\n// kernel ")) : std::string::npos;
       at != std::string::npos; at = in.text.find(loop, at + 20))
    in.text.insert(at, "\n#pragma unroll 1\n");
  if (c.split_prelude) {  // the prelude becomes a header, the part NVRTC can precompile
    size_t cut = in.text.find("\n// kernel ");
    in.headers.push_back({"kjit_prelude.h", in.text.substr(0, cut + 1)});
    in.text = "#include \"kjit_prelude.h\"\n" + in.text.substr(cut + 1);
  }
  for (const std::string& o : c.options)
    if (o.find("compute_") != std::string::npos) in.kind = TargetKind::Ptx;
  return in;
}

/// Compiles a module every way in `configs`, round-robin (so that the load of a
/// shared machine drifts over all of them alike), and reports each way's median and minimum
/// in ms.
void BM_Interleaved(benchmark::State& st, const char* kernel, std::vector<RawConfig> configs) {
  ModuleSource m = kjit_bench::bench_module(kernel);
  std::vector<RawInput> inputs;
  for (const RawConfig& c : configs) inputs.push_back(raw_input(m, c));
  warm_up();
  for (const RawInput& in : inputs)  // creates the precompiled header, if any
    nvrtc_run(in.text, "kjit_module.cu", in.kind, configs[size_t(&in - inputs.data())].options, in.headers);
  std::vector<std::vector<double>> ms(configs.size());
  for (auto _ : st)
    for (size_t i = 0; i < configs.size(); ++i) {
      CompileOutput out = nvrtc_run(inputs[i].text, "kjit_module.cu", inputs[i].kind, configs[i].options,
                                    inputs[i].headers);
      if (!out.ok) st.SkipWithError(out.log.c_str());
      ms[i].push_back(out.ms);
    }
  for (size_t i = 0; i < configs.size(); ++i) {
    std::sort(ms[i].begin(), ms[i].end());
    st.counters[configs[i].name] = ms[i][ms[i].size() / 2];
    st.counters[std::string(configs[i].name) + "_min"] = ms[i][0];  // the least disturbed run
  }
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

// Flags the driver does or does not use, on the raw NVRTC call, interleaved: each counter is
// the median ms of one way of compiling saxpy (forward + adjoint) for sm_90.
BENCHMARK_CAPTURE(BM_Interleaved, saxpy/sm_90/flags, "saxpy",
                  std::vector<RawConfig>{{"driver", kSm90},
                                         {"no_minimal", kSm90Full},
                                         {"pch", plus(kSm90, {"-pch"}), true},
                                         {"Ofc_min", plus(kSm90, {"-Ofc=min"})},
                                         {"Ofc_mid", plus(kSm90, {"-Ofc=mid"})},
                                         {"Ofc_max", plus(kSm90, {"-Ofc=max"})},
                                         {"ptxas_O1", plus(kSm90, {"--ptxas-options=-O1"})},
                                         {"syntax_only", plus(kSm90, {"-fdevice-syntax-only"})},
                                         {"compute_90", {"--gpu-architecture=compute_90", "-std=c++17", "-w", "--minimal"}}})
    ->Iterations(15)->Unit(benchmark::kMillisecond)->UseRealTime();
// The same with `#pragma unroll 1` on the grid-stride loops (a codegen change).
BENCHMARK_CAPTURE(BM_Interleaved, saxpy/sm_90/unroll1, "saxpy",
                  std::vector<RawConfig>{{"driver", kSm90},
                                         {"unroll1", kSm90, false, 1},
                                         {"unroll1_no_minimal", kSm90Full, false, 1},
                                         {"unroll1_pch", plus(kSm90, {"-pch"}), true, 1},
                                         {"unroll1_Ofc_min", plus(kSm90, {"-Ofc=min"}), false, 1}})
    ->Iterations(15)->Unit(benchmark::kMillisecond)->UseRealTime();
// damp (a dynamic loop with checkpointed adjoint): unrolling every loop of the kernels is
// what makes it slow.
BENCHMARK_CAPTURE(BM_Interleaved, damp/sm_90/unroll1, "damp",
                  std::vector<RawConfig>{{"driver", kSm90},
                                         {"unroll1_grid_loops", kSm90, false, 1},
                                         {"unroll1_all_loops", kSm90, false, 2},
                                         {"Ofc_min", plus(kSm90, {"-Ofc=min"})}})
    ->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
