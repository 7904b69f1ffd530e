// bench/noise_side_by_side/main.cpp — kjit's side of bench/noise_vs_warp.py: the random and
// noise kernels that script also runs in Warp, over the points it writes. Times `reps`
// launches of the kernel (after one warm-up) and writes the outputs for the script to
// compare with Warp's bit for bit.
// Usage: bench_noise_side_by_side KERNEL POINTS_FILE OUT_FILE REPS   (prints "ms_median ms_min")
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"

namespace noise_bench {
using namespace kjit::dsl;
using kjit::vec3f, kjit::vec4f;
KJIT_MODULE(bench_noise)

KJIT_KERNEL(noise2, (Array<vec4f> p, Array<float> out)) {
  Int i = tid();
  Vec4f q = p[i];
  out[i] = noise(UInt32(42u), Vec2f(q[0], q[1]));
}
KJIT_KERNEL(noise3, (Array<vec4f> p, Array<float> out)) {
  Int i = tid();
  Vec4f q = p[i];
  out[i] = noise(UInt32(42u), Vec3f(q[0], q[1], q[2]));
}
KJIT_KERNEL(noise4, (Array<vec4f> p, Array<float> out)) {
  Int i = tid();
  out[i] = noise(UInt32(42u), p[i]);
}
KJIT_KERNEL(pnoise3, (Array<vec4f> p, Array<float> out)) {
  Int i = tid();
  Vec4f q = p[i];
  out[i] = pnoise(UInt32(42u), Vec3f(q[0], q[1], q[2]), 8, 8, 8);
}
KJIT_KERNEL(curlnoise3, (Array<vec4f> p, Array<vec3f> out)) {
  Int i = tid();
  Vec4f q = p[i];
  out[i] = curlnoise(UInt32(42u), Vec3f(q[0], q[1], q[2]), 3u, 2.0f, 0.5f);
}
/// Four octaves of 3-D noise (fractal sum): a noise-heavy shader's inner loop.
KJIT_KERNEL(fbm3, (Array<vec4f> p, Array<float> out)) {
  Int i = tid();
  Vec4f q = p[i];
  Vec3f x = Vec3f(q[0], q[1], q[2]);
  Var<Float> sum = 0.0f;
  Var<Float> amp = 1.0f;
  Var<Float> freq = 1.0f;
  For(0, 4, [&](Int) {
    sum = sum + amp * noise(UInt32(42u), x * freq);
    amp = amp * 0.5f;
    freq = freq * 2.0f;
  });
  out[i] = sum;
}
KJIT_KERNEL(randn_draws, (Array<vec4f> p, Array<float> out)) {
  Int i = tid();
  Var<UInt32> s = rand_init(42, i);
  // One draw per statement: C++ leaves the order of a + b's operands unspecified (GCC draws
  // the right one first), Warp's order is left to right.
  Float a = randn(s);
  Float b = randn(s);
  Float c = randn(s);
  Float d = randn(s);
  out[i] = a + b + c + d;
}
}  // namespace noise_bench

int main(int argc, char** argv) {
  using namespace noise_bench;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s KERNEL POINTS_FILE OUT_FILE REPS\n", argv[0]);
    return 2;
  }
  const std::string kernel = argv[1];
  std::ifstream in(argv[2], std::ios::binary | std::ios::ate);
  const int64_t n = int64_t(in.tellg()) / int64_t(sizeof(kjit::vec4f));
  std::vector<kjit::vec4f> points(static_cast<size_t>(n));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(points.data()), std::streamsize(points.size() * sizeof(kjit::vec4f)));
  kjit::NdArray p = kjit::from_vector(points);
  const bool vector_out = kernel == "curlnoise3";
  kjit::NdArray out = vector_out ? kjit::zeros<kjit::vec3f>({n}) : kjit::zeros<float>({n});
  const std::map<std::string, std::function<void()>> kernels = {
      {"noise2", [&] { kjit::launch(noise2, n, p, out); }},
      {"noise3", [&] { kjit::launch(noise3, n, p, out); }},
      {"noise4", [&] { kjit::launch(noise4, n, p, out); }},
      {"pnoise3", [&] { kjit::launch(pnoise3, n, p, out); }},
      {"curlnoise3", [&] { kjit::launch(curlnoise3, n, p, out); }},
      {"fbm3", [&] { kjit::launch(fbm3, n, p, out); }},
      {"randn", [&] { kjit::launch(randn_draws, n, p, out); }},
  };
  auto it = kernels.find(kernel);
  if (it == kernels.end()) {
    std::fprintf(stderr, "unknown kernel %s\n", kernel.c_str());
    return 2;
  }
  it->second();  // compile (or load from the cache) and warm up
  std::vector<double> ms;
  for (int r = 0; r < std::atoi(argv[4]); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    it->second();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::vector<float> values = vector_out ? std::vector<float>(size_t(3 * n)) : out.to_vector<float>();
  if (vector_out) {
    std::vector<kjit::vec3f> v = out.to_vector<kjit::vec3f>();
    std::copy_n(&v[0][0], 3 * n, values.begin());
  }
  std::ofstream(argv[3], std::ios::binary).write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(float)));
  std::printf("%.4f %.4f\n", ms[ms.size() / 2], ms[0]);
  return 0;
}
