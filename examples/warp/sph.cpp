// examples/warp/sph.cpp — Warp 1.19's warp/examples/core/example_sph.py in kjit: smoothed-particle
// hydrodynamics of a block of fluid released in the corner of an 80^3 box, neighbours found
// through a hash grid rebuilt every step (threads take their particle in cell order). Warp
// renders the particles; this port writes the final positions then the velocities (float32 xyz
// each) to --out, and prints the milliseconds per frame, for
// scripts/warp_examples.sh to compare with Warp's. --smoothing-length sets the particle count as
// in Warp's example (0.8: 62,500 particles, 40 steps a frame).
// Usage: warp_sph [--smoothing-length 0.8] [--frames N] [--out FILE]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/hash_grid.hpp"
#include "port_output.hpp"

namespace sph {
using namespace kjit::dsl;
KJIT_MODULE(warp_sph)

Float square(const Float& x) { return x * x; }
Float cube(const Float& x) { return x * x * x; }

Float density_kernel(const Vec3f& xyz, const Float& smoothing_length) {
  Float distance = dot(xyz, xyz);
  return max(cube(square(smoothing_length) - distance), Float(0.0f));
}

Vec3f diff_pressure_kernel(const Vec3f& xyz, const Float& pressure, const Float& neighbor_pressure,
                           const Float& neighbor_rho, const Float& smoothing_length) {
  Float distance = sqrt(dot(xyz, xyz));
  Var<Vec3f> r = Vec3f(0.0f);
  If(distance < smoothing_length, [&] {
    Vec3f term_1 = -xyz / distance;
    Float term_2 = (neighbor_pressure + pressure) / (2.0f * neighbor_rho);
    Float term_3 = square(smoothing_length - distance);
    r = term_1 * term_2 * term_3;
  });
  return r;
}

Vec3f diff_viscous_kernel(const Vec3f& xyz, const Vec3f& v, const Vec3f& neighbor_v, const Float& neighbor_rho,
                          const Float& smoothing_length) {
  Float distance = sqrt(dot(xyz, xyz));
  Var<Vec3f> r = Vec3f(0.0f);
  If(distance < smoothing_length, [&] {
    Vec3f term_1 = (neighbor_v - v) / neighbor_rho;
    Float term_2 = smoothing_length - distance;
    r = term_1 * term_2;
  });
  return r;
}

KJIT_KERNEL(compute_density, (Value<HashGrid> grid, Array<Vec3f> particle_x, Array<float> particle_rho,
                              Float density_normalization, Float smoothing_length)) {
  Int i = hash_grid_point_id(grid, tid());  // threads in cell order
  Vec3f x = particle_x[i];
  Var<float> rho = 0.0f;
  auto neighbors = hash_grid_query(grid, x, smoothing_length);
  Var<Int> index = 0;
  While([&] { return hash_grid_query_next(neighbors, index); },
        [&] { rho = rho + density_kernel(x - particle_x[index], smoothing_length); });
  particle_rho[i] = density_normalization * rho;
}

KJIT_KERNEL(get_acceleration, (Value<HashGrid> grid, Array<Vec3f> particle_x, Array<Vec3f> particle_v,
                               Array<float> particle_rho, Array<Vec3f> particle_a, Float isotropic_exp,
                               Float base_density, Float gravity, Float pressure_normalization,
                               Float viscous_normalization, Float smoothing_length)) {
  Int i = hash_grid_point_id(grid, tid());
  Vec3f x = particle_x[i];
  Vec3f v = particle_v[i];
  Float rho = particle_rho[i];
  Float pressure = isotropic_exp * (rho - base_density);
  Var<Vec3f> pressure_force = Vec3f(0.0f), viscous_force = Vec3f(0.0f);
  auto neighbors = hash_grid_query(grid, x, smoothing_length);
  Var<Int> index = 0;
  While([&] { return hash_grid_query_next(neighbors, index); }, [&] {
    If(index != i, [&] {
      Vec3f neighbor_v = particle_v[index];
      Float neighbor_rho = particle_rho[index];
      Float neighbor_pressure = isotropic_exp * (neighbor_rho - base_density);
      Vec3f relative_position = particle_x[index] - x;
      pressure_force = pressure_force + diff_pressure_kernel(relative_position, pressure, neighbor_pressure,
                                                             neighbor_rho, smoothing_length);
      viscous_force = viscous_force + diff_viscous_kernel(relative_position, v, neighbor_v, neighbor_rho, smoothing_length);
    });
  });
  Vec3f force = pressure_normalization * pressure_force + viscous_normalization * viscous_force;
  particle_a[i] = force / rho + Vec3f(0.0f, gravity, 0.0f);
}

KJIT_KERNEL(apply_bounds, (Array<Vec3f> particle_x, Array<Vec3f> particle_v, Float damping_coef, Float width,
                           Float height, Float length)) {
  Int tid_ = tid();
  Var<Vec3f> x = particle_x[tid_];
  Var<Vec3f> v = particle_v[tid_];
  (void)height;  // Warp's example clamps no ceiling either
  If(x.x() < 0.0f, [&] {
    x = Vec3f(0.0f, x.y(), x.z());
    v = Vec3f(v.x() * damping_coef, v.y(), v.z());
  });
  If(x.x() > width, [&] {
    x = Vec3f(width, x.y(), x.z());
    v = Vec3f(v.x() * damping_coef, v.y(), v.z());
  });
  If(x.y() < 0.0f, [&] {
    x = Vec3f(x.x(), 0.0f, x.z());
    v = Vec3f(v.x(), v.y() * damping_coef, v.z());
  });
  If(x.z() < 0.0f, [&] {
    x = Vec3f(x.x(), x.y(), 0.0f);
    v = Vec3f(v.x(), v.y(), v.z() * damping_coef);
  });
  If(x.z() > length, [&] {
    x = Vec3f(x.x(), x.y(), length);
    v = Vec3f(v.x(), v.y(), v.z() * damping_coef);
  });
  particle_x[tid_] = x;
  particle_v[tid_] = v;
}

KJIT_KERNEL(kick, (Array<Vec3f> particle_v, Array<Vec3f> particle_a, Float dt)) {
  Int i = tid();
  particle_v[i] = particle_v[i] + particle_a[i] * dt;
}

KJIT_KERNEL(drift, (Array<Vec3f> particle_x, Array<Vec3f> particle_v, Float dt)) {
  Int i = tid();
  particle_x[i] = particle_x[i] + particle_v[i] * dt;
}

KJIT_KERNEL(initialize_particles, (Array<Vec3f> particle_x, Float smoothing_length, Float width, Float height,
                                   Float length)) {
  Int t = tid();
  Int nr_x = Int(width / 4.0f / smoothing_length);
  Int nr_y = Int(height / smoothing_length);
  Int nr_z = Int(length / 4.0f / smoothing_length);
  Float z = Float(t % nr_z);
  Float y = Float((t / nr_z) % nr_y);
  Float x = Float((t / (nr_z * nr_y)) % nr_x);
  Vec3f pos = smoothing_length * Vec3f(x, y, z);
  Var<UInt32> state = rand_init(123, t);
  // Warp evaluates a constructor's arguments left to right: the draws in that order.
  Float jx = randn(state);
  Float jy = randn(state);
  Float jz = randn(state);
  particle_x[t] = pos + 0.001f * smoothing_length * Vec3f(jx, jy, jz);
}
}  // namespace sph

