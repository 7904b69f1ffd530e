// examples/warp/wave.cpp — Warp 1.19's warp/examples/core/example_wave.py in kjit: the 2-D wave
// equation on a 128x128 height field, displaced around a moving point, 16 substeps a frame, and
// the grid's vertices lifted to the heights. Warp renders the mesh; this port writes the final
// heights (float32, row-major) to --out and the vertices (float32 xyz) to --out-vertices, and
// prints the milliseconds per frame, for scripts/warp_examples.sh to compare with Warp's.
// Usage: warp_wave [--frames N] [--out FILE] [--out-vertices FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "port_output.hpp"

namespace wave {
using namespace kjit::dsl;
KJIT_MODULE(warp_wave)

/// The height at (x, y), the coordinates clamped to the grid.
Float sample(const Array<Float>& f, Int x, Int y, Int width, Int height) {
  Int cx = clamp(x, Int(0), width - 1), cy = clamp(y, Int(0), height - 1);
  return f[cy * width + cx];
}

Float laplacian(const Array<Float>& f, Int x, Int y, Int width, Int height) {
  Float ddx = sample(f, x + 1, y, width, height) - 2.0f * sample(f, x, y, width, height) + sample(f, x - 1, y, width, height);
  Float ddy = sample(f, x, y + 1, width, height) - 2.0f * sample(f, x, y, width, height) + sample(f, x, y - 1, width, height);
  return ddx + ddy;
}

KJIT_KERNEL(wave_displace, (Array<Float> hcurrent, Array<Float> hprevious, Int width, Int height, Float center_x,
                            Float center_y, Float r, Float mag, Float t)) {
  Int i = tid();
  Int x = i % width, y = i / width;
  Float dx = Float(x) - center_x, dy = Float(y) - center_y;
  Float dist_sq = dx * dx + dy * dy;
  If(dist_sq < r * r, [&] {
    Float h = mag * sin(t);
    hcurrent[i] = h;
    hprevious[i] = h;
  });
}

KJIT_KERNEL(wave_solve, (Array<Float> hprevious, Array<Float> hcurrent, Int width, Int height, Float inv_cell,
                         Float k_speed, Float k_damp, Float dt)) {
  Int i = tid();
  Int x = i % width, y = i / width;
  Float l = laplacian(hcurrent, x, y, width, height) * inv_cell * inv_cell;
  // integrate
  Float h1 = hcurrent[i], h0 = hprevious[i];
  Float h = 2.0f * h1 - h0 + dt * dt * (k_speed * l - k_damp * (h1 - h0));
  hprevious[i] = h;  // the buffers are swapped each substep
}

KJIT_KERNEL(grid_update, (Array<Float> heights, Array<Vec3f> vertices)) {
  Int i = tid();
  Float h = heights[i];
  Vec3f v = vertices[i];
  vertices[i] = Vec3f(v[0], h, v[2]);
}
}  // namespace wave

using warp_port::write_elements;

int main(int argc, char** argv) {
  int frames = 5;
  std::string out, out_vertices;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--frames")) frames = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--out")) out = argv[a + 1];
    else if (!std::strcmp(argv[a], "--out-vertices")) out_vertices = argv[a + 1];
  }
  // Warp's Example.__init__; Python's floats are doubles, rounded to float32 at each launch.
  const int width = 128, height = 128, substeps = 16;
  const double sim_dt = (1.0 / 60) / substeps, k_speed = 1.0, k_damp = 0.0, grid_size = 0.1, grid_displace = 0.5;
  double sim_time = 0.0;
  std::vector<kjit::vec3f> vertices;
  for (int z = 0; z < height; ++z)
    for (int x = 0; x < width; ++x)
      vertices.push_back(kjit::vec3f(float(double(x) * grid_size), 0.0f, float(double(z) * grid_size)));
  kjit::NdArray grid0 = kjit::zeros<float>({width * height}), grid1 = kjit::zeros<float>({width * height});
  kjit::NdArray verts = kjit::from_vector(vertices);
  const int n = width * height;

  auto step = [&] {  // Warp's Example.step
    for (int s = 0; s < substeps; ++s) {
      double cx = width / 2.0 + std::sin(sim_time) * width / 3;
      double cy = height / 2.0 + std::cos(sim_time) * height / 3;
      kjit::launch(wave::wave_displace, n, grid0, grid1, width, height, cx, cy, 10.0, grid_displace, -M_PI * 0.5);
      kjit::launch(wave::wave_solve, n, grid0, grid1, width, height, 1.0 / grid_size, k_speed, k_damp, sim_dt);
      std::swap(grid0, grid1);
      sim_time += sim_dt;
    }
    kjit::launch(wave::grid_update, n, grid0, verts);
  };
  std::vector<double> ms;
  for (int f = 0; f < frames; ++f) {  // the first frame compiles (or loads from the cache)
    auto t0 = std::chrono::steady_clock::now();
    step();
    if (f > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  write_elements<float>(out, grid0);
  write_elements<kjit::vec3f>(out_vertices, verts);
  std::printf("wave %dx%d, %d frames: %.3f ms per frame (median of %zu)\n", width, height, frames,
              ms.empty() ? 0.0 : ms[ms.size() / 2], ms.size());
  return 0;
}
