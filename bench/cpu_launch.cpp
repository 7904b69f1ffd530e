// The cpu device: launch overhead of an empty kernel, streaming throughput, the
// adjoint-to-forward time ratio of the example kernels, the cost of bounds-checked mode, and of
// an array allocation with memory tracking off, on, and through a set allocator.
#include <benchmark/benchmark.h>

#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/allocator.hpp"
#include "kjit/runtime/memory_tracking.hpp"
#include "kjit/runtime/graph.hpp"
#include "kjit/runtime/tape.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;

namespace bench_kernels {
using namespace kjit::dsl;
KJIT_MODULE(bench_cpu)
KJIT_KERNEL(empty, (Array<Float> x)) {}
}  // namespace bench_kernels

namespace {

/// Allocating and freeing a 64-byte array: state.range(0) = 0 as built, 1 with memory tracking
/// on, 2 through a set allocator that forwards to the built-in one (tracking off).
void BM_ArrayAllocation(benchmark::State& state) {
  struct Forwarding : Allocator {
    void* allocate(size_t bytes) override { return default_allocator(Device::cpu()).allocate(bytes); }
    void deallocate(void* p, size_t bytes) override { default_allocator(Device::cpu()).deallocate(p, bytes); }
  } forwarding;
  const int64_t mode = state.range(0);
  set_memory_tracking(mode == 1);
  ScopedAllocator scoped(Device::cpu(), mode == 2 ? &forwarding : nullptr);
  for (auto _ : state) benchmark::DoNotOptimize(empty<float>({16}).data());
  set_memory_tracking(false);
  clear_memory_tracking();
}

void BM_LaunchEmpty(benchmark::State& state) {
  auto x = zeros<float>({1});
  const int64_t n = state.range(0);
  launch(bench_kernels::empty, n, x);  // build and load outside the loop
  for (auto _ : state) launch(bench_kernels::empty, n, x);
}

/// The empty launch while a tape watches memory (state.range(0) = 1: the launch is recorded on
/// a tape too, which is reset every 4096 launches): the tape's cost per launch.
void BM_LaunchEmptyTape(benchmark::State& state) {
  auto x = zeros<float>({1}), y = zeros<float>({1}), out = zeros<float>({1});
  launch(bench_kernels::empty, 1, x);
  launch(demo::saxpy, 1, x, y, 2.0f, out);
  Tape watching;  // holds reads of x and y
  watching.record_launch(demo::saxpy, 1, {x, y, 2.0f, out});
  Tape recording;
  auto on = state.range(0) ? std::optional<Tape::Recording>(recording.record()) : std::nullopt;
  int64_t k = 0;
  for (auto _ : state) {
    launch(bench_kernels::empty, 1, out);
    if (++k % 4096 == 0 && on) {
      on->stop();
      recording.reset();
      on.emplace(recording.record());
    }
  }
}

/// 16 launches of saxpy over state.range(1) elements (4 arguments, as Warp's examples pass):
/// eagerly (state.range(0) = 0) or as one kjit::Graph captured once (1). The difference is
/// the checking and packing a graph skips; time per 16 launches.
void BM_GraphReplay(benchmark::State& state) {
  const int64_t n = state.range(1);
  auto x = zeros<float>({n}), y = zeros<float>({n}), out = zeros<float>({n});
  auto sixteen = [&](const Stream&) {
    for (int k = 0; k < 16; ++k) launch(demo::saxpy, n, x, y, 2.0f, out);
  };
  sixteen(Stream());  // build and load outside the loop
  Graph graph = capture(Device::cpu(), sixteen);
  if (state.range(0))
    for (auto _ : state) graph.launch();
  else
    for (auto _ : state) sixteen(Stream());
}

struct Saxpy {
  int64_t n;
  NdArray x, y, out, gx, gy, gout;
  explicit Saxpy(int64_t n_)
      : n(n_), x(zeros<float>({n_})), y(zeros<float>({n_})), out(zeros<float>({n_})), gx(zeros<float>({n_})),
        gy(zeros<float>({n_})), gout(zeros<float>({n_})) {}
};

void BM_SaxpyForward(benchmark::State& state) {
  Saxpy s(state.range(0));
  for (auto _ : state) launch(demo::saxpy, s.n, s.x, s.y, 2.0f, s.out);
  state.SetBytesProcessed(int64_t(state.iterations()) * s.n * 12);
}
void BM_SaxpyAdjoint(benchmark::State& state) {
  Saxpy s(state.range(0));
  for (auto _ : state) launch_adjoint(demo::saxpy, s.n, {s.x, s.y, 2.0f, s.out}, {s.gx, s.gy, {}, s.gout});
  state.SetBytesProcessed(int64_t(state.iterations()) * s.n * 20);
}

/// The machine's streaming reference: memcpy of the bytes saxpy moves (3 streams of floats:
/// 2 read, 1 written), over all hardware threads like a launch.
void BM_MemcpyReference(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a(static_cast<size_t>(n) * 2), b(static_cast<size_t>(n));
  auto src = from_vector(a), dst = from_vector(b);
  for (auto _ : state) {
    // Copy 2n floats into n: read 2 streams' worth, write one, as saxpy does.
    std::memcpy(dst.data(), src.data(), size_t(n) * 4);
    std::memcpy(dst.data(), static_cast<float*>(src.data()) + n, size_t(n) * 4);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * n * 16);
}

struct Springs {
  int np = 100000, ns = 400000;
  NdArray x, pairs, rest, f, gx, grest, gf;
  Springs() {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-5, 5);
    std::vector<vec3f> p(static_cast<size_t>(np));
    for (auto& v : p) v = vec3f{{u(rng), u(rng), u(rng)}};
    std::vector<int> idx;
    for (int s = 0; s < ns; ++s) {
      int a = int(rng() % unsigned(np));
      idx.push_back(a);
      idx.push_back((a + 1 + int(rng() % unsigned(np - 1))) % np);
    }
    x = from_vector(p);
    pairs = from_vector(idx);
    rest = from_vector(std::vector<float>(size_t(ns), 1.0f));
    f = zeros<vec3f>({np});
    gx = zeros<vec3f>({np});
    grest = zeros<float>({ns});
    gf = from_vector(std::vector<vec3f>(size_t(np), vec3f{{1, 1, 1}}));
  }
};
void BM_SpringsForward(benchmark::State& state) {
  Springs s;
  for (auto _ : state) launch(demo::springs, s.ns, s.x, s.pairs, s.rest, 10.0f, s.f);
}
void BM_SpringsAdjoint(benchmark::State& state) {
  Springs s;
  for (auto _ : state)
    launch_adjoint(demo::springs, s.ns, {s.x, s.pairs, s.rest, 10.0f, s.f}, {s.gx, {}, s.grest, {}, s.gf});
}

