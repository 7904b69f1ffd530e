// examples/warp/diffray.cpp — Warp 1.19's warp/examples/optim/example_diffray.py in kjit: a
// differentiable ray caster (mesh_query_ray against the bunny through the mesh's transform,
// textured and lit) renders a target with the mesh unrotated; a second example starts rotated
// 30 degrees about y and recovers the rotation by SGD on a kjit::Tape through the renderer
// (pseudo-Huber loss of the pixels), normalising the quaternion after each step.
// Warp reads the bunny from bunny.usd; this port reads its points (float32 xyz) and triangle
// indices (int32) from the files scripts/warp_examples.py exports from it (as raycast.cpp).
// Warp renders at height 1024 and trains 150 iterations; --height and --iters set both here.
// --out gets, as float32: the target image, the loss of every iteration, the last iteration's
// image, the optimised rotation, then the last iteration's gradients of the rotation, the
// position, the light directions, the light intensities, the vertex normals and the texture
// coordinates; the program prints the milliseconds per iteration. --check-gradient compares the
// first iteration's gradient of the rotation with float64 central differences of the same
// program (diffray_reference.hpp) and fails the run if they disagree; --golden compares the
// outputs with Warp's (a file in --out's layout) and fails the run if they differ.
// Usage: warp_diffray --points FILE --indices FILE [--height 1024] [--iters 150] [--out FILE]
//                     [--deterministic 0|1] [--check-gradient 1] [--golden FILE]
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "diffray_kernels.hpp"
#include "diffray_reference.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/optim.hpp"
#include "kjit/runtime/tape.hpp"
#include "port_output.hpp"

namespace {

struct Options {
  std::string points, indices, out, golden;
  int height = 1024, iters = 150;
  bool deterministic = true, check_gradient = false;
};

/// The float32 components of an array of T (float, vec2f, vec3f, quatf), in order.
template <class T>
std::vector<float> floats(const kjit::NdArray& a) {
  const std::vector<T> v = a.to_vector<T>();
  const float* p = reinterpret_cast<const float*>(v.data());
  return std::vector<float>(p, p + v.size() * (sizeof(T) / sizeof(float)));
}

Options parse(int argc, char** argv) {
  Options o;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string k = argv[a], v = argv[a + 1];
    if (k == "--points") o.points = v;
    else if (k == "--indices") o.indices = v;
    else if (k == "--out") o.out = v;
    else if (k == "--golden") o.golden = v;
    else if (k == "--height") o.height = std::stoi(v);
    else if (k == "--iters") o.iters = std::stoi(v);
    else if (k == "--deterministic") o.deterministic = v != "0";
    else if (k == "--check-gradient") o.check_gradient = v != "0";
    else throw std::invalid_argument("unknown option " + k);
  }
  if (o.height < 1 || o.iters < 1) throw std::invalid_argument("--height and --iters must be positive");
  return o;
}

