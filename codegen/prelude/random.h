// kjit prelude: random numbers. One 32-bit state per thread advanced by a PCG-style hash
// (pure integer code, so cpu and CUDA produce the same stream for the same seed and
// offset); every draw returns the value and the next state (the DSL stores the state back).
//@chunk random requires math vec
namespace kj {
template <class T> struct rand_t { T value; kj_uint32 state; };
/// Draws carry no gradient; this only lets adjoint code accumulate arrays of them uniformly.
template <class T> KJ_FUNC rand_t<T>& operator+=(rand_t<T>& a, const rand_t<T>& b) { a.value += b.value; return a; }
/// The PCG output permutation of an LCG step (Jarzynski and Olano, "Hash Functions for GPU
/// Rendering", 2020).
KJ_FUNC kj_uint32 pcg(kj_uint32 state) {
  kj_uint32 b = state * 747796405u + 2891336453u;
  kj_uint32 c = ((b >> ((b >> 28u) + 4u)) ^ b) * 277803737u;
  return (c >> 22u) ^ c;
}
KJ_FUNC kj_uint32 rand_init(kj_uint32 seed) { return pcg(seed); }
KJ_FUNC kj_uint32 rand_init(kj_uint32 seed, kj_uint32 offset) { return pcg(seed + pcg(offset)); }
/// A uniform float in [0, 1) with 24 random bits.
KJ_FUNC float unit_float(kj_uint32 s) { return (float)(s >> 8) * (1.0f / 16777216.0f); }
KJ_FUNC rand_t<kj_uint32> randu(kj_uint32 state) { kj_uint32 s = pcg(state); return rand_t<kj_uint32>{s, s}; }
KJ_FUNC rand_t<kj_uint32> randu(kj_uint32 state, kj_uint32 lo, kj_uint32 hi) { kj_uint32 s = pcg(state); return rand_t<kj_uint32>{lo + s % (hi - lo), s}; }
KJ_FUNC rand_t<kj_int32> randi(kj_uint32 state) { kj_uint32 s = pcg(state); return rand_t<kj_int32>{(kj_int32)s, s}; }
KJ_FUNC rand_t<kj_int32> randi(kj_uint32 state, kj_int32 lo, kj_int32 hi) {
  kj_uint32 s = pcg(state);
  return rand_t<kj_int32>{(kj_int32)((kj_uint32)lo + s % (kj_uint32)(hi - lo)), s};
}
KJ_FUNC rand_t<float> randf(kj_uint32 state) { kj_uint32 s = pcg(state); return rand_t<float>{unit_float(s), s}; }
KJ_FUNC rand_t<float> randf(kj_uint32 state, float lo, float hi) { kj_uint32 s = pcg(state); return rand_t<float>{lo + (hi - lo) * unit_float(s), s}; }
/// A standard normal draw, as Warp's: Box-Muller on two uniforms, the first shifted off zero.
KJ_FUNC rand_t<float> randn(kj_uint32 state) {
  kj_uint32 s1 = pcg(state), s2 = pcg(s1);
  return rand_t<float>{sqrt(-2.0f * log(unit_float(s1) + 5.96e-8f)) * cos(6.28318530717958647692f * unit_float(s2)), s2};
}
/// log(Gamma(x)) in float32: Stirling's series with ten coefficients after shifting x to 7 or
/// more (Zhang and Jin, "Computation of Special Functions", 1996), as Warp's poisson uses it.
KJ_FUNC float log_gamma_series(float x) {
  if (x == 1.0f || x == 2.0f) return 0.0f;
  const float a[10] = {8.333333333333333e-02f, -2.777777777777778e-03f, 7.936507936507937e-04f, -5.952380952380952e-04f,
                       8.417508417508418e-04f, -1.917526917526918e-03f, 6.410256410256410e-03f, -2.955065359477124e-02f,
                       1.796443723688307e-01f, -1.39243221690590e+00f};
  kj_uint32 n = x < 7.0f ? (kj_uint32)(7.0f - x) : 0u;
  float x0 = x + (float)n, x2 = (1.0f / x0) * (1.0f / x0), series = a[9];
  for (int i = 8; i >= 0; --i) series = series * x2 + a[i];
  float g = series / x0 + 0.5f * 1.8378770664093453f + (x0 - 0.5f) * log(x0) - x0;
  for (kj_uint32 k = 1; k <= n; ++k) {
    g -= log(x0 - 1.0f);
    x0 -= 1.0f;
  }
  return g;
}
/// A Poisson draw, Warp's stream: 0 for a rate of 0, Knuth's product of uniforms below 10
/// (one draw for a negative or NaN rate, which gives 0), Hormann's transformed rejection
/// (PTRS) from 10 on.
KJ_FUNC_BIG rand_t<kj_uint32> poisson(kj_uint32 state, float lam) {
  kj_uint32 s = state;
  if (lam == 0.0f) return rand_t<kj_uint32>{0u, s};
  if (!(lam >= 10.0f)) {
    float limit = exp(-lam), p = 1.0f;
    kj_uint32 k = 0;
    for (;;) {
      s = pcg(s);
      p *= unit_float(s);
      if (!(p > limit)) return rand_t<kj_uint32>{k, s};
      ++k;
    }
  }
  float slam = sqrt(lam), loglam = log(lam), b = 0.931f + 2.53f * slam, a = -0.059f + 0.02483f * b;
  float invalpha = 1.1239f + 1.1328f / (b - 3.4f), vr = 0.9277f - 3.6224f / (b - 2.0f);
  for (;;) {
    s = pcg(s);
    float U = unit_float(s) - 0.5f;
    s = pcg(s);
    float V = unit_float(s);
    float us = 0.5f - (U < 0.0f ? -U : U);
    float k = floor((2.0f * a / us + b) * U + lam + 0.43f);
    if (us >= 0.07f && V <= vr) return rand_t<kj_uint32>{(kj_uint32)k, s};
    if (k < 0.0f || (us < 0.013f && V > us)) continue;
    if (log(V) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - log_gamma_series(k + 1.0f))
      return rand_t<kj_uint32>{(kj_uint32)k, s};
  }
}
/// Inverse-transform sampling of a CDF (non-decreasing, last entry 1): the first index whose
/// entry exceeds a uniform draw.
KJ_FUNC rand_t<kj_int32> sample_cdf(kj_uint32 state, const array_t<float>& cdf) {
  kj_uint32 s = pcg(state);
  float u = unit_float(s);
  kj_int32 lo = 0, hi = cdf.shape[0];
  while (lo < hi) {
    kj_int32 mid = lo + (hi - lo) / 2;
    if (*(const float*)((const char*)cdf.data + (kj_int64)mid * cdf.strides[0]) <= u) lo = mid + 1; else hi = mid;
  }
  return rand_t<kj_int32>{lo < cdf.shape[0] ? lo : cdf.shape[0] - 1, s};
}
KJ_FUNC rand_t<vec_t<2, float>> sample_unit_square(kj_uint32 state) {
  kj_uint32 s1 = pcg(state), s2 = pcg(s1);
  return rand_t<vec_t<2, float>>{vec_t<2, float>{{unit_float(s1) - 0.5f, unit_float(s2) - 0.5f}}, s2};
}
KJ_FUNC rand_t<vec_t<3, float>> sample_unit_cube(kj_uint32 state) {
  kj_uint32 s1 = pcg(state), s2 = pcg(s1), s3 = pcg(s2);
  return rand_t<vec_t<3, float>>{vec_t<3, float>{{unit_float(s1) - 0.5f, unit_float(s2) - 0.5f, unit_float(s3) - 0.5f}}, s3};
}
/// Barycentric coordinates (u, v) of a uniform point in a triangle (w = 1 - u - v).
KJ_FUNC rand_t<vec_t<2, float>> sample_triangle(kj_uint32 state) {
  kj_uint32 s1 = pcg(state), s2 = pcg(s1);
  float r = sqrt(unit_float(s1));
  return rand_t<vec_t<2, float>>{vec_t<2, float>{{1.0f - r, r * unit_float(s2)}}, s2};
}
KJ_FUNC rand_t<vec_t<2, float>> sample_unit_ring(kj_uint32 state) {
  kj_uint32 s = pcg(state);
  float t = 6.28318530717958647692f * unit_float(s);
  return rand_t<vec_t<2, float>>{vec_t<2, float>{{cos(t), sin(t)}}, s};
}
KJ_FUNC rand_t<vec_t<2, float>> sample_unit_disk(kj_uint32 state) {
  kj_uint32 s1 = pcg(state), s2 = pcg(s1);
  float r = sqrt(unit_float(s1)), t = 6.28318530717958647692f * unit_float(s2);
  return rand_t<vec_t<2, float>>{vec_t<2, float>{{r * cos(t), r * sin(t)}}, s2};
}
/// A point on the sphere (k = 2) or the upper hemisphere (k = 1) at radius r, as Warp's
/// samplers: polar angle acos(1 - k u1), azimuth 2 pi u2 (r = 1 leaves the products' bits).
KJ_FUNC vec_t<3, float> spherical(float u1, float u2, float k, float r) {
  float phi = acos(1.0f - k * u1), theta = 6.28318530717958647692f * u2;
  return vec_t<3, float>{{r * cos(theta) * sin(phi), r * sin(theta) * sin(phi), r * cos(phi)}};
}
KJ_FUNC rand_t<vec_t<3, float>> sample_unit_sphere_surface(kj_uint32 state) {
  kj_uint32 s1 = pcg(state), s2 = pcg(s1);
  return rand_t<vec_t<3, float>>{spherical(unit_float(s1), unit_float(s2), 2.0f, 1.0f), s2};
}
KJ_FUNC rand_t<vec_t<3, float>> sample_unit_hemisphere_surface(kj_uint32 state) {
  kj_uint32 s1 = pcg(state), s2 = pcg(s1);
  return rand_t<vec_t<3, float>>{spherical(unit_float(s1), unit_float(s2), 1.0f, 1.0f), s2};
}
KJ_FUNC rand_t<vec_t<3, float>> sample_unit_sphere(kj_uint32 state) {
  kj_uint32 s1 = pcg(state), s2 = pcg(s1), s3 = pcg(s2);
  return rand_t<vec_t<3, float>>{spherical(unit_float(s1), unit_float(s2), 2.0f, pow(unit_float(s3), 1.0f / 3.0f)), s3};
}
KJ_FUNC rand_t<vec_t<3, float>> sample_unit_hemisphere(kj_uint32 state) {
  kj_uint32 s1 = pcg(state), s2 = pcg(s1), s3 = pcg(s2);
  return rand_t<vec_t<3, float>>{spherical(unit_float(s1), unit_float(s2), 1.0f, pow(unit_float(s3), 1.0f / 3.0f)), s3};
}
}  // namespace kj