struct Iterate {
  int n = 65536;
  NdArray x = zeros<double>({65536}), c = from_vector(std::vector<double>(65536, 0.5)), out = zeros<double>({65536});
  NdArray gx = zeros<double>({65536}), gc = zeros<double>({65536}), gout = from_vector(std::vector<double>(65536, 1.0));
};
void BM_LoopForward(benchmark::State& state) {
  Iterate s;
  const int steps = int(state.range(0));
  for (auto _ : state) launch(demo::iterate, s.n, s.x, s.c, steps, s.out);
}
void BM_LoopAdjoint(benchmark::State& state) {
  Iterate s;
  const int steps = int(state.range(0));
  for (auto _ : state) launch_adjoint(demo::iterate, s.n, {s.x, s.c, steps, s.out}, {s.gx, s.gc, {}, s.gout});
}

/// The example kernels, forward and adjoint, with their modules built plainly (range(1) = 0)
/// and in bounds-checked mode (1): range(0) picks saxpy, springs or the loop (8 steps).
void BM_BoundsCheck(benchmark::State& state) {
  const int kernel = int(state.range(0));
  const bool adjoint = state.range(1) / 2, checked = state.range(1) % 2;
  const char* module = kernel == 0 ? "saxpy" : kernel == 1 ? "springs" : "loops";
  ModuleOptions o = kjit::module(module).options();
  o.bounds_check = checked;
  kjit::module(module).set_options(o);
  state.SetLabel(std::string(module) + (adjoint ? " adjoint" : " forward") + (checked ? " checked" : " plain"));
  std::function<void()> run;
  Saxpy sx(1 << 22);
  Springs sp;
  Iterate it;
  if (kernel == 0)
    run = adjoint ? std::function<void()>([&] { launch_adjoint(demo::saxpy, sx.n, {sx.x, sx.y, 2.0f, sx.out}, {sx.gx, sx.gy, {}, sx.gout}); })
                  : [&] { launch(demo::saxpy, sx.n, sx.x, sx.y, 2.0f, sx.out); };
  else if (kernel == 1)
    run = adjoint ? std::function<void()>([&] { launch_adjoint(demo::springs, sp.ns, {sp.x, sp.pairs, sp.rest, 10.0f, sp.f}, {sp.gx, {}, sp.grest, {}, sp.gf}); })
                  : [&] { launch(demo::springs, sp.ns, sp.x, sp.pairs, sp.rest, 10.0f, sp.f); };
  else
    run = adjoint ? std::function<void()>([&] { launch_adjoint(demo::iterate, it.n, {it.x, it.c, 8, it.out}, {it.gx, it.gc, {}, it.gout}); })
                  : [&] { launch(demo::iterate, it.n, it.x, it.c, 8, it.out); };
  run();  // build (or find) the module outside the timed loop
  for (auto _ : state) run();
}

/// The springs example (atomic adds into the forces; its adjoint adds gradients) forward
/// (range(0) = 0) and adjoint (1), plain (range(1) = 0) and deterministic (1): the cost of
/// running entry points with atomics in index order on one thread.
void BM_Deterministic(benchmark::State& state) {
  const bool adjoint = state.range(0), deterministic = state.range(1);
  state.SetLabel(std::string("springs ") + (adjoint ? "adjoint" : "forward") + (deterministic ? " deterministic" : " pooled"));
  Springs s;
  LaunchOptions o;
  o.deterministic = deterministic;
  auto run = [&] {
    if (adjoint) launch_adjoint(demo::springs.def(), s.ns, {s.x, s.pairs, s.rest, 10.0f, s.f}, {s.gx, {}, s.grest, {}, s.gf}, o);
    else launch(demo::springs.def(), s.ns, {s.x, s.pairs, s.rest, 10.0f, s.f}, o);
  };
  run();
  for (auto _ : state) run();
}

}  // namespace

BENCHMARK(BM_BoundsCheck)->ArgsProduct({{0, 1, 2}, {0, 1, 2, 3}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ArrayAllocation)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_LaunchEmpty)->Arg(1)->Arg(1 << 16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GraphReplay)->ArgsProduct({{0, 1}, {1, 1 << 12}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LaunchEmptyTape)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemcpyReference)->Arg(1 << 22)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SaxpyForward)->Arg(1 << 22)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SaxpyAdjoint)->Arg(1 << 22)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SpringsForward)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SpringsAdjoint)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoopForward)->Arg(16)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Deterministic)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoopAdjoint)->Arg(16)->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
