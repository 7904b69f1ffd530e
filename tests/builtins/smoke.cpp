// Compiles and runs kernels that use most of the DSL surface (a quick breadth check).
#include <doctest/doctest.h>

#include <cmath>

#include "kjit/kjit.hpp"

namespace smoke {
using namespace kjit::dsl;
KJIT_MODULE(builtins_smoke)

KJIT_STRUCT(Particle, (Float, mass), (Vec3f, pos), (Int, id));

inline const auto energy = func("energy", [](auto d, auto k) { return k * dot(d, d); });
inline const auto safe_sqrt = func("safe_sqrt", [](auto x) { return sqrt(x); })
                                  .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * 0.5f / sqrt(x); });

KJIT_KERNEL(everything, (Array<Vec3f> x, Array<Particle> ps, Value<Particle> p, Array<Quatf> qs, Array<Float> out)) {
  Int i = tid();
  Var<Vec3f> w = x[i];
  w.x() = w.y() * 2.0f;
  w[2] += 1.0f;
  Var<Mat33f> m = identity<3, float>();
  m(0, 1) = w.z();
  m[2] = w;
  m[1][2] -= 3.0f;
  Var<Particle> q = ps[i];
  q.mass() = q.mass() * p.mass();
  q.pos().y() += 1.0f;
  Quatf r = normalize(qs[i]);
  Vec3f v = quat_rotate(r, w) + transform_point(transformation(w, r), Vec3f(1.0f, 2.0f, 3.0f));
  auto [U, s, V] = svd3(Mat33f(m));
  Var<UInt32> state = rand_init(7, i);
  Float n = noise(state, v) + randf(state) + randn(state);
  Float e = energy(v, q.mass()) + safe_sqrt(abs(n) + 1.0f) + trace(U) + s.x() + determinant(V);
  If(e > 1.0f, [&] { print(e); });
  out[i] = e + length(q.pos()) + sin(lerp(e, n, 0.5f)) + smoothstep(0.0f, 1.0f, e) + atan2(e, n);
}
}  // namespace smoke

TEST_CASE("the DSL smoke kernel traces, compiles and runs") {
  using namespace kjit;
  const int n = 4;
  std::vector<vec3f> x(n, vec3f{{1, 2, 3}});
  std::vector<smoke::Particle> ps(n, smoke::Particle{2.0f, vec3f{{0, 1, 0}}, 3});
  std::vector<quatf> qs(n, quatf{0, 0, 0, 1});
  NdArray out = zeros<float>({n});
  launch(smoke::everything, n, from_vector(x), from_vector(ps), smoke::Particle{1.5f, vec3f{}, 1}, from_vector(qs), out);
  auto o = out.to_vector<float>();
  CHECK(std::isfinite(o[0]));
}

