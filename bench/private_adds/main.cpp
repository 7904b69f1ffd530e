// bench/private_adds/main.cpp — what privatized adds cost and save on the cpu: random scatters
// (springs-like Vec3f and scalar float atomic adds) of N = ratio x E threads into a target of E
// elements, with privatization forced off and on, interleaved, on the pool and on one thread.
// The rule in runtime/src/private_adds.cpp (worth_privatizing) comes from these numbers.
//   bench_private_adds [reps]      (KJIT_NUM_THREADS=1 for one thread)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/internal/private_adds.hpp"
#include "kjit/runtime/internal/thread_pool.hpp"

namespace bench_private {
using namespace kjit::dsl;
KJIT_MODULE(bench_private_adds)
KJIT_KERNEL(scatter_v3, (Array<Int> idx, Array<Vec3f> v, Array<Vec3f> t)) { atomic_add(t, idx[tid()], v[tid()]); }
KJIT_KERNEL(scatter_f, (Array<Int> idx, Array<Float> v, Array<Float> t)) { atomic_add(t, idx[tid()], v[tid()]); }
}  // namespace bench_private

namespace {

using kjit::detail::PrivatizeMode;

double median_ms(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 9;
  const unsigned threads = kjit::detail::ThreadPool::global().size();
  std::printf("threads %u; ms per launch, median of %d interleaved repetitions\n", threads, reps);
  std::printf("| kernel | E | N/E | atomic | private | private/atomic | rule |\n|---|---|---|---|---|---|---|\n");
  for (bool vec3 : {true, false}) {
    for (int64_t E : {int64_t(1) << 10, int64_t(1) << 16, int64_t(1) << 20}) {
      for (double ratio : {0.25, 0.5, 1.0, 2.0, 4.0, 16.0}) {
        const int64_t n = std::max<int64_t>(1, int64_t(double(E) * ratio));
        if (n > (int64_t(1) << 24)) continue;
        std::vector<int32_t> idx(static_cast<size_t>(n));
        uint32_t s = 7;
        for (auto& x : idx) {
          s = s * 1664525u + 1013904223u;
          x = int32_t((s >> 4) % uint32_t(E));
        }
        auto IDX = kjit::from_vector(idx);
        auto V = vec3 ? kjit::zeros<kjit::vec3f>({n}) : kjit::zeros<float>({n});
        auto T = vec3 ? kjit::zeros<kjit::vec3f>({E}) : kjit::zeros<float>({E});
        auto run = [&] {
          if (vec3) kjit::launch(bench_private::scatter_v3, n, IDX, V, T);
          else kjit::launch(bench_private::scatter_f, n, IDX, V, T);
        };
        std::vector<double> t[2];
        for (int r = -2; r < reps; ++r) {  // two warm-up rounds: the module, the measured cost
          for (int m = 0; m < 2; ++m) {
            kjit::detail::set_privatize_mode(m ? PrivatizeMode::Always : PrivatizeMode::Never);
            const auto t0 = std::chrono::steady_clock::now();
            run();
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            if (r >= 0) t[m].push_back(ms);
          }
        }
        kjit::detail::set_privatize_mode(PrivatizeMode::Auto);
        const uint64_t before = kjit::detail::privatized_arrays();
        run();
        const bool rule = kjit::detail::privatized_arrays() != before;
        const double a = median_ms(t[0]), p = median_ms(t[1]);
        std::printf("| %s | %lld | %g | %.3f | %.3f | %.2f | %s |\n", vec3 ? "vec3f" : "float", (long long)E, ratio, a,
                    p, p / a, rule ? "private" : "atomic");
        std::fflush(stdout);
      }
    }
  }
}