/// Warp's Example: the mesh, its texture coordinates and normals, camera, lights, rays and
/// pixels, with the mesh rotated by `rot` (x, y, z, w).
struct Example {
  Example(const std::vector<kjit::vec3f>& points, const std::vector<int>& indices, int height_, kjit::quatf rot_array)
      : height(height_), width(int(aspect * height_)), num_pixels(width * height_), num_faces(int(indices.size() / 3)),
        // Warp asks a gradient of the points, but its mesh adjoints drop it, and the example never
        // reads it: kjit's would be computed (GEOMETRY.md), so the points get no buffer here.
        points_array(kjit::from_vector(points)), indices_array(kjit::from_vector(indices)),
        mesh(points_array, indices_array) {
    // Texture coordinates made up for this asset (numpy's float32 arithmetic): the distance
    // from the origin over the largest one, for both u and v.
    std::vector<float> distance(points.size());
    for (size_t p = 0; p < points.size(); ++p)
      distance[p] = std::sqrt(points[p][0] * points[p][0] + points[p][1] * points[p][1] + points[p][2] * points[p][2]);
    const float radius = *std::max_element(distance.begin(), distance.end());
    std::vector<kjit::vec2f> tex(points.size());
    for (size_t p = 0; p < points.size(); ++p) tex[p] = kjit::vec2f{{distance[p] / radius, distance[p] / radius}};
    // A 256 x 256 texture: (column, row, 0) / 255 (float64 arithmetic, stored as float32).
    std::vector<kjit::vec3f> texels(256 * 256);
    for (int r = 0; r < 256; ++r)
      for (int c = 0; c < 256; ++c) texels[size_t(r) * 256 + size_t(c)] = kjit::vec3f{{float(c / 255.0), float(r / 255.0), 0.0f}};

    tex_coords = kjit::from_vector(tex).requires_grad();
    tex_indices = kjit::from_vector(indices);
    normal_sums = kjit::zeros<kjit::vec3f>({int64_t(points.size())}).requires_grad();
    vertex_normals = kjit::zeros<kjit::vec3f>({int64_t(points.size())}).requires_grad();
    pos = kjit::zeros<kjit::vec3f>({1}).requires_grad();
    rot = kjit::from_vector(std::vector<kjit::quatf>{rot_array}).requires_grad();
    render_mesh.mesh = mesh.view();
    render_mesh.tex_coords = tex_coords;
    render_mesh.tex_indices = tex_indices;
    render_mesh.vertex_normals = vertex_normals;
    render_mesh.pos = pos;
    render_mesh.rot = rot;

    kjit::launch(diffray::vertex_normal_sum_kernel, num_faces, points_array, indices_array, normal_sums);
    kjit::launch(diffray::normalize_kernel, int64_t(points.size()), normal_sums, vertex_normals);

    camera.horizontal = float(horizontal_aperture);
    camera.vertical = float(vertical_aperture);
    camera.aspect = float(aspect);
    camera.e = float(focal_length);
    camera.tan = float(vertical_aperture / (2.0 * focal_length));
    camera.pos = kjit::vec3f{{0.0f, 0.75f, 7.0f}};
    camera.rot = kjit::quatf(0.0f, 0.0f, 0.0f, 1.0f);

    texture = kjit::from_vector(texels, {256, 256}).requires_grad();
    light_dirs = kjit::from_vector(std::vector<kjit::vec3f>{{{1.0f, 0.0f, 0.0f}}, {{0.0f, 0.0f, 1.0f}}}).requires_grad();
    light_intensities = kjit::from_vector(std::vector<float>{2.0f, float(0.2)}).requires_grad();
    lights.dirs = light_dirs;
    lights.intensities = light_intensities;
    lights.num_lights = 2;

    rays_width = width * (1 << num_samples);
    rays_height = height * (1 << num_samples);
    num_rays = rays_width * rays_height;
    rays = kjit::zeros<kjit::vec3f>({num_rays}).requires_grad();
    pixels = kjit::zeros<kjit::vec3f>({num_pixels}).requires_grad();
    target_pixels = kjit::zeros<kjit::vec3f>({num_pixels});
    loss = kjit::zeros<float>({1}).requires_grad();
  }

  void ray_cast() const {
    kjit::launch(diffray::draw_kernel, num_rays, render_mesh, camera, texture, rays_width, rays_height, rays, lights,
                 render_mode);
    kjit::launch(diffray::downsample_kernel, num_pixels, rays, pixels, rays_width, 1 << num_samples);
  }

  void forward() const {
    ray_cast();
    kjit::launch(diffray::loss_kernel, num_pixels, pixels, target_pixels, loss);
  }

  static constexpr double horizontal_aperture = 36.0, vertical_aperture = 20.25, focal_length = 50.0;
  static constexpr double aspect = horizontal_aperture / vertical_aperture;
  static constexpr int num_samples = 1;  // anti-aliasing: 2^num_samples rays a side per pixel
  static constexpr int render_mode = diffray::RenderMode::texture;
  int height, width, num_pixels, num_faces, rays_width = 0, rays_height = 0, num_rays = 0;
  kjit::NdArray points_array, indices_array;
  kjit::Mesh mesh;
  kjit::NdArray tex_coords, tex_indices, normal_sums, vertex_normals, pos, rot, texture, light_dirs, light_intensities;
  kjit::NdArray rays, pixels, target_pixels, loss;
  diffray::RenderMesh render_mesh;
  diffray::Camera camera;
  diffray::DirectionalLights lights;
};

