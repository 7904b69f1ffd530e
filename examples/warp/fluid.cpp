// examples/warp/fluid.cpp — Warp 1.19's warp/examples/core/example_fluid.py in kjit: a 2-D
// stable-fluids smoke on a 256x128 grid (an emitter, gravity, semi-Lagrangian advection) whose
// 100-iteration Jacobi pressure solve is captured once into a kjit::Graph and replayed every
// substep, as Warp's. Warp shows the density; this port writes it (float32, row-major) to --out
// and the velocity (float32 pairs) to --out-velocity, and prints the milliseconds per frame,
// for scripts/warp_examples.sh to compare with Warp's.
// Usage: warp_fluid [--frames N] [--out FILE] [--out-velocity FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "kjit/kjit.hpp"
#include "port_output.hpp"
#include "kjit/runtime/graph.hpp"

namespace fluid {
using namespace kjit::dsl;
KJIT_MODULE(warp_fluid)

constexpr int grid_width = 256, grid_height = 128;

Float lookup_float(const Array<Float, 2>& f, Int x, Int y) {
  return f(clamp(x, Int(0), Int(grid_width - 1)), clamp(y, Int(0), Int(grid_height - 1)));
}

Float sample_float(const Array<Float, 2>& f, Float x, Float y) {
  Int lx = Int(floor(x)), ly = Int(floor(y));
  Float tx = x - Float(lx), ty = y - Float(ly);
  Float s0 = lerp(lookup_float(f, lx, ly), lookup_float(f, lx + 1, ly), tx);
  Float s1 = lerp(lookup_float(f, lx, ly + 1), lookup_float(f, lx + 1, ly + 1), tx);
  return lerp(s0, s1, ty);
}

/// Zero outside the grid: returns early there, as Warp's.
inline const auto lookup_vel = func("lookup_vel", [](Array<Vec2f, 2> f, Int x, Int y) {
  If(x < 0 || x >= grid_width, [&] { Return(Vec2f(0.0f, 0.0f)); });
  If(y < 0 || y >= grid_height, [&] { Return(Vec2f(0.0f, 0.0f)); });
  return Vec2f(f(x, y));
});

Vec2f sample_vel(const Array<Vec2f, 2>& f, Float x, Float y) {
  Int lx = Int(floor(x)), ly = Int(floor(y));
  Float tx = x - Float(lx), ty = y - Float(ly);
  Vec2f s0 = lerp(lookup_vel(f, lx, ly), lookup_vel(f, lx + 1, ly), tx);
  Vec2f s1 = lerp(lookup_vel(f, lx, ly + 1), lookup_vel(f, lx + 1, ly + 1), tx);
  return lerp(s0, s1, ty);
}

KJIT_KERNEL(advect, (Array<Vec2f, 2> u0, Array<Vec2f, 2> u1, Array<Float, 2> rho0, Array<Float, 2> rho1, Float dt)) {
  auto [i, j] = tid<2>();
  Vec2f u = u0(i, j);
  // trace backward
  Vec2f p = Vec2f(Float(i), Float(j)) - u * dt;
  // advect
  u1(i, j) = sample_vel(u0, p[0], p[1]);
  rho1(i, j) = sample_float(rho0, p[0], p[1]);
}

KJIT_KERNEL(divergence, (Array<Vec2f, 2> u, Array<Float, 2> div)) {
  auto [i, j] = tid<2>();
  If(i == grid_width - 1 || j == grid_height - 1, [&] { Return(); });
  Float dx = (u(i + 1, j)[0] - u(i, j)[0]) * 0.5f;
  Float dy = (u(i, j + 1)[1] - u(i, j)[1]) * 0.5f;
  div(i, j) = dx + dy;
}

KJIT_KERNEL(pressure_solve, (Array<Float, 2> p0, Array<Float, 2> p1, Array<Float, 2> div)) {
  auto [i, j] = tid<2>();
  Float s1 = lookup_float(p0, i - 1, j), s2 = lookup_float(p0, i + 1, j);
  Float s3 = lookup_float(p0, i, j - 1), s4 = lookup_float(p0, i, j + 1);
  // Jacobi update
  Float err = s1 + s2 + s3 + s4 - div(i, j);
  p1(i, j) = err * 0.25f;
}

KJIT_KERNEL(pressure_apply, (Array<Float, 2> p, Array<Vec2f, 2> u)) {
  auto [i, j] = tid<2>();
  If(i == 0 || i == grid_width - 1 || j == 0 || j == grid_height - 1, [&] { Return(); });
  // pressure gradient
  Vec2f f_p = Vec2f(p(i + 1, j) - p(i - 1, j), p(i, j + 1) - p(i, j - 1)) * 0.5f;
  u(i, j) = u(i, j) - f_p;
}

KJIT_KERNEL(integrate, (Array<Vec2f, 2> u, Array<Float, 2> rho, Float dt)) {
  auto [i, j] = tid<2>();
  // gravity
  Vec2f f_g = Vec2f(-90.8f, 0.0f) * rho(i, j);
  // integrate
  u(i, j) = u(i, j) + dt * f_g;
  // fade
  rho(i, j) = rho(i, j) * (1.0f - 0.1f * dt);
}

KJIT_KERNEL(init, (Array<Float, 2> rho, Array<Vec2f, 2> u, Int radius, Vec2f dir)) {
  auto [i, j] = tid<2>();
  Float d = length(Vec2f(Float(i - grid_width / 2), Float(j - grid_height / 2)));
  If(d < Float(radius), [&] {
    rho(i, j) = 1.0f;
    u(i, j) = dir;
  });
}
}  // namespace fluid

