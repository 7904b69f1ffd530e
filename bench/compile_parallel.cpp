// Parallel compiles: 8 example-like modules (saxpy and springs, forward + adjoint) x 2
// targets (sm_90, compute_90) with build_modules on 1 and on 2 threads (this machine has 2
// cores). Every iteration compiles.
#include <benchmark/benchmark.h>

#include "compile_kernels.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"

using namespace kjit::compiler;

namespace {

void BM_Parallel(benchmark::State& st, unsigned jobs) {
  CacheConfig cfg;
  cfg.in_memory = true;
  Cache cache(cfg);
  const char* kernels[] = {"saxpy", "springs"};
  std::vector<ModuleSource> mods;
  for (int i = 0; i < 8; ++i)
    mods.push_back(kjit_bench::bench_module(kernels[i % 2], true, "par" + std::to_string(i)));
  std::vector<BuildRequest> reqs;
  for (const ModuleSource& m : mods)
    for (Target t : {Target::cubin(90), Target::ptx(90)}) reqs.push_back({&m, t, CompileOptions{}});
  build_module(mods[0], Target::ptx(90), CompileOptions{}, cache);  // NVRTC's first-use cost
  for (auto _ : st) {
    auto results = build_modules(reqs, cache, jobs);
    for (const BuildResult& r : results)
      if (!r.ok) st.SkipWithError(r.error.c_str());
  }
  st.counters["modules"] = double(reqs.size());
}

}  // namespace

BENCHMARK_CAPTURE(BM_Parallel, 8_modules_x_2_targets/jobs_1, 1u)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)->ReportAggregatesOnly(true)->UseRealTime();
BENCHMARK_CAPTURE(BM_Parallel, 8_modules_x_2_targets/jobs_2, 2u)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)->ReportAggregatesOnly(true)->UseRealTime();
