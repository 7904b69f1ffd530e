// examples/warp/mesh.cpp — Warp 1.19's warp/examples/core/example_mesh.py in kjit: 1000
// particles fall onto the Stanford bunny, which waves (its points move every step, then
// kjit::Mesh::refit), and are pushed out of it by position-based dynamics against the closest
// point with its sign (mesh_query_point_sign_normal). Warp reads the bunny from bunny.usd,
// draws the particles with numpy's random generator and renders them; this port reads the
// mesh's points (float32 xyz, scaled here by --scale as Warp's example scales them) and
// triangle indices (int32) and the particles' initial positions (float32 xyz) from the files
// scripts/warp_examples.py exports, writes the final positions then velocities (float32 xyz
// each) to --out and prints the milliseconds per frame, for scripts/warp_examples.sh to
// compare with Warp's.
// Usage: warp_mesh --points FILE --indices FILE --init FILE [--scale 10] [--frames 500] [--out FILE]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "port_output.hpp"

namespace mesh_example {
using namespace kjit::dsl;
KJIT_MODULE(warp_mesh)

KJIT_KERNEL(deform, (Array<Vec3f> positions, Float t)) {
  Int i = tid();
  Vec3f x = positions[i];
  Float offset = -sin(x.x()) * 0.02f;
  Float scale = sin(t);
  positions[i] = x + Vec3f(0.0f, offset * scale, 0.0f);
}

KJIT_KERNEL(simulate, (Array<Vec3f> positions, Array<Vec3f> velocities, Value<Mesh> mesh, Float margin, Float dt)) {
  Int i = tid();
  Vec3f x = positions[i];
  Vec3f v0 = velocities[i];
  Vec3f v = v0 + Vec3f(0.0f, 0.0f - 9.8f, 0.0f) * dt - v0 * 0.1f * dt;
  Var<Vec3f> xpred = x + v * dt;
  const float max_dist = 1.5f;
  Value<MeshQueryPoint> query = mesh_query_point_sign_normal(mesh, xpred, max_dist);
  If(query.result(), [&] {
    Vec3f p = mesh_eval_position(mesh, query.face(), query.u(), query.v());
    Vec3f delta = xpred - p;
    Float dist = length(delta) * query.sign();
    Float err = dist - margin;
    // The mesh collision: out along the signed direction to the surface, to the margin.
    If(err < 0.0f, [&] {
      Vec3f n = normalize(delta) * query.sign();
      xpred = xpred - n * err;
    });
  });
  // The position-based update: the velocity is the move over the step.
  positions[i] = xpred;
  velocities[i] = (xpred - x) * (1.0f / dt);
}
}  // namespace mesh_example

int main(int argc, char** argv) {
  int frames = 500;
  float scale = 10.0f;
  std::string points_file, indices_file, init_file, out;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string k = argv[a];
    if (k == "--points") points_file = argv[a + 1];
    else if (k == "--indices") indices_file = argv[a + 1];
    else if (k == "--init") init_file = argv[a + 1];
    else if (k == "--scale") scale = float(std::atof(argv[a + 1]));
    else if (k == "--frames") frames = std::atoi(argv[a + 1]);
    else if (k == "--out") out = argv[a + 1];
    else { std::fprintf(stderr, "unknown option %s\n", k.c_str()); return 2; }
  }
  std::vector<kjit::vec3f> points = warp_port::read_elements<kjit::vec3f>(points_file);
  const std::vector<int> indices = warp_port::read_elements<int>(indices_file);
  const std::vector<kjit::vec3f> init = warp_port::read_elements<kjit::vec3f>(init_file);
  if (points.empty() || indices.empty() || init.empty()) return 1;
  for (kjit::vec3f& p : points) p = p * scale;  // float32 products, as numpy's on USD's points
  kjit::Mesh mesh(kjit::from_vector(points), kjit::from_vector(indices));
  const int64_t num_particles = int64_t(init.size());
  kjit::NdArray positions = kjit::from_vector(init);
  kjit::NdArray velocities = kjit::zeros<kjit::vec3f>({num_particles});
  // Python floats in Warp's example, passed to the kernels as float32.
  const double sim_dt = 1.0 / 60.0, sim_margin = 0.1;
  double sim_time = 0.0;
  // Each particle's traversal takes its own path: the plain body thread after thread (GEOMETRY.md).
  kjit::ModuleOptions options = kjit::module("warp_mesh").options();
  options.cpu_lanes = false;
  kjit::module("warp_mesh").set_options(options);
  auto step = [&] {
    kjit::launch(mesh_example::deform, int64_t(points.size()), mesh.points(), float(sim_time));
    mesh.refit();  // the BVH's boxes follow the moved points
    kjit::launch(mesh_example::simulate, num_particles, positions, velocities, mesh, float(sim_margin),
                 float(sim_dt));
    sim_time += sim_dt;
  };
  // The first frame untimed (it compiles or loads), then frames - 1: `frames` in all, as Warp's.
  const double ms = frames > 0 ? warp_port::median_ms(frames - 1, step) : 0.0;
  std::printf("%zu points, %zu triangles, %lld particles, %d frames\n", points.size(), indices.size() / 3,
              static_cast<long long>(num_particles), frames);
  std::printf("%.4f ms per frame\n", ms);
  warp_port::write_elements<kjit::vec3f>(out, {positions, velocities});
  return 0;
}