int main(int argc, char** argv) {
  double smoothing_length = 0.8;
  int frames = 5;
  std::string out;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string k = argv[a];
    if (k == "--smoothing-length") smoothing_length = std::atof(argv[a + 1]);
    else if (k == "--frames") frames = std::atoi(argv[a + 1]);
    else if (k == "--out") out = argv[a + 1];
    else { std::fprintf(stderr, "unknown option %s\n", k.c_str()); return 2; }
  }
  // Warp's constants, computed in float64 as its Python does and passed as float32.
  const double width = 80.0, height = 80.0, length = 80.0, pi = 3.14159265358979323846;
  const double isotropic_exp = 20, base_density = 1.0, dynamic_visc = 0.025, damping_coef = -0.95, gravity = -0.1;
  const double particle_mass = 0.01 * std::pow(smoothing_length, 3), dt = 0.01 * smoothing_length;
  const int64_t n = int64_t(height * (width / 4.0) * (height / 4.0) / std::pow(smoothing_length, 3));
  const int steps = int(32 / smoothing_length);
  const double density_normalization = (315.0 * particle_mass) / (64.0 * pi * std::pow(smoothing_length, 9));
  const double pressure_normalization = -(45.0 * particle_mass) / (pi * std::pow(smoothing_length, 6));
  const double viscous_normalization = (45.0 * dynamic_visc * particle_mass) / (pi * std::pow(smoothing_length, 6));
  const float h = float(smoothing_length);

  kjit::NdArray x = kjit::zeros<kjit::vec3f>({n}), v = kjit::zeros<kjit::vec3f>({n}), a = kjit::zeros<kjit::vec3f>({n});
  kjit::NdArray rho = kjit::zeros<float>({n});
  kjit::launch(sph::initialize_particles, n, x, h, float(width), float(height), float(length));
  const int grid_size = int(height / (4.0 * smoothing_length));
  // The plain body thread after thread: each thread's neighbour loop runs its own number of
  // times over gathered points, which the cpu's lane functions run slower (GEOMETRY.md).
  kjit::ModuleOptions options = kjit::module("warp_sph").options();
  options.cpu_lanes = false;
  kjit::module("warp_sph").set_options(options);
  kjit::HashGrid grid(grid_size, grid_size, grid_size);
  grid.reserve(n);
  std::printf("%lld particles, %d steps a frame\n", static_cast<long long>(n), steps);
  auto frame = [&] {
    for (int s = 0; s < steps; ++s) {
      grid.build(x, h);
      kjit::launch(sph::compute_density, n, grid, x, rho, float(density_normalization), h);
      kjit::launch(sph::get_acceleration, n, grid, x, v, rho, a, float(isotropic_exp), float(base_density),
                   float(gravity), float(pressure_normalization), float(viscous_normalization), h);
      kjit::launch(sph::apply_bounds, n, x, v, float(damping_coef), float(width), float(height), float(length));
      kjit::launch(sph::kick, n, v, a, float(dt));
      kjit::launch(sph::drift, n, x, v, float(dt));
    }
  };
  // Frames run: the untimed first one plus `frames - 1` timed ones (the port's output after
  // `frames` frames, as Warp's after as many steps).
  const double ms = frames > 0 ? warp_port::median_ms(frames - 1, frame) : 0.0;
  warp_port::write_elements<kjit::vec3f>(out, {x, v});
  std::printf("%.3f ms per frame\n", ms);
  return 0;
}
