// Trace + codegen time per example kernel and module: the work a cache miss adds before the
// compiler runs (a hit needs tracing and the module identity only).
#include <benchmark/benchmark.h>
#include <string>

#include "kjit/codegen/codegen.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;

namespace {

/// A fresh, untraced copy of kernel `k` (tracing is cached per KernelDef).
template <class... P>
void trace_fresh(benchmark::State& state, const Kernel<P...>& original, void (*body)(P...)) {
  std::vector<std::string> names;
  for (const KernelParam& p : original.def().params()) names.push_back(p.name);
  int i = 0;
  for (auto _ : state) {
    auto k = make_kernel<P...>(original.name() + std::to_string(i++), "bench_trace", names, body);
    benchmark::DoNotOptimize(&k.def().ir());
  }
}

void BM_Trace_saxpy(benchmark::State& s) { trace_fresh(s, demo::saxpy, &demo::saxpy_kjit_body); }
void BM_Trace_springs(benchmark::State& s) { trace_fresh(s, demo::springs, &demo::springs_kjit_body); }
void BM_Trace_damp(benchmark::State& s) { trace_fresh(s, demo::damp, &demo::damp_kjit_body); }
void BM_Trace_iterate(benchmark::State& s) { trace_fresh(s, demo::iterate, &demo::iterate_kjit_body); }

void codegen(benchmark::State& state, const char* kernel, bool adjoint) {
  const ir::Function& fn = Registry::get().find_kernel(kernel)->ir();
  codegen::CodegenOptions o;
  o.enable_adjoint = adjoint;
  for (auto _ : state) benchmark::DoNotOptimize(codegen::generate_module("m", {&fn}, o).text.size());
}
void BM_Codegen_saxpy_fwd_adj(benchmark::State& s) { codegen(s, "demo::saxpy", true); }
void BM_Codegen_saxpy_fwd(benchmark::State& s) { codegen(s, "demo::saxpy", false); }
void BM_Codegen_springs_fwd_adj(benchmark::State& s) { codegen(s, "demo::springs", true); }
void BM_Codegen_damp_fwd_adj(benchmark::State& s) { codegen(s, "demo::damp", true); }
void BM_Codegen_iterate_fwd_adj(benchmark::State& s) { codegen(s, "demo::iterate", true); }

void BM_ModuleIdentity_saxpy(benchmark::State& state) {
  const ir::Function& fn = demo::saxpy.def().ir();
  for (auto _ : state) benchmark::DoNotOptimize(codegen::module_identity("m", {&fn}, {}).size());
}

}  // namespace

BENCHMARK(BM_Trace_saxpy)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Trace_springs)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Trace_damp)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Trace_iterate)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Codegen_saxpy_fwd)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Codegen_saxpy_fwd_adj)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Codegen_springs_fwd_adj)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Codegen_damp_fwd_adj)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Codegen_iterate_fwd_adj)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ModuleIdentity_saxpy)->Unit(benchmark::kMicrosecond);
