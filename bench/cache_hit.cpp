// Cache hits: the time from build_module to a verified artifact when the entry exists (key,
// meta.json, size and SHA-256 of the artifact), for cpu and sm_90; the key alone; SHA-256 alone
// (OpenSSL) at a key's, an artifact's and a large size; and, for reference, the dlopen the
// runtime does next with a cpu artifact.
#include <benchmark/benchmark.h>

#include <dlfcn.h>
#include <stdlib.h>

#include <filesystem>

#include "compile_kernels.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "sha256.hpp"

using namespace kjit::compiler;

namespace {

/// A cache in a fresh temporary folder, removed at exit.
Cache& bench_cache() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/kjit-bench-cache-XXXXXX";
    std::string d = ::mkdtemp(tmpl);
    std::atexit([] { std::filesystem::remove_all(dir); });
    return d;
  }();
  static Cache cache([] {
    CacheConfig c;
    c.dir = dir;
    return c;
  }());
  return cache;
}

void BM_CacheHit(benchmark::State& st, const char* kernel, const char* target) {
  ModuleSource m = kjit_bench::bench_module(kernel);
  Target t = Target::parse(target);
  Artifact first = build_module(m, t, CompileOptions{}, bench_cache());
  for (auto _ : st) {
    Artifact a = build_module(m, t, CompileOptions{}, bench_cache());
    if (a.origin != ArtifactOrigin::Cached) st.SkipWithError("not a hit");
    benchmark::DoNotOptimize(a.meta);
  }
  st.counters["artifact_KB"] = double(first.image.size() + (first.library_path.empty()
                                   ? 0 : std::filesystem::file_size(first.library_path))) / 1024.0;
}

void BM_ModuleKey(benchmark::State& st, const char* target) {
  ModuleSource m = kjit_bench::bench_module("springs");
  Target t = Target::parse(target);
  for (auto _ : st) benchmark::DoNotOptimize(module_key(m, t, CompileOptions{}));
  st.counters["identity_KB"] = double(m.identity.size()) / 1024.0;
}

void BM_DlopenCpuArtifact(benchmark::State& st) {
  ModuleSource m = kjit_bench::bench_module("springs");
  Artifact a = build_module(m, Target::host(), CompileOptions{}, bench_cache());
  for (auto _ : st) {
    void* h = ::dlopen(a.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h || !::dlsym(h, m.entry_points[0].c_str())) st.SkipWithError("dlopen failed");
    ::dlclose(h);
  }
}

void BM_Sha256(benchmark::State& st) {
  std::string data(size_t(st.range(0)), 'q');
  for (auto _ : st) benchmark::DoNotOptimize(sha256_hex(data));
  st.SetBytesProcessed(int64_t(st.iterations()) * st.range(0));
}

}  // namespace

BENCHMARK_CAPTURE(BM_CacheHit, springs/cpu, "springs", "cpu")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CacheHit, springs/sm_90, "springs", "sm_90")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CacheHit, saxpy/cpu, "saxpy", "cpu")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ModuleKey, springs/cpu, "cpu")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ModuleKey, springs/sm_90, "sm_90")->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DlopenCpuArtifact)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Sha256)->Arg(64)->Arg(1700)->Arg(16 << 10)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);
