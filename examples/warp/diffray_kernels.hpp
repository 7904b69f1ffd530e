// examples/warp/diffray_kernels.hpp — the kernels of Warp 1.19's optim/example_diffray.py in
// kjit (module warp_diffray): vertex normals, the ray caster (mesh_query_ray through a mesh's
// transform, texture or Lambert shading), the anti-aliasing downsample, the pseudo-Huber loss
// and the quaternion normalisation after each SGD step. Used by diffray.cpp.
#pragma once

#include "kjit/kjit.hpp"
#include "kjit/runtime/mesh.hpp"

namespace diffray {
using namespace kjit::dsl;

/// Warp's RenderMode.
struct RenderMode {
  static constexpr int grayscale = 0, texture = 1, normal_map = 2;
};

using Texture = Array<Vec3f, 2>;

// Warp's RenderMesh holds the mesh's id, vertices and indices; kjit's Mesh field holds the
// points, the indices and the tree (GEOMETRY.md), so `mesh` takes the place of those three.
KJIT_STRUCT(RenderMesh, (Mesh, mesh), (Array<Vec2f>, tex_coords), (Array<Int>, tex_indices),
            (Array<Vec3f>, vertex_normals), (Array<Vec3f>, pos), (Array<Quatf>, rot));
KJIT_STRUCT(Camera, (Float, horizontal), (Float, vertical), (Float, aspect), (Float, e), (Float, tan), (Vec3f, pos),
            (Quatf, rot));
KJIT_STRUCT(DirectionalLights, (Array<Vec3f>, dirs), (Array<Float>, intensities), (Int, num_lights));

KJIT_MODULE(warp_diffray)

KJIT_KERNEL(vertex_normal_sum_kernel, (Array<Vec3f> verts, Array<Int> indices, Array<Vec3f> normal_sums)) {
  Int t = tid();
  Int i = indices[t * 3];
  Int j = indices[t * 3 + 1];
  Int k = indices[t * 3 + 2];
  Vec3f a = verts[i];
  Vec3f b = verts[j];
  Vec3f c = verts[k];
  Vec3f area_normal = cross(b - a, c - a);
  atomic_add(normal_sums, i, area_normal);
  atomic_add(normal_sums, j, area_normal);
  atomic_add(normal_sums, k, area_normal);
}

KJIT_KERNEL(normalize_kernel, (Array<Vec3f> normal_sums, Array<Vec3f> vertex_normals)) {
  Int t = tid();
  vertex_normals[t] = normalize(normal_sums[t]);
}

/// Bilinear lookup of `texture` (rows are v flipped) at texture coordinates `tex_interp`.
inline const auto texture_interpolation = func("texture_interpolation", [](Vec2f tex_interp, Texture texture) {
  Int tex_width = texture.shape[1];
  Int tex_height = texture.shape[0];
  Vec2f tex = Vec2f(tex_interp[0] * Float(tex_width - 1), (1.0f - tex_interp[1]) * Float(tex_height - 1));
  Int x0 = Int(tex[0]);
  Int x1 = x0 + 1;
  Float alpha_x = tex[0] - Float(x0);
  Int y0 = Int(tex[1]);
  Int y1 = y0 + 1;
  Float alpha_y = tex[1] - Float(y0);
  Vec3f c00 = texture(y0, x0);
  Vec3f c10 = texture(y0, x1);
  Vec3f c01 = texture(y1, x0);
  Vec3f c11 = texture(y1, x1);
  Vec3f lower = (1.0f - alpha_x) * c00 + alpha_x * c10;
  Vec3f upper = (1.0f - alpha_x) * c01 + alpha_x * c11;
  return Vec3f((1.0f - alpha_y) * lower + alpha_y * upper);
});

KJIT_KERNEL(draw_kernel, (Value<RenderMesh> mesh, Value<Camera> camera, Texture texture, Int rays_width,
                          Int rays_height, Array<Vec3f> rays, Value<DirectionalLights> lights, Int mode)) {
  Int t = tid();
  Int x = t % rays_width;
  Int y = rays_height - t / rays_width;
  Float sx = 2.0f * Float(x) / Float(rays_width) - 1.0f;
  Float sy = 2.0f * Float(y) / Float(rays_height) - 1.0f;

  // The view ray in world space, then in the mesh's space.
  Vec3f ro_world = camera.pos();
  Vec3f rd_world =
      normalize(quat_rotate(camera.rot(), Vec3f(sx * camera.tan() * camera.aspect(), sy * camera.tan(), -1.0f)));
  Transformf inv = transform_inverse(transformation(mesh.pos()[0], mesh.rot()[0]));
  Vec3f ro = transform_point(inv, ro_world);
  Vec3f rd = transform_vector(inv, rd_world);

  Var<Vec3f> color = Vec3f(0.0f, 0.0f, 0.0f);
  Value<MeshQueryRay> query = mesh_query_ray(mesh.mesh(), ro, rd, 1.0e6f);
  If(query.result(), [&] {
    auto indices = mesh.mesh().indices();
    Int face = query.face();
    Vec3f a_n = mesh.vertex_normals()[indices[face * 3]];
    Vec3f b_n = mesh.vertex_normals()[indices[face * 3 + 1]];
    Vec3f c_n = mesh.vertex_normals()[indices[face * 3 + 2]];
    // Vertex normal interpolation.
    Vec3f normal = query.u() * a_n + query.v() * b_n + (1.0f - query.u() - query.v()) * c_n;
    If(mode == RenderMode::grayscale || mode == RenderMode::texture, [&] {
      If(mode == RenderMode::grayscale, [&] { color = Vec3f(1.0f); }).ElseIf(mode == RenderMode::texture, [&] {
        Vec2f tex_a = mesh.tex_coords()[mesh.tex_indices()[face * 3]];
        Vec2f tex_b = mesh.tex_coords()[mesh.tex_indices()[face * 3 + 1]];
        Vec2f tex_c = mesh.tex_coords()[mesh.tex_indices()[face * 3 + 2]];
        Vec2f tex = query.u() * tex_a + query.v() * tex_b + (1.0f - query.u() - query.v()) * tex_c;
        color = texture_interpolation(tex, texture);
      });
      // Lambertian directional lighting.
      Var<Float> lambert = 0.0f;
      For(0, lights.num_lights(), [&](Int i) {
        Vec3f dir = transform_vector(inv, lights.dirs()[i]);
        Var<Float> val = lights.intensities()[i] * dot(normal, dir);
        If(val < 0.0f, [&] { val = 0.0f; });
        lambert = lambert + val;
      });
      color = lambert * color;
    }).ElseIf(mode == RenderMode::normal_map, [&] { color = normal * 0.5f + Vec3f(0.5f, 0.5f, 0.5f); });
    If(color[0] > 1.0f, [&] { color = Vec3f(1.0f, color[1], color[2]); });
    If(color[1] > 1.0f, [&] { color = Vec3f(color[0], 1.0f, color[2]); });
    If(color[2] > 1.0f, [&] { color = Vec3f(color[0], color[1], 1.0f); });
  });
  rays[t] = color;
}

KJIT_KERNEL(downsample_kernel, (Array<Vec3f> rays, Array<Vec3f> pixels, Int rays_width, Int num_samples)) {
  Int t = tid();
  Int pixels_width = rays_width / num_samples;
  Int px = t % pixels_width;
  Int py = t / pixels_width;
  Int start_idx = py * num_samples * rays_width + px * num_samples;
  Var<Vec3f> color = Vec3f(0.0f, 0.0f, 0.0f);
  For(0, num_samples, [&](Int i) {
    For(0, num_samples, [&](Int j) {
      Vec3f ray = rays[start_idx + i * rays_width + j];
      color = Vec3f(color[0] + ray[0], color[1] + ray[1], color[2] + ray[2]);
    });
  });
  Float num_samples_sq = Float(num_samples * num_samples);
  pixels[t] = Vec3f(color[0] / num_samples_sq, color[1] / num_samples_sq, color[2] / num_samples_sq);
}

KJIT_KERNEL(loss_kernel, (Array<Vec3f> pixels, Array<Vec3f> target_pixels, Array<Float> loss)) {
  Int t = tid();
  Vec3f diff = target_pixels[t] - pixels[t];
  // Pseudo-Huber loss.
  Float delta = 1.0f;
  Float x = delta * delta * (sqrt(1.0f + (diff[0] / delta) * (diff[0] / delta)) - 1.0f);
  Float y = delta * delta * (sqrt(1.0f + (diff[1] / delta) * (diff[1] / delta)) - 1.0f);
  Float z = delta * delta * (sqrt(1.0f + (diff[2] / delta) * (diff[2] / delta)) - 1.0f);
  atomic_add(loss, 0, x + y + z);
}

/// Warp's kernel `normalize` (renamed: the builtin keeps its name).
KJIT_KERNEL(normalize_rot, (Array<Quatf> x)) {
  Int t = tid();
  x[t] = normalize(x[t]);
}

}  // namespace diffray
