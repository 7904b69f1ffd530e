// The consumer's program: finds its precompiled module in the cache it was given, launches the
// kernel forward and backward on the cpu, and checks both against plain C++.
#include <cmath>
#include <cstdio>
#include <vector>

#include <kjit/kjit.hpp>
#include <kjit/runtime/modules.hpp>  // load_module

#include "consumer_kernels.hpp"

int main() {
  const kjit::Device cpu = kjit::Device::cpu();
  kjit::ModuleLoad load = kjit::load_module("consumer", cpu);
  if (!load.build.from_cache) {
    std::printf("consumer: module 'consumer' was compiled at run time, not precompiled\n");
    return 1;
  }
  const int n = 64, steps = 5;
  const float c = 0.5f;
  std::vector<float> xs(n);
  for (int i = 0; i < n; ++i) xs[i] = 0.25f * float(i) - 3.0f;
  kjit::NdArray x = kjit::from_vector(xs), out = kjit::zeros<float>({n});
  kjit::launch(consumer::geometric, n, x, c, steps, out);

  float series = 0;  // 1 + c + ... + c^(steps-1): d out[i] / d x[i]
  for (int k = 0; k < steps; ++k) series += std::pow(c, float(k));
  std::vector<float> ys = out.to_vector<float>();
  double worst = 0;
  for (int i = 0; i < n; ++i) worst = std::fmax(worst, std::fabs(ys[i] - xs[i] * series));

  kjit::NdArray adj_x = kjit::zeros<float>({n});
  kjit::NdArray adj_out = kjit::from_vector(std::vector<float>(n, 1.0f));
  kjit::launch_adjoint(consumer::geometric, n, {x, c, steps, out}, {adj_x, {}, {}, adj_out});
  std::vector<float> gx = adj_x.to_vector<float>();
  for (int i = 0; i < n; ++i) worst = std::fmax(worst, std::fabs(gx[i] - series));

  std::printf("consumer: module from %s, forward and adjoint max error %.2e\n",
              load.build.from_cache ? "the precompiled cache" : "a compile", worst);
  if (worst > 1e-5) return 1;
  std::printf("consumer: ok\n");
  return 0;
}