using warp_port::write_elements;

int main(int argc, char** argv) {
  int frames = 5;
  std::string out, out_velocity;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--frames")) frames = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--out")) out = argv[a + 1];
    else if (!std::strcmp(argv[a], "--out-velocity")) out_velocity = argv[a + 1];
  }
  // Warp's Example.__init__ (Python's floats are doubles, rounded to float32 at each launch).
  const double frame_dt = 1.0 / 60;
  const int substeps = 2, iterations = 100;
  const double sim_dt = frame_dt / substeps;
  double sim_time = 0.0;
  const kjit::Dims shape{fluid::grid_width, fluid::grid_height};
  auto grid = [] { return kjit::zeros<float>({fluid::grid_width, fluid::grid_height}); };
  auto velocity = [] { return kjit::zeros<kjit::vec2f>({fluid::grid_width, fluid::grid_height}); };
  kjit::NdArray u0 = velocity(), u1 = velocity(), rho0 = grid(), rho1 = grid(), p0 = grid(), p1 = grid(), div = grid();

  // The pressure solve, captured once: each iteration reads one field and writes the other,
  // and the swaps (an even number) leave p0 naming the field the last iteration wrote.
  kjit::Graph pressure = kjit::capture(kjit::Device::cpu(), [&](const kjit::Stream&) {
    for (int k = 0; k < iterations; ++k) {
      kjit::launch(fluid::pressure_solve, shape, p0, p1, div);
      std::swap(p0, p1);
    }
  });

  auto step = [&] {  // Warp's Example.step
    for (int s = 0; s < substeps; ++s) {
      const double dt = sim_dt, speed = 400.0;
      const double angle = std::sin(sim_time * 4.0) * 1.5;
      const kjit::vec2f vel(float(std::cos(angle) * speed), float(std::sin(angle) * speed));
      kjit::launch(fluid::init, shape, rho0, u0, 5, vel);  // update emitters
      kjit::launch(fluid::integrate, shape, u0, rho0, dt);  // force integrate
      kjit::launch(fluid::divergence, shape, u0, div);
      p0.zero();  // pressure solve
      p1.zero();
      pressure.launch();
      kjit::launch(fluid::pressure_apply, shape, p0, u0);  // velocity update
      kjit::launch(fluid::advect, shape, u0, u1, rho0, rho1, dt);  // semi-Lagrangian advection
      std::swap(u0, u1);
      std::swap(rho0, rho1);
      sim_time += dt;
    }
  };
  std::vector<double> ms;
  for (int f = 0; f < frames; ++f) {  // the first frame compiles (or loads from the cache)
    auto t0 = std::chrono::steady_clock::now();
    step();
    if (f > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  write_elements<float>(out, rho0);
  write_elements<kjit::vec2f>(out_velocity, u0);
  std::printf("fluid %dx%d, %d frames: %.3f ms per frame (median of %zu)\n", fluid::grid_width, fluid::grid_height,
              frames, ms.empty() ? 0.0 : ms[ms.size() / 2], ms.size());
  return 0;
}