/// What check_gradient compares: the float32 tape gradient of the rotation against float64
/// central differences of diffray_reference's renderer. Throws when they disagree.
void check_gradient(const Example& e, float kjit_loss, const std::vector<float>& rot_grad) {
  diffray_reference::Scene s = diffray_reference::scene_of(
      e.points_array.to_vector<kjit::vec3f>(), e.indices_array.to_vector<int>(), e.vertex_normals.to_vector<kjit::vec3f>(),
      e.tex_coords.to_vector<kjit::vec2f>(), e.texture.to_vector<kjit::vec3f>(), e.target_pixels.to_vector<kjit::vec3f>(),
      e.width, e.height, double(e.camera.aspect), double(e.camera.tan));
  const std::vector<kjit::quatf> q = e.rot.to_vector<kjit::quatf>();
  const std::array<double, 4> rot{q[0][0], q[0][1], q[0][2], q[0][3]};
  const std::array<double, 4> fd = diffray_reference::central_differences(s, rot, 1e-6);
  const double reference_loss = diffray_reference::loss(s, rot);
  std::printf("loss: kjit %.8g, float64 reference %.8g\n", double(kjit_loss), reference_loss);
  if (!(std::abs(reference_loss - double(kjit_loss)) <= 1e-4 * std::abs(reference_loss)))
    throw std::runtime_error("the loss disagrees with the float64 reference renderer's");
  double scale = 0.0, worst = 0.0;
  for (int k = 0; k < 4; ++k) scale = std::max(scale, std::abs(fd[size_t(k)]));
  for (int k = 0; k < 4; ++k) worst = std::max(worst, std::abs(double(rot_grad[size_t(k)]) - fd[size_t(k)]));
  std::printf("gradient of the rotation: kjit (%.6g, %.6g, %.6g, %.6g), float64 central differences (%.6g, %.6g, %.6g, %.6g)\n",
              double(rot_grad[0]), double(rot_grad[1]), double(rot_grad[2]), double(rot_grad[3]), fd[0], fd[1], fd[2],
              fd[3]);
  std::printf("largest difference %.3g, %.3g of the largest component\n", worst, scale > 0 ? worst / scale : 0.0);
  // A float32 program against a float64 one: 2.7e-6 of the largest component at 21 x 12 pixels
  // (Warp's published gradient is 0.6 of it off, its adjoint of the lights loop being wrong).
  if (!(scale > 0.0) || worst > 1e-4 * scale)
    throw std::runtime_error("the gradient of the rotation disagrees with float64 central differences");
}

