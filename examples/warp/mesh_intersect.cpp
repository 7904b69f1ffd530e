// examples/warp/mesh_intersect.cpp — Warp 1.19's warp/examples/core/example_mesh_intersect.py in
// kjit: whether a cube meets a sphere under each of 1024 random rigid transforms, one thread per
// (transform, cube face): the face's box in the sphere's frame selects the sphere's faces to test
// (mesh_query_aabb), each pair tested with intersect_tri_tri, and the first hit marks the
// transform. Warp reads both meshes from cube.usd and sphere.usd, draws the transforms with
// numpy's random generator and renders the pairs; this port reads the meshes' points (float32
// xyz) and indices (int32) and the transforms (float32 p, q: 7 each) from the files
// scripts/warp_examples.py exports, writes the marks (int32, 1 for a pair that meets) to --out
// and prints the milliseconds per frame, for scripts/warp_examples.sh to compare with Warp's.
// Usage: warp_mesh_intersect --query-points FILE --query-indices FILE --points FILE --indices FILE
//        --xforms FILE [--frames N] [--out FILE]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "port_output.hpp"

namespace mesh_intersect {
using namespace kjit::dsl;
KJIT_MODULE(warp_mesh_intersect)

Vec3f cw_min(const Vec3f& a, const Vec3f& b) { return Vec3f(min(a.x(), b.x()), min(a.y(), b.y()), min(a.z(), b.z())); }
Vec3f cw_max(const Vec3f& a, const Vec3f& b) { return Vec3f(max(a.x(), b.x()), max(a.y(), b.y()), max(a.z(), b.z())); }

KJIT_KERNEL(intersect, (Value<Mesh> mesh_0, Value<Mesh> mesh_1, Int num_faces, Array<Transformf> xforms,
                        Array<int> result)) {
  Int t = tid();
  // mesh_0 is the query mesh: one thread per face of it and transform, tested against mesh_1's BVH.
  Int face = t % num_faces;
  Int batch = t / num_faces;
  // The transform from mesh_0's frame to mesh_1's; the query triangle in mesh_1's frame.
  Transformf xform = xforms[batch];
  Vec3f v0 = transform_point(xform, mesh_eval_position(mesh_0, face, 1.0f, 0.0f));
  Vec3f v1 = transform_point(xform, mesh_eval_position(mesh_0, face, 0.0f, 1.0f));
  Vec3f v2 = transform_point(xform, mesh_eval_position(mesh_0, face, 0.0f, 0.0f));
  Vec3f lower = cw_min(cw_min(v0, v1), v2);
  Vec3f upper = cw_max(cw_max(v0, v1), v2);
  auto query = mesh_query_aabb(mesh_1, lower, upper);
  Var<int32_t> f = 0;
  While([&] { return mesh_query_aabb_next(query, f); }, [&] {
    Vec3f u0 = mesh_eval_position(mesh_1, f, 1.0f, 0.0f);
    Vec3f u1 = mesh_eval_position(mesh_1, f, 0.0f, 1.0f);
    Vec3f u2 = mesh_eval_position(mesh_1, f, 0.0f, 0.0f);
    // The first pair of triangles that meets marks the transform (plain stores of 1: any order).
    If(intersect_tri_tri(v0, v1, v2, u0, u1, u2) > 0, [&] {
      result[batch] = 1;
      Return();
    });
  });
}
}  // namespace mesh_intersect

namespace {
/// A mesh from its files (points, indices); empty when either cannot be read.
kjit::Mesh read_mesh(const std::string& points_file, const std::string& indices_file) {
  const std::vector<kjit::vec3f> points = warp_port::read_elements<kjit::vec3f>(points_file);
  const std::vector<int> indices = warp_port::read_elements<int>(indices_file);
  if (points.empty() || indices.empty()) return {};
  return kjit::Mesh(kjit::from_vector(points), kjit::from_vector(indices));
}
}  // namespace

int main(int argc, char** argv) {
  int frames = 5;
  std::string query_points, query_indices, points, indices, xforms_file, out;
  for (int a = 1; a + 1 < argc; a += 2) {
    std::string k = argv[a];
    if (k == "--query-points") query_points = argv[a + 1];
    else if (k == "--query-indices") query_indices = argv[a + 1];
    else if (k == "--points") points = argv[a + 1];
    else if (k == "--indices") indices = argv[a + 1];
    else if (k == "--xforms") xforms_file = argv[a + 1];
    else if (k == "--frames") frames = std::atoi(argv[a + 1]);
    else if (k == "--out") out = argv[a + 1];
    else { std::fprintf(stderr, "unknown option %s\n", k.c_str()); return 2; }
  }
  kjit::Mesh mesh_0 = read_mesh(query_points, query_indices), mesh_1 = read_mesh(points, indices);
  const std::vector<kjit::transformf> xforms = warp_port::read_elements<kjit::transformf>(xforms_file);
  if (mesh_0.empty() || mesh_1.empty() || xforms.empty()) return 1;
  const int64_t query_count = int64_t(xforms.size());
  const int num_faces = int(mesh_0.num_faces());
  kjit::NdArray xforms_array = kjit::from_vector(xforms);
  kjit::NdArray result = kjit::zeros<int>({query_count});
  // Each thread's traversal takes its own path: the plain body thread after thread (GEOMETRY.md).
  kjit::ModuleOptions options = kjit::module("warp_mesh_intersect").options();
  options.cpu_lanes = false;
  kjit::module("warp_mesh_intersect").set_options(options);
  const double ms = warp_port::median_ms(frames, [&] {
    kjit::launch(mesh_intersect::intersect, int64_t(num_faces) * query_count, mesh_0, mesh_1, num_faces,
                 xforms_array, result);
  });
  int meeting = 0;
  for (int r : result.to_vector<int>()) meeting += r;
  std::printf("%d query faces, %lld transforms, %lld faces tested against: %d pairs meet\n", num_faces,
              static_cast<long long>(query_count), static_cast<long long>(mesh_1.num_faces()), meeting);
  std::printf("%.4f ms per frame\n", ms);
  warp_port::write_elements<int>(out, result);
  return 0;
}
