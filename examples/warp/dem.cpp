// examples/warp/dem.cpp — Warp 1.19's warp/examples/core/example_dem.py in kjit: a block of
// particles thrown sideways onto the ground, with spring-damper contacts, Coulomb friction
// and cohesion between neighbours found through a hash grid (kjit::HashGrid, rebuilt every
// frame; threads take their particle in cell order). 64 substeps a frame as Warp's. Warp renders
// the particles; this port prints every 5th frame (the block lands near frame 19): the particles'
// mean height, the lowest one, the largest speed and the frame's milliseconds, then the median
// milliseconds per frame after the first, and writes the final positions then velocities
// (float32 xyz each) to --out. The block is smaller by default (8 x 16 x 8) than Warp's 32 x 64 x
// 32 so that it runs in seconds on a laptop's cores, its jitter from std::mt19937; --init reads
// the initial positions instead (float32 xyz: Warp's particle_grid, numpy's draws, for
// scripts/warp_examples.py to compare the runs).
// Usage: warp_dem [--nx 8] [--ny 16] [--nz 8] [--init FILE] [--frames 40] [--substeps 64] [--out FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/hash_grid.hpp"
#include "port_output.hpp"

namespace dem {
using namespace kjit::dsl;
KJIT_MODULE(warp_dem)

/// Normal spring-damper force plus Coulomb friction along the tangential velocity.
Vec3f contact_force(const Vec3f& n, const Vec3f& v, const Float& c, const Float& k_n, const Float& k_d, const Float& k_f,
                    const Float& k_mu) {
  Float vn = dot(n, v);
  Float fn = c * k_n + min(vn, Float(0.0f)) * k_d;
  Var<Vec3f> vt = v - n * vn;
  Float vs = length(vt);
  If(vs > 0.0f, [&] { vt = vt / vs; });
  Float ft = min(vs * k_f, k_mu * abs(fn));
  return -n * fn - vt * ft;
}

KJIT_KERNEL(apply_forces, (Value<HashGrid> grid, Array<Vec3f> particle_x, Array<Vec3f> particle_v, Array<Vec3f> particle_f,
                           Float radius, Float k_contact, Float k_damp, Float k_friction, Float k_mu)) {
  Int i = hash_grid_point_id(grid, tid());  // threads in cell order
  Vec3f x = particle_x[i];
  Vec3f v = particle_v[i];
  Var<Vec3f> f = Vec3f(0.0f, 0.0f, 0.0f);
  // ground contact, slightly cohesive
  Vec3f up = Vec3f(0.0f, 1.0f, 0.0f);
  Float c = dot(up, x);
  If(c < 0.02f, [&] { f = f + contact_force(up, v, c, k_contact, k_damp, 100.0f, 0.5f); });
  // particle contacts
  auto neighbours = hash_grid_query(grid, x, radius * 5.0f);
  Var<Int> index = 0;
  While([&] { return hash_grid_query_next(neighbours, index); }, [&] {
    If(index != i, [&] {
      Vec3f n = x - particle_x[index];
      Float d = length(n);
      Float err = d - radius * 2.0f;
      If(err <= 0.0075f, [&] { f = f + contact_force(n / d, v - particle_v[index], err, k_contact, k_damp, k_friction, k_mu); });
    });
  });
  particle_f[i] = f;
}

KJIT_KERNEL(integrate, (Array<Vec3f> x, Array<Vec3f> v, Array<Vec3f> f, Vec3f gravity, Float dt, Float inv_mass)) {
  Int i = tid();
  Vec3f v_new = v[i] + f[i] * inv_mass * dt + gravity * dt;
  v[i] = v_new;
  x[i] = x[i] + v_new * dt;
}
}  // namespace dem

