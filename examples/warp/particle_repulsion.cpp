// examples/warp/particle_repulsion.cpp — Warp 1.19's warp/examples/optim/example_particle_repulsion.py
// in kjit: particles of a 2-D periodic box repel each other through a Coulomb potential with a
// hard cutoff, their forces the potential's gradient taken in the kernel (grad(compute_potential),
// Warp's wp.grad), damped by their relative velocities; neighbours come from a periodic hash
// grid built once a frame (threads take their particle in cell order), 32 substeps a frame.
// Warp places the particles on the dark pixels of the NVIDIA logo resized to the box (Pillow)
// and plots them; this port starts from --init (float32 xyz, Warp's own initial positions,
// for scripts/warp_examples.py to compare the runs), else from the pixels outside a disk of
// radius N/4 (what Warp's example gets where the bench has no Pillow), writes the final
// positions then velocities (float32 xyz each) to --out, and prints the milliseconds per frame.
// Usage: warp_particle_repulsion [--grid 128] [--frames 10] [--substeps 32] [--init FILE] [--out FILE]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/hash_grid.hpp"
#include "port_output.hpp"

namespace repulsion {
using namespace kjit::dsl;
KJIT_MODULE(warp_particle_repulsion)

constexpr float kStrength = 1.0f;  // Warp's A
constexpr float kEps = 1e-6f;      // keeps the potential finite at distance 0
constexpr float kDamping = 0.5f;   // inter-particle damping
constexpr float kRadius = 3.0f;    // neighbour search radius, and the grid's cell size

/// `val` wrapped into [0, size).
Float periodic_wrap(const Float& val, const Float& size) {
  Var<Float> result = val % size;  // Warp's wp.mod: fmodf
  If(result < 0.0f, [&] { result = result + size; });
  return result;
}

/// The minimum-image offset of a coordinate difference `d` in a periodic box of `size`.
Float periodic_distance(const Float& d, const Float& size) {
  Float half_size = size * 0.5f;
  Var<Float> r = d;
  If(r > half_size, [&] { r = r - size; }).ElseIf(r < -half_size, [&] { r = r + size; });
  return r;
}

/// The potential energy of two particles `d` apart; its gradient is the repulsion.
inline const auto compute_potential = func("compute_potential", [](Vec3f d) { return kStrength / (length(d) + kEps); });

KJIT_KERNEL(compute_forces, (Value<HashGrid> grid, Array<Vec3f> x, Array<Vec3f> v, Array<Vec3f> f, Float size)) {
  Int i = hash_grid_point_id(grid, tid());  // threads in cell order
  Vec3f x_i = x[i];
  Vec3f v_i = v[i];
  auto neighbors = hash_grid_query(grid, x_i, kRadius);  // the grid is periodic
  Var<Vec3f> f_i = Vec3f(0.0f);
  Var<Int> index = 0;
  While([&] { return hash_grid_query_next(neighbors, index); }, [&] {
    If(index != i, [&] {
      Vec3f x_j = x[index];
      Vec3f v_j = v[index];
      Float dx = periodic_distance(x_i.x() - x_j.x(), size);
      Float dy = periodic_distance(x_i.y() - x_j.y(), size);
      Vec3f d = Vec3f(dx, dy, 0.0f);
      f_i = f_i - grad(compute_potential)(d);  // the repulsive force
      Vec3f v_rel = v_i - v_j;
      f_i = f_i - kDamping * v_rel;  // damping by the relative velocity
    });
  });
  f[i] = f_i;
}

KJIT_KERNEL(integrate, (Array<Vec3f> x, Array<Vec3f> v, Array<Vec3f> f, Float dt, Float size)) {
  Int t = tid();
  Vec3f v_new = v[t] + f[t] * dt;
  Vec3f x_new = x[t] + v_new * dt;
  v[t] = v_new;
  x[t] = Vec3f(periodic_wrap(x_new.x(), size), periodic_wrap(x_new.y(), size), 0.0f);  // a torus
}
}  // namespace repulsion

int main(int argc, char** argv) {
  int n_grid = 128, frames = 10, substeps = 32;
  std::string out, init;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string k = argv[a];
    if (k == "--grid") n_grid = std::atoi(argv[a + 1]);
    else if (k == "--frames") frames = std::atoi(argv[a + 1]);
    else if (k == "--substeps") substeps = std::atoi(argv[a + 1]);
    else if (k == "--init") init = argv[a + 1];
    else if (k == "--out") out = argv[a + 1];
    else { std::fprintf(stderr, "unknown option %s\n", k.c_str()); return 2; }
  }
  std::vector<kjit::vec3f> points;
  if (!init.empty()) {
    points = warp_port::read_elements<kjit::vec3f>(init);
    if (points.empty()) return 1;
  } else {  // a particle on each pixel (row, column) outside the disk, in numpy's argwhere order
    for (int r = 0; r < n_grid; ++r)
      for (int c = 0; c < n_grid; ++c) {
        const double y = r - n_grid / 2.0, z = c - n_grid / 2.0;
        if (!(y * y + z * z < n_grid * n_grid / 16.0)) points.push_back(kjit::vec3f{{float(r), float(c), 0.0f}});
      }
  }
  const int64_t n = int64_t(points.size());
  const float dt = float(1.0 / 60.0 / substeps), size = float(n_grid);  // Warp's, in float64 then float32
  kjit::NdArray x = kjit::from_vector(points), v = kjit::zeros<kjit::vec3f>({n}), f = kjit::zeros<kjit::vec3f>({n});
  // Forward only, as Warp's kernels (enable_backward=False): the kernels update x and v in
  // place, and grad() is forward code. The plain body thread after thread: the neighbour
  // loop's trip counts and gathers differ per particle (GEOMETRY.md).
  kjit::ModuleOptions options = kjit::module("warp_particle_repulsion").options();
  options.enable_adjoint = false;
  options.cpu_lanes = false;
  kjit::module("warp_particle_repulsion").set_options(options);
  kjit::HashGrid grid(n_grid, n_grid, 1);  // 3-D, one cell deep: the simulation is 2-D
  std::printf("%lld particles, %d substeps a frame\n", static_cast<long long>(n), substeps);
  auto frame = [&] {
    grid.build(x, repulsion::kRadius);
    for (int s = 0; s < substeps; ++s) {
      kjit::launch(repulsion::compute_forces, n, grid, x, v, f, size);
      kjit::launch(repulsion::integrate, n, x, v, f, dt, size);
    }
  };
  // The untimed first frame plus `frames - 1` timed ones: the state after `frames` frames.
  const double ms = frames > 0 ? warp_port::median_ms(frames - 1, frame) : 0.0;
  warp_port::write_elements<kjit::vec3f>(out, {x, v});
  std::printf("%.3f ms per frame\n", ms);
  return 0;
}
