// bench/hash_grid_side_by_side/main.cpp — kjit's side of bench/hash_grid_vs_warp.py: builds a
// 128^3 hash grid over the points that script writes and sums, for each point, the weights of
// its neighbours within the radius (the query loop of Warp's SPH and DEM examples). Times
// `reps` builds and `reps` neighbour-sum launches (after one warm-up of each) and writes the
// sums for the script to compare with Warp's.
// Usage: bench_hash_grid_side_by_side POINTS_FILE RADIUS OUT_FILE REPS  (KJIT_BENCH_QUERY_FOR=1: the
// sum through hash_grid_query_for instead of the While loop; KJIT_BENCH_LANES=1: lane functions)
//   (prints "build_ms_median query_ms_median")
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/hash_grid.hpp"

namespace grid_bench {
using namespace kjit::dsl;
KJIT_MODULE(bench_hash_grid)

KJIT_KERNEL(neighbour_sum, (Value<HashGrid> grid, Array<kjit::vec3f> x, Array<float> w, Float r, Array<float> out)) {
  Int i = hash_grid_point_id(grid, tid());
  Vec3f p = x[i];
  auto q = hash_grid_query(grid, p, r);
  Var<int32_t> j = 0;
  Var<float> s = 0.0f;
  While([&] { return hash_grid_query_next(q, j); }, [&] {
    If(length_sq(x[j] - p) <= r * r, [&] { s = s + w[j]; });
  });
  out[i] = s;
}
/// The same sum through hash_grid_query_for (nested For loops over the cells).
KJIT_KERNEL(neighbour_sum_for, (Value<HashGrid> grid, Array<kjit::vec3f> x, Array<float> w, Float r, Array<float> out)) {
  Int i = hash_grid_point_id(grid, tid());
  Vec3f p = x[i];
  Var<float> s = 0.0f;
  hash_grid_query_for(grid, p, r, [&](Int j) {
    If(length_sq(x[j] - p) <= r * r, [&] { s = s + w[j]; });
  });
  out[i] = s;
}
}  // namespace grid_bench

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s POINTS_FILE RADIUS OUT_FILE REPS\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary | std::ios::ate);
  const int64_t n = int64_t(in.tellg()) / int64_t(sizeof(kjit::vec3f));
  std::vector<kjit::vec3f> points(static_cast<size_t>(n));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(points.data()), std::streamsize(points.size() * sizeof(kjit::vec3f)));
  const float radius = std::strtof(argv[2], nullptr);
  const int reps = std::atoi(argv[4]);
  std::vector<float> weights(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) weights[size_t(i)] = 1.0f + float(i % 5);
  kjit::NdArray x = kjit::from_vector(points), w = kjit::from_vector(weights), out = kjit::zeros<float>({n});
  // The plain body one thread after another (ModuleOptions::cpu_lanes): the query's loops run
  // a different number of times per thread and gather their points, which 16-thread lane
  // functions do 1.3-1.8x slower. KJIT_BENCH_LANES=1 keeps the lane functions.
  const char* lanes_env = std::getenv("KJIT_BENCH_LANES");
  kjit::ModuleOptions options = kjit::module("bench_hash_grid").options();
  options.cpu_lanes = lanes_env && *lanes_env;
  kjit::module("bench_hash_grid").set_options(options);
  kjit::HashGrid grid(128, 128, 128);
  auto timed = [&](auto&& f) {
    f();  // warm-up (and, for the kernel, compile or load from the cache)
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  double build = timed([&] { grid.build(x, radius); });
  const char* for_env = std::getenv("KJIT_BENCH_QUERY_FOR");
  const bool use_for = for_env && *for_env;  // the For idiom instead
  double query = timed([&] {
    if (use_for) kjit::launch(grid_bench::neighbour_sum_for, n, grid, x, w, radius, out);
    else kjit::launch(grid_bench::neighbour_sum, n, grid, x, w, radius, out);
  });
  std::vector<float> sums = out.to_vector<float>();
  std::ofstream(argv[3], std::ios::binary).write(reinterpret_cast<const char*>(sums.data()), std::streamsize(sums.size() * sizeof(float)));
  std::printf("%.4f %.4f\n", build, query);
  return 0;
}
