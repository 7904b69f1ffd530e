// examples/warp/raymarch.cpp — Warp 1.19's warp/examples/core/example_raymarch.py in kjit: a
// signed-distance scene (a sphere cut from a box, on a plane) ray-marched per pixel, with soft
// shadows and a Fresnel highlight. Writes the pixels (float32 RGB, row-major) to a file and
// prints the milliseconds per frame, for scripts/warp_examples.sh to compare with Warp's.
// Usage: warp_raymarch [--width W] [--height H] [--frames N] [--out FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "port_output.hpp"

namespace raymarch {
using namespace kjit::dsl;
KJIT_MODULE(warp_raymarch)

Float sdf_sphere(const Vec3f& p, Float r) { return length(p) - r; }

Float sdf_box(const Vec3f& upper, const Vec3f& p) {
  Float qx = abs(p[0]) - upper[0], qy = abs(p[1]) - upper[1], qz = abs(p[2]) - upper[2];
  Vec3f e = Vec3f(max(qx, 0.0f), max(qy, 0.0f), max(qz, 0.0f));
  return length(e) + min(max(qx, max(qy, qz)), 0.0f);
}

Float sdf_plane(const Vec3f& p, const Vec4f& plane) {
  return plane[0] * p[0] + plane[1] * p[1] + plane[2] * p[2] + plane[3];
}

Float op_union(Float d1, Float d2) { return min(d1, d2); }
Float op_subtract(Float d1, Float d2) { return max(-d1, d2); }

/// The scene; a device function, traced once and called from the three places that need it.
inline const auto sdf = func("sdf", [](Vec3f p) {
  Vec3f sphere_1 = Vec3f(0.0f, 0.75f, 0.0f);
  Float d = op_subtract(sdf_sphere(p - sphere_1, 0.75f), sdf_box(Vec3f(1.0f, 0.5f, 0.5f), p));
  return op_union(d, sdf_plane(p, Vec4f(0.0f, 1.0f, 0.0f, 1.0f)));  // the ground plane
});

/// The surface normal: central differences of the distance.
Vec3f normal(const Vec3f& p) {
  const float eps = 1.0e-5f;
  Float dx = sdf(p + Vec3f(eps, 0.0f, 0.0f)) - sdf(p - Vec3f(eps, 0.0f, 0.0f));
  Float dy = sdf(p + Vec3f(0.0f, eps, 0.0f)) - sdf(p - Vec3f(0.0f, eps, 0.0f));
  Float dz = sdf(p + Vec3f(0.0f, 0.0f, eps)) - sdf(p - Vec3f(0.0f, 0.0f, eps));
  return normalize(Vec3f(dx, dy, dz));
}

/// Soft shadow towards the light.
inline const auto shadow = func("shadow", [](Vec3f ro, Vec3f rd) {
  Var<Float> t = 0.0f, s = 1.0f;
  For(0, 64, [&](Int) {
    Float d = sdf(ro + t * rd);
    t = t + clamp(d, 0.0001f, 2.0f);
    Float h = clamp(4.0f * d / t, 0.0f, 1.0f);
    s = min(s, h * h * (3.0f - 2.0f * h));
    If(t > 8.0f, [&] { Return(1.0f); });
  });
  return Float(s);
});

KJIT_KERNEL(draw, (Vec3f cam_pos, Quatf cam_rot, Int width, Int height, Array<Vec3f> pixels)) {
  Int i = tid();
  Int x = i % width, y = i / width;
  // pixel coordinates
  Float sx = (2.0f * Float(x) - Float(width)) / Float(height);
  Float sy = (2.0f * Float(y) - Float(height)) / Float(height);
  // view ray
  Vec3f ro = cam_pos;
  Vec3f rd = quat_rotate(cam_rot, normalize(Vec3f(sx, sy, -2.0f)));
  Var<Float> t = 0.0f, d = 0.0f;
  For(0, 128, [&](Int) {  // ray march
    d = sdf(ro + rd * t);
    t = t + d;
  });
  If(d < 0.01f, [&] {
    Vec3f p = ro + rd * t;
    Vec3f n = normal(p);
    Vec3f l = normalize(Vec3f(0.6f, 0.4f, 0.5f));
    Vec3f h = normalize(l - rd);  // half-vector
    Float diffuse = dot(n, l);
    Float specular = pow(clamp(dot(n, h), 0.0f, 1.0f), 80.0f);
    Float fresnel = 0.04f + 0.96f * pow(clamp(1.0f - dot(h, l), 0.0f, 1.0f), 5.0f);
    Float intensity = 2.0f;
    Vec3f result = Vec3f(0.85f, 0.9f, 0.95f) * (diffuse * (1.0f - fresnel) + specular * fresnel * 10.0f) *
                   shadow(p, l) * intensity;
    // gamma
    pixels[i] = Vec3f(clamp(pow(result[0], 2.2f), 0.0f, 1.0f), clamp(pow(result[1], 2.2f), 0.0f, 1.0f),
                      clamp(pow(result[2], 2.2f), 0.0f, 1.0f));
  }).Else([&] { pixels[i] = Vec3f(0.4f, 0.45f, 0.5f) * 1.5f; });
}
}  // namespace raymarch

int main(int argc, char** argv) {
  int width = 2048, height = 1024, frames = 5;
  std::string out;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--width")) width = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--height")) height = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--frames")) frames = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--out")) out = argv[a + 1];
  }
  kjit::vec3f cam_pos(-1.25f, 1.0f, 2.0f);
  kjit::quatf cam_rot = kjit::quat_rpy(-0.5f, -0.5f, 0.0f);
  kjit::NdArray pixels = kjit::zeros<kjit::vec3f>({int64_t(width) * height});
  auto frame = [&] { kjit::launch(raymarch::draw, int64_t(width) * height, cam_pos, cam_rot, width, height, pixels); };
  const double median = warp_port::median_ms(frames, frame);
  if (!out.empty()) {
    std::vector<kjit::vec3f> v = pixels.to_vector<kjit::vec3f>();
    std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(kjit::vec3f)));
  }
  std::printf("raymarch %dx%d: %.3f ms per frame (median of %d)\n", width, height, median, frames);
  return 0;
}
