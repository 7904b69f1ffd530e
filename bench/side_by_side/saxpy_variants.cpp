// bench/side_by_side/saxpy_variants.cpp — where saxpy's time goes on the cpu: kjit's launches
// (forward, adjoint) against hand-written OpenMP loops that differ in one thing each (plain or
// non-temporal stores, one contiguous range per thread or kjit-like dynamic chunks, two threads
// or one), all on the same buffers in one process, interleaved. Built -O3 -march=native.
//   bench_saxpy_variants [n] [reps]        (OMP_WAIT_POLICY=passive: idle OpenMP threads sleep)
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels.hpp"
#include "runner.hpp"
#include "kjit/kjit.hpp"

namespace {

using Clock = std::chrono::steady_clock;

/// a * x + y into o over [b, e), 16 floats at a time, with non-temporal stores (o 64-byte aligned).
void saxpy_nt(const float* x, const float* y, float a, float* o, long b, long e) {
  const __m512 av = _mm512_set1_ps(a);
  for (long i = b; i < e; i += 16)
    _mm512_stream_ps(o + i, _mm512_add_ps(_mm512_mul_ps(av, _mm512_loadu_ps(x + i)), _mm512_loadu_ps(y + i)));
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1L << 24;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 21;
  if (n % 1024) {
    std::fprintf(stderr, "n must be a multiple of 1024\n");
    return 2;
  }
  const float a = side_by_side::kSaxpyA;
  auto X = kjit::zeros<float>({n}), Y = kjit::zeros<float>({n}), O = kjit::zeros<float>({n});
  auto G = kjit::zeros<float>({n}), GX = kjit::zeros<float>({n}), GY = kjit::zeros<float>({n});
  float *x = static_cast<float*>(X.data()), *y = static_cast<float*>(Y.data()), *o = static_cast<float*>(O.data());
  float *g = static_cast<float*>(G.data()), *gx = static_cast<float*>(GX.data()), *gy = static_cast<float*>(GY.data());
  for (long i = 0; i < n; ++i) x[i] = float(i % 1000) * 1e-3f, y[i] = 1.0f, g[i] = 0.5f;

  std::vector<std::pair<std::string, std::function<void()>>> v = {
      {"fwd kjit", [&] { kjit::launch(side_by_side::saxpy, n, X, Y, a, O); }},
      {"fwd omp static", [&] {
#pragma omp parallel for simd schedule(static)
         for (long i = 0; i < n; ++i) o[i] = a * x[i] + y[i];
       }},
      {"fwd omp static, non-temporal", [&] {
#pragma omp parallel
         {
           const long t = omp_get_thread_num(), T = omp_get_num_threads(), c = n / T / 16 * 16;
           saxpy_nt(x, y, a, o, t * c, t == T - 1 ? n : (t + 1) * c);
         }
         _mm_sfence();
       }},
      {"fwd omp 8 dynamic chunks", [&] {
         const long c = n / 8;
#pragma omp parallel for schedule(dynamic, 1)
         for (long k = 0; k < 8; ++k) {
#pragma omp simd
           for (long i = k * c; i < (k + 1) * c; ++i) o[i] = a * x[i] + y[i];
         }
       }},
      {"fwd one thread", [&] {
#pragma omp simd
         for (long i = 0; i < n; ++i) o[i] = a * x[i] + y[i];
       }},
      {"fwd one thread, non-temporal", [&] {
         saxpy_nt(x, y, a, o, 0, n);
         _mm_sfence();
       }},
      {"adj kjit (dx += a g, dy += g)", [&] { kjit::launch_adjoint(side_by_side::saxpy, n, {X, Y, a, O}, {GX, GY, {}, G}); }},
      {"adj omp static (dx += a g, dy += g)", [&] {
#pragma omp parallel for simd schedule(static)
         for (long i = 0; i < n; ++i) {
           gx[i] += a * g[i];
           gy[i] += g[i];
         }
       }},
      {"adj omp static, 2 streams (dx = a g)", [&] {
#pragma omp parallel
         {
           const long t = omp_get_thread_num(), T = omp_get_num_threads(), c = n / T / 16 * 16;
           const __m512 av = _mm512_set1_ps(a);
           for (long i = t * c; i < (t == T - 1 ? n : (t + 1) * c); i += 16)
             _mm512_stream_ps(gx + i, _mm512_mul_ps(av, _mm512_loadu_ps(g + i)));
         }
         _mm_sfence();
       }},
  };
  std::vector<std::vector<double>> t(v.size());
  for (auto& [name, f] : v) f();  // kjit's module, first touches
  for (int r = 0; r < reps; ++r)
    for (size_t k = 0; k < v.size(); ++k) {
      const auto t0 = Clock::now();
      v[k].second();
      t[k].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  std::printf("saxpy n = %ld floats, %d OpenMP threads, %d interleaved repetitions, ms: median (min)\n", n,
              omp_get_max_threads(), reps);
  std::printf("| variant | ms | GB/s moved (at the median) |\n|---|---|---|\n");
  for (size_t k = 0; k < v.size(); ++k) {
    std::sort(t[k].begin(), t[k].end());
    const std::string& name = v[k].first;
    // Bytes each variant must move: reads + writes (+ a read for ownership of plainly stored lines).
    double streams = name.rfind("fwd", 0) == 0 ? (name.find("non-temporal") != std::string::npos ? 3 : 4)
                                               : (name.find("2 streams") != std::string::npos ? 2 : 5);
    if (name == "fwd kjit") streams = n * 4 >= (8L << 20) ? 3 : 4;  // block stores: non-temporal from 8 MiB
    const double med = t[k][t[k].size() / 2];
    std::printf("| %s | %.3f (%.3f) | %.1f |\n", name.c_str(), med, t[k][0], streams * 4.0 * double(n) / med / 1e6);
  }
}
