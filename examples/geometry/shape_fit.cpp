// examples/geometry/shape_fit.cpp — shape optimisation through a mesh query: a sphere mesh's
// vertices move by gradient descent (kjit::Tape + kjit::optim::Adam) until its surface passes
// through target points sampled on an ellipsoid. The loss is each target's squared distance
// to the closest point of the mesh (mesh_query_point_no_sign, then mesh_eval_position at the
// face and barycentrics it found), plus a small edge-length term that keeps the triangles
// even. Its gradient with respect to the mesh's points comes through the query itself: kjit
// differentiates the closest point in the face's vertices, where Warp's mesh adjoints drop
// that gradient. The BVH is refitted after every step.
// Usage: kjit_shape_fit [--iters N] [--targets N] [--subdivisions N]
// Prints the loss as it goes and the RMS distance before and after; exits 1 if the fit did not
// bring the RMS distance down at least five-fold.
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"
#include "kjit/runtime/optim.hpp"
#include "kjit/runtime/tape.hpp"

namespace shape_fit {
using namespace kjit::dsl;
KJIT_MODULE(example_shape_fit)

/// loss += scale |closest point of the mesh - target|^2 for each target.
KJIT_KERNEL(distance_loss, (Value<Mesh> mesh, Array<Vec3f> targets, Float scale, Array<float> loss)) {
  Int i = tid();
  Vec3f p = targets[i];
  Value<MeshQueryPoint> q = mesh_query_point_no_sign(mesh, p, 1.0e6f);
  Vec3f d = mesh_eval_position(mesh, q.face(), q.u(), q.v()) - p;
  atomic_add(loss, 0, scale * dot(d, d));
}

/// loss += weight |a - b|^2 for each edge (a, b): a membrane that keeps the triangles even.
KJIT_KERNEL(edge_loss, (Array<Vec3f> points, Array<int> edges, Float weight, Array<float> loss)) {
  Int e = tid();
  Vec3f d = points[edges[2 * e]] - points[edges[2 * e + 1]];
  atomic_add(loss, 0, weight * dot(d, d));
}
}  // namespace shape_fit

namespace {

using kjit::vec3f;

/// An icosahedron subdivided `levels` times, its vertices on the unit sphere.
void icosphere(int levels, std::vector<vec3f>& points, std::vector<int>& faces) {
  const float t = (1.0f + std::sqrt(5.0f)) / 2.0f;
  points = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
            {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  faces = {0, 11, 5, 0, 5, 1, 0, 1, 7, 0, 7, 10, 0, 10, 11, 1, 5, 9, 5, 11, 4, 11, 10, 2, 10, 7, 6, 7, 1, 8,
           3, 9, 4, 3, 4, 2, 3, 2, 6, 3, 6, 8, 3, 8, 9, 4, 9, 5, 2, 4, 11, 6, 2, 10, 8, 6, 7, 9, 8, 1};
  auto unit = [](vec3f p) { return p / std::sqrt(kjit::dot(p, p)); };
  for (vec3f& p : points) p = unit(p);
  for (int level = 0; level < levels; ++level) {
    std::map<std::pair<int, int>, int> middle;
    auto mid = [&](int a, int b) {
      auto key = std::minmax(a, b);
      auto it = middle.find(key);
      if (it != middle.end()) return it->second;
      points.push_back(unit((points[size_t(a)] + points[size_t(b)]) * 0.5f));
      return middle[key] = int(points.size()) - 1;
    };
    std::vector<int> next;
    for (size_t f = 0; f < faces.size(); f += 3) {
      int a = faces[f], b = faces[f + 1], c = faces[f + 2];
      int ab = mid(a, b), bc = mid(b, c), ca = mid(c, a);
      for (int v : {a, ab, ca, b, bc, ab, c, ca, bc, ab, bc, ca}) next.push_back(v);
    }
    faces = next;
  }
}

/// Each edge of the triangles once, as index pairs.
std::vector<int> edges_of(const std::vector<int>& faces) {
  std::map<std::pair<int, int>, bool> seen;
  std::vector<int> edges;
  for (size_t f = 0; f < faces.size(); f += 3)
    for (int k = 0; k < 3; ++k) {
      auto key = std::minmax(faces[f + size_t(k)], faces[f + size_t(k + 1) % 3]);
      if (!seen.emplace(key, true).second) continue;
      edges.push_back(key.first), edges.push_back(key.second);
    }
  return edges;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 150, num_targets = 4096, subdivisions = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--targets")) num_targets = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--subdivisions")) subdivisions = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--iters N] [--targets N] [--subdivisions N]\n", argv[0]);
      return 2;
    }
  }
  std::vector<vec3f> sphere;
  std::vector<int> faces;
  icosphere(subdivisions, sphere, faces);
  const std::vector<int> edges = edges_of(faces);
  // Targets on the ellipsoid x^2/1.6^2 + y^2 + z^2/0.6^2 = 1 (directions uniform on the sphere).
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<vec3f> targets;
  for (int i = 0; i < num_targets; ++i) {
    vec3f d(normal(rng), normal(rng), normal(rng));
    d = d / std::sqrt(kjit::dot(d, d));
    targets.emplace_back(1.6f * d[0], 1.0f * d[1], 0.6f * d[2]);
  }

  kjit::NdArray points = kjit::from_vector(sphere).requires_grad();
  kjit::Mesh mesh(points, kjit::from_vector(faces));
  kjit::NdArray target_array = kjit::from_vector(targets), edge_array = kjit::from_vector(edges);
  kjit::NdArray loss = kjit::zeros<float>({1}), distance = kjit::zeros<float>({1});
  const float scale = 1.0f / float(num_targets), weight = 0.02f / float(edges.size() / 2);
  const int64_t num_edges = int64_t(edges.size() / 2);
  auto rms_distance = [&] {
    distance.zero();
    kjit::launch(shape_fit::distance_loss, num_targets, mesh, target_array, scale, distance);
    return std::sqrt(distance.to_vector<float>()[0]);
  };
  std::printf("mesh: %zu points, %zu triangles; %d targets on an ellipsoid (1.6, 1, 0.6)\n", sphere.size(),
              faces.size() / 3, num_targets);
  const float before = rms_distance();
  kjit::optim::Adam adam({points}, /*lr=*/0.01);
  auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < iters; ++it) {
    kjit::Tape tape;
    {
      auto on = tape.record();
      loss.zero();
      kjit::launch(shape_fit::distance_loss, num_targets, mesh, target_array, scale, loss);
      kjit::launch(shape_fit::edge_loss, num_edges, points, edge_array, weight, loss);
    }
    tape.backward(loss);
    adam.step();
    tape.zero();
    mesh.refit();  // the points moved: the BVH's boxes follow
    if (it % 25 == 0 || it == iters - 1) std::printf("iter %4d  loss %.6f\n", it, double(loss.to_vector<float>()[0]));
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const float after = rms_distance();
  std::printf("RMS distance from the targets to the mesh: %.4f -> %.4f (%.1fx) in %d steps, %.2f ms per step\n", double(before),
              double(after), double(before / after), iters, ms / iters);
  return after * 5.0f <= before ? 0 : 1;
}
