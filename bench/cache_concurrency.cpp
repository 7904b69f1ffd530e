// Does the per-key lock file help? 8 threads build the same 4 modules (sm_90) into a cold
// cache folder at once, with and without lock files: wall time and compiles per round.
#include <benchmark/benchmark.h>

#include <stdlib.h>

#include <filesystem>
#include <thread>

#include "compile_kernels.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"

using namespace kjit::compiler;

namespace {

void BM_SameModules8Threads(benchmark::State& st, bool locks) {
  const char* kernels[] = {"saxpy", "springs", "saxpy", "springs"};
  std::vector<ModuleSource> mods;
  for (int i = 0; i < 4; ++i) mods.push_back(kjit_bench::bench_module(kernels[i], true, "conc" + std::to_string(i)));
  {
    CacheConfig warm;
    warm.in_memory = true;
    Cache c(warm);
    build_module(mods[0], Target::cubin(90), CompileOptions{}, c);  // NVRTC's first-use cost
  }
  double compiles = 0;
  for (auto _ : st) {
    st.PauseTiming();
    char tmpl[] = "/tmp/kjit-bench-conc-XXXXXX";
    std::string dir = ::mkdtemp(tmpl);
    CacheConfig cfg;
    cfg.dir = dir;
    cfg.lock_files = locks;
    Cache cache(cfg);
    st.ResumeTiming();
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 4; ++i) build_module(mods[size_t((i + t) % 4)], Target::cubin(90), CompileOptions{}, cache);
      });
    for (std::thread& t : threads) t.join();
    st.PauseTiming();
    compiles += double(cache.stats().compiles);
    std::filesystem::remove_all(dir);
    st.ResumeTiming();
  }
  st.counters["compiles_per_round"] = compiles / double(st.iterations());
}

}  // namespace

BENCHMARK_CAPTURE(BM_SameModules8Threads, with_lock_files, true)
    ->Unit(benchmark::kMillisecond)->Iterations(2)->Repetitions(3)->ReportAggregatesOnly(true)->UseRealTime();
BENCHMARK_CAPTURE(BM_SameModules8Threads, without_lock_files, false)
    ->Unit(benchmark::kMillisecond)->Iterations(2)->Repetitions(3)->ReportAggregatesOnly(true)->UseRealTime();