/// Compares the parts of --out (`parts`, named) with Warp's in the file `golden` (the same
/// layout): the first `exact` parts must be Warp's bits, the others within `tolerance` of their
/// largest value. Prints one line a part; false when one fails.
bool matches_golden(const std::string& golden, const std::vector<std::pair<const char*, std::vector<float>>>& parts,
                    size_t exact, double tolerance) {
  const std::vector<float> warp = warp_port::read_elements<float>(golden);
  size_t total = 0;
  for (const auto& part : parts) total += part.second.size();
  if (warp.size() != total) {
    std::printf("%s holds %zu values, the program %zu\n", golden.c_str(), warp.size(), total);
    return false;
  }
  bool ok = true;
  size_t offset = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::vector<float>& mine = parts[p].second;
    size_t same = 0;
    double largest = 0.0, diff = 0.0;
    for (size_t i = 0; i < mine.size(); ++i) {
      const float w = warp[offset + i];
      same += std::memcmp(&w, &mine[i], sizeof w) == 0;
      largest = std::max(largest, std::abs(double(w)));
      diff = std::max(diff, std::abs(double(w) - double(mine[i])));
    }
    offset += mine.size();
    const bool part_ok = p < exact ? same == mine.size() : diff <= tolerance * largest;
    std::printf("%s: %zu of %zu values bit-identical to Warp's, largest difference %.3g (%.2g of its largest)%s\n",
                parts[p].first, same, mine.size(), diff, largest > 0 ? diff / largest : 0.0,
                part_ok ? "" : p < exact ? ": must be bit-identical" : ": too large");
    ok = ok && part_ok;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  // Warp's cpu launches run on one thread, so its atomics (the vertex normal sums, the loss,
  // every adjoint's gradient accumulation) add in index order; deterministic launches do the
  // same on kjit's pool.
  kjit::set_deterministic(o.deterministic);
  const std::vector<kjit::vec3f> points = warp_port::read_elements<kjit::vec3f>(o.points);
  const std::vector<int> indices = warp_port::read_elements<int>(o.indices);
  if (points.empty() || indices.empty()) return 1;
  // The ray casts run the plain body thread after thread: each ray's traversal takes its own
  // path (GEOMETRY.md).
  kjit::ModuleOptions options = kjit::module("warp_diffray").options();
  options.cpu_lanes = false;
  kjit::module("warp_diffray").set_options(options);

  // The target: the mesh unrotated.
  const Example reference(points, indices, o.height, kjit::quatf(0.0f, 0.0f, 0.0f, 1.0f));
  reference.ray_cast();
  // The mesh rotated 30 degrees about y, to be recovered.
  const double s3 = std::sqrt(3.0), s2 = std::sqrt(2.0);
  Example example(points, indices, o.height,
                  kjit::quatf(0.0f, float((s3 - 1.0) / (2.0 * s2)), 0.0f, float((s3 + 1.0) / (2.0 * s2))));
  example.target_pixels.copy_from(reference.pixels);

  const double train_rate = 5.00e-8, momentum = 0.5, dampening = 0.1, weight_decay = 0.0;
  kjit::optim::SGD optimizer({example.rot}, train_rate, momentum, dampening, weight_decay);
  std::vector<float> losses;
  std::vector<std::vector<float>> grads;  // the last iteration's
  std::vector<double> ms;
  for (int iter = 0; iter < o.iters; ++iter) {
    const auto t0 = std::chrono::steady_clock::now();
    kjit::Tape tape;
    {
      auto on = tape.record();
      example.forward();
    }
    tape.backward(example.loss);
    const kjit::NdArray rot_grad = tape.gradient(example.rot);
    losses.push_back(example.loss.to_vector<float>()[0]);
    if (iter == 0 && o.check_gradient) check_gradient(example, losses.back(), floats<kjit::quatf>(rot_grad));
    if (iter == o.iters - 1)
      grads = {floats<kjit::quatf>(rot_grad),
               floats<kjit::vec3f>(example.pos.grad()),
               floats<kjit::vec3f>(example.light_dirs.grad()),
               floats<float>(example.light_intensities.grad()),
               floats<kjit::vec3f>(example.vertex_normals.grad()),
               floats<kjit::vec2f>(example.tex_coords.grad())};
    optimizer.step({rot_grad});
    kjit::launch(diffray::normalize_rot, 1, example.rot);
    if (iter % 10 == 0) std::printf("Iter: %d Loss: %.6f\n", iter, double(losses.back()));
    tape.zero();
    example.loss.zero();
    // The first iteration compiles (or loads from the cache).
    if (iter > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  const std::vector<std::pair<const char*, std::vector<float>>> parts = {
      {"target image", floats<kjit::vec3f>(reference.pixels)},
      {"loss curve", losses},
      {"last image", floats<kjit::vec3f>(example.pixels)},
      {"optimised rotation", floats<kjit::quatf>(example.rot)},
      {"last gradient of the rotation", grads[0]},
      {"of the position", grads[1]},
      {"of the light directions", grads[2]},
      {"of the light intensities", grads[3]},
      {"of the vertex normals", grads[4]},
      {"of the texture coordinates", grads[5]}};
  if (!o.out.empty()) {
    std::ofstream file(o.out, std::ios::binary);
    for (const auto& part : parts)
      file.write(reinterpret_cast<const char*>(part.second.data()), std::streamsize(part.second.size() * sizeof(float)));
  }
  // The images and losses are Warp's bits; the gradients' adjoint formulas (mesh_query_ray's,
  // quat_rotate's, normalize's) round otherwise than Warp's hand-written ones, by about 1e-6 of
  // their size, and the rotation after an SGD step with them by about 1e-12.
  if (!o.golden.empty() && !matches_golden(o.golden, parts, 3, 1e-4)) {
    std::fprintf(stderr, "warp_diffray: the outputs differ from Warp's (%s)\n", o.golden.c_str());
    return 1;
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%zu points, %d triangles, %d x %d pixels, %d x %d rays, %d iterations: %.3f ms per iteration (median of %zu)\n",
              points.size(), example.num_faces, example.width, example.height, example.rays_width,
              example.rays_height, o.iters, ms.empty() ? 0.0 : ms[ms.size() / 2], ms.size());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "warp_diffray: %s\n", e.what());
  return 1;
}
