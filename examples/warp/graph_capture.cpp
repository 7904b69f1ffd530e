// examples/warp/graph_capture.cpp — Warp 1.19's warp/examples/core/example_graph_capture.py in
// kjit: 16 octaves of Perlin noise (fractional Brownian motion) summed into a 128x128 image, the
// 16 launches captured once into a kjit::Graph and replayed every frame after the grid slides.
// Warp shows the image; this port writes it (float32, row-major) to --out and prints the
// milliseconds per frame, for scripts/warp_examples.sh to compare with Warp's.
// Usage: warp_graph_capture [--frames N] [--out FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/graph.hpp"

namespace graph_capture {
using namespace kjit::dsl;
KJIT_MODULE(warp_graph_capture)

KJIT_KERNEL(fbm, (Int kernel_seed, Float frequency, Float amplitude, Array<Float> x, Array<Float> y,
                  Array<Float, 2> z)) {
  auto [i, j] = tid<2>();
  UInt32 state = rand_init(kernel_seed);
  Vec2f p = frequency * Vec2f(x[j], y[i]);
  Float n = amplitude * noise(state, p);
  z(i, j) += n;
}

KJIT_KERNEL(slide, (Array<Float> x, Float shift)) {
  Int i = tid();
  x[i] += shift;
}
}  // namespace graph_capture

int main(int argc, char** argv) {
  int frames = 5;
  std::string out;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--frames")) frames = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--out")) out = argv[a + 1];
  }
  // Warp's Example.__init__: np.linspace's float64 grid (start + k * step, the end exact),
  // stored as float32.
  const int width = 128, height = 128;
  std::vector<float> xs(width), ys(height);
  for (int k = 0; k < width; ++k) xs[size_t(k)] = float(k == width - 1 ? 2.0 : k * (2.0 / (width - 1)));
  for (int k = 0; k < height; ++k) ys[size_t(k)] = float(k == height - 1 ? 2.0 : k * (2.0 / (height - 1)));
  kjit::NdArray x = kjit::from_vector(xs), y = kjit::from_vector(ys);
  kjit::NdArray pixels = kjit::zeros<float>({width, height});
  const int seed = 42;
  const double shift = 2e-2;
  double frequency = 1.0, amplitude = 1.0;

  // The 16 octaves, captured once (Warp: with wp.ScopedCapture() as capture: self.fbm()); the
  // graph keeps each launch's frequency and amplitude as they were.
  kjit::Graph graph = kjit::capture(kjit::Device::cpu(), [&](const kjit::Stream&) {
    for (int octave = 0; octave < 16; ++octave) {
      kjit::launch(graph_capture::fbm, kjit::Dims{height, width}, seed, frequency, amplitude, x, y, pixels);
      frequency *= 2.0;
      amplitude *= 0.5;
    }
  });

  auto step = [&] {  // Warp's Example.step
    pixels.zero();
    kjit::launch(graph_capture::slide, width, x, shift);
    graph.launch();
  };
  std::vector<double> ms;
  for (int f = 0; f < frames; ++f) {  // the first frame loads the slide kernel
    auto t0 = std::chrono::steady_clock::now();
    step();
    if (f > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  if (!out.empty()) {
    std::vector<float> v = pixels.to_vector<float>();
    std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
  }
  std::printf("graph_capture %dx%d, %d frames: %.3f ms per frame (median of %zu)\n", width, height, frames,
              ms.empty() ? 0.0 : ms[ms.size() / 2], ms.size());
  return 0;
}