int main(int argc, char** argv) {
  int nx = 8, ny = 16, nz = 8, frames = 40, substeps = 64;
  std::string out, init;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string k = argv[a];
    if (k == "--nx") nx = std::atoi(argv[a + 1]);
    else if (k == "--ny") ny = std::atoi(argv[a + 1]);
    else if (k == "--nz") nz = std::atoi(argv[a + 1]);
    else if (k == "--frames") frames = std::atoi(argv[a + 1]);
    else if (k == "--substeps") substeps = std::atoi(argv[a + 1]);
    else if (k == "--out") out = argv[a + 1];
    else if (k == "--init") init = argv[a + 1];
    else { std::fprintf(stderr, "unknown option %s\n", k.c_str()); return 2; }
  }
  const float point_radius = 0.1f, k_contact = 8000.0f, k_damp = 2.0f, k_friction = 1.0f, k_mu = 100000.0f, inv_mass = 64.0f;
  const float dt = 1.0f / 60.0f / float(substeps);
  // A jittered lattice of particles 2 radii apart above the ground, all moving along +z.
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> jitter(0.0f, point_radius * 0.1f);
  std::vector<kjit::vec3f> points;
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j)
      for (int k = 0; k < nz; ++k)
        points.push_back(kjit::vec3f{{float(i) * 2 * point_radius + jitter(rng), 0.5f + float(j) * 2 * point_radius + jitter(rng),
                                      float(k) * 2 * point_radius + jitter(rng)}});
  if (!init.empty()) {
    points = warp_port::read_elements<kjit::vec3f>(init);
    if (points.empty()) return 1;
  }
  const int64_t n = int64_t(points.size());
  kjit::NdArray x = kjit::from_vector(points);
  kjit::NdArray v = kjit::from_vector(std::vector<kjit::vec3f>(size_t(n), kjit::vec3f{{0.0f, 0.0f, 15.0f}}));
  kjit::NdArray f = kjit::zeros<kjit::vec3f>({n});
  // The plain body thread after thread: the neighbour loop's trip counts and gathers differ per
  // particle, which the cpu's 16-thread lane functions run slower (GEOMETRY.md).
  kjit::ModuleOptions options = kjit::module("warp_dem").options();
  options.cpu_lanes = false;
  kjit::module("warp_dem").set_options(options);
  kjit::HashGrid grid(128, 128, 128);
  std::printf("%lld particles, %d substeps a frame\n", static_cast<long long>(n), substeps);
  std::printf("frame  mean height  lowest  top speed      ms\n");
  double lowest_ever = 1e30, top_ever = 0;  // the ground holds and nothing gains energy
  std::vector<double> frame_ms;
  for (int frame = 0; frame < frames; ++frame) {
    const auto t0 = std::chrono::steady_clock::now();
    grid.build(x, point_radius * 5.0f);
    for (int s = 0; s < substeps; ++s) {
      kjit::launch(dem::apply_forces, n, grid, x, v, f, point_radius, k_contact, k_damp, k_friction, k_mu);
      kjit::launch(dem::integrate, n, x, v, f, kjit::vec3f{{0.0f, -9.8f, 0.0f}}, dt, inv_mass);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (frame > 0) frame_ms.push_back(ms);  // the first compiles or loads the module
    std::vector<kjit::vec3f> px = x.to_vector<kjit::vec3f>(), pv = v.to_vector<kjit::vec3f>();
    double mean = 0, lowest = 1e30, top = 0;
    for (int64_t i = 0; i < n; ++i) {
      mean += px[size_t(i)].c[1];
      lowest = std::min(lowest, double(px[size_t(i)].c[1]));
      const kjit::vec3f& q = pv[size_t(i)];
      top = std::max(top, std::sqrt(double(q.c[0]) * q.c[0] + double(q.c[1]) * q.c[1] + double(q.c[2]) * q.c[2]));
    }
    lowest_ever = std::min(lowest_ever, lowest), top_ever = std::max(top_ever, top);
    if (!std::isfinite(mean) || !std::isfinite(top)) top_ever = INFINITY;
    if ((frame + 1) % 5 == 0 || frame + 1 == frames)
      std::printf("%5d  %11.4f  %6.3f  %9.3f  %6.1f\n", frame + 1, mean / double(n), lowest, top, ms);
  }
  std::sort(frame_ms.begin(), frame_ms.end());
  std::printf("%.3f ms per frame\n", frame_ms.empty() ? 0.0 : frame_ms[frame_ms.size() / 2]);
  warp_port::write_elements<kjit::vec3f>(out, {x, v});
  // Thrown at 15 m/s from at most a few metres, no particle may pass through the ground by more
  // than its radius or get faster than the fall can make it.
  if (lowest_ever < -point_radius || !(top_ever < 25.0)) {
    std::fprintf(stderr, "dem: unphysical run: lowest height %.3f, top speed %.3f\n", lowest_ever, top_ever);
    return 1;
  }
  return 0;
}
