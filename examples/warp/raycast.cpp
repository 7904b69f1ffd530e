// examples/warp/raycast.cpp — Warp 1.19's warp/examples/core/example_raycast.py in kjit: one
// camera ray per pixel cast against a triangle mesh (mesh_query_ray), the hit face's normal shown
// as a colour. Warp reads the Stanford bunny from bunny.usd and displays the image; this port
// reads the mesh's points (float32 xyz) and triangle indices (int32) from the files
// scripts/warp_examples.py exports from that USD file, writes the pixels (float32 rgb) to --out and
// prints the milliseconds per frame, for scripts/warp_examples.sh to compare with Warp's.
// Usage: warp_raycast --points FILE --indices FILE [--width 1024] [--height 1024] [--frames N] [--out FILE]
//        [--hits FILE]   (also each pixel's t, u, v and face: float32 x 4)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "port_output.hpp"

namespace raycast {
using namespace kjit::dsl;
KJIT_MODULE(warp_raycast)

KJIT_KERNEL(draw, (Value<Mesh> mesh, Vec3f cam_pos, Int width, Int height, Array<Vec3f> pixels)) {
  Int t = tid();
  Int x = t % width;
  Int y = t / width;
  Float sx = 2.0f * Float(x) / Float(height) - 1.0f;
  Float sy = 2.0f * Float(y) / Float(height) - 1.0f;
  // The view ray.
  Vec3f ro = cam_pos;
  Vec3f rd = normalize(Vec3f(sx, sy, -1.0f));
  Value<MeshQueryRay> query = mesh_query_ray(mesh, ro, rd, 1.0e6f);
  pixels[t] = where(query.result(), query.normal() * 0.5f + Vec3f(0.5f, 0.5f, 0.5f), Vec3f(0.0f, 0.0f, 0.0f));
}
// draw's query, its hit written out per pixel: (t, u, v, face as a float; all 0 and face -1 on a
// miss), for comparing the hits themselves with Warp's (--hits).
KJIT_KERNEL(hits, (Value<Mesh> mesh, Vec3f cam_pos, Int width, Int height, Array<Vec4f> out)) {
  Int t = tid();
  Float sx = 2.0f * Float(t % width) / Float(height) - 1.0f;
  Float sy = 2.0f * Float(t / width) / Float(height) - 1.0f;
  Value<MeshQueryRay> query = mesh_query_ray(mesh, cam_pos, normalize(Vec3f(sx, sy, -1.0f)), 1.0e6f);
  out[t] = Vec4f(query.t(), query.u(), query.v(), where(query.result(), Float(query.face()), -1.0f));
}
}  // namespace raycast

int main(int argc, char** argv) {
  int width = 1024, height = 1024, frames = 5;
  std::string points_file, indices_file, out, hits_out;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string k = argv[a];
    if (k == "--points") points_file = argv[a + 1];
    else if (k == "--indices") indices_file = argv[a + 1];
    else if (k == "--width") width = std::atoi(argv[a + 1]);
    else if (k == "--height") height = std::atoi(argv[a + 1]);
    else if (k == "--frames") frames = std::atoi(argv[a + 1]);
    else if (k == "--out") out = argv[a + 1];
    else if (k == "--hits") hits_out = argv[a + 1];
    else { std::fprintf(stderr, "unknown option %s\n", k.c_str()); return 2; }
  }
  const std::vector<kjit::vec3f> points = warp_port::read_elements<kjit::vec3f>(points_file);
  const std::vector<int> indices = warp_port::read_elements<int>(indices_file);
  if (points.empty() || indices.empty()) return 1;
  kjit::Mesh mesh(kjit::from_vector(points), kjit::from_vector(indices));
  const int64_t n = int64_t(width) * height;
  kjit::NdArray pixels = kjit::zeros<kjit::vec3f>({n});
  // The plain body thread after thread: each ray's traversal takes its own path (GEOMETRY.md).
  kjit::ModuleOptions options = kjit::module("warp_raycast").options();
  options.cpu_lanes = false;
  kjit::module("warp_raycast").set_options(options);
  const double ms = warp_port::median_ms(frames, [&] {
    kjit::launch(raycast::draw, n, mesh, kjit::vec3f{{0.0f, 1.0f, 2.0f}}, width, height, pixels);
  });
  std::printf("%zu points, %zu triangles, %d x %d rays\n", points.size(), indices.size() / 3, width, height);
  std::printf("%.3f ms per frame\n", ms);
  warp_port::write_elements<kjit::vec3f>(out, pixels);
  if (!hits_out.empty()) {
    kjit::NdArray hits = kjit::zeros<kjit::vec4f>({n});
    kjit::launch(raycast::hits, n, mesh, kjit::vec3f{{0.0f, 1.0f, 2.0f}}, width, height, hits);
    warp_port::write_elements<kjit::vec4f>(hits_out, hits);
  }
  return 0;
}
