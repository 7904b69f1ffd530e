// Replicas of the prelude's random stream, Poisson sampler and Perlin noise.
#include "random_reference.hpp"

namespace kjit::test::rng {

std::pair<uint32_t, uint32_t> poisson(uint32_t state, float lam) {
  auto uf = [](uint32_t s) { return (float)(s >> 8) * (1.0f / 16777216.0f); };
  uint32_t s = state;
  if (!(lam > 0.0f)) return {0u, s};
  if (lam < 10.0f) {
    float limit = std::exp(-lam), p = 1.0f;
    uint32_t k = 0;
    for (;;) {
      s = pcg(s);
      p *= uf(s);
      if (p <= limit) return {k, s};
      ++k;
    }
  }
  float slam = std::sqrt(lam), loglam = std::log(lam), b = 0.931f + 2.53f * slam, a = -0.059f + 0.02483f * b;
  float invalpha = 1.1239f + 1.1328f / (b - 3.4f), vr = 0.9277f - 3.6224f / (b - 2.0f);
  for (;;) {
    s = pcg(s);
    float U = uf(s) - 0.5f;
    s = pcg(s);
    float V = uf(s);
    float us = 0.5f - std::fabs(U);
    float k = std::floor((2.0f * a / us + b) * U + lam + 0.43f);
    if (us >= 0.07f && V <= vr) return {uint32_t(k), s};
    if (k < 0.0f || (us < 0.013f && V > us)) continue;
    if (std::log(V) + std::log(invalpha) - std::log(a / (us * us) + b) <= -lam + k * loglam - std::lgamma(k + 1.0f))
      return {uint32_t(k), s};
  }
}

namespace {
std::vector<double> gradient(uint32_t seed, const std::vector<int>& cell) {
  uint32_t h = seed * 0x9E3779B9u + 0x7F4A7C15u;
  for (int c : cell) {
    h ^= uint32_t(c) + 0x9E3779B9u + (h << 6) + (h >> 2);
    h = h * 747796405u + 2891336453u;
    h = ((h >> ((h >> 28u) + 4u)) ^ h) * 277803737u;
    h = (h >> 22u) ^ h;
  }
  std::vector<double> g;
  for (size_t d = 0; d < cell.size(); ++d) g.push_back(double((float)((h >> (8 * d)) & 0xffu) * (2.0f / 255.0f) - 1.0f));
  return g;
}
double fade(double t) { return t * t * t * (t * (t * 6 - 15) + 10); }
double dfade(double t) { return 30 * t * t * (t * (t - 2) + 1); }
}  // namespace

Perlin perlin(uint32_t seed, const std::vector<double>& x, const std::vector<int>* period) {
  const size_t n = x.size();
  Perlin r;
  r.g.assign(n, 0.0);
  for (int corner = 0; corner < (1 << n); ++corner) {
    std::vector<int> cell(n);
    std::vector<double> off(n), w(n), dw(n);
    for (size_t d = 0; d < n; ++d) {
      int bit = (corner >> d) & 1;
      double fl = std::floor(x[d]), t = x[d] - fl;
      cell[d] = int(fl) + bit;
      if (period) { int p = (*period)[d]; cell[d] = ((cell[d] % p) + p) % p; }
      off[d] = t - bit;
      w[d] = bit ? fade(t) : 1 - fade(t);
      dw[d] = bit ? dfade(t) : -dfade(t);
    }
    std::vector<double> g = gradient(seed, cell);
    double L = 0, W = 1;
    for (size_t d = 0; d < n; ++d) { L += g[d] * off[d]; W *= w[d]; }
    r.v += W * L;
    for (size_t a = 0; a < n; ++a) {
      double gw = dw[a];
      for (size_t d = 0; d < n; ++d) if (d != a) gw *= w[d];
      r.g[a] += gw * L + W * g[a];
    }
  }
  return r;
}

std::vector<double> curl(uint32_t seed, const std::vector<double>& x, uint32_t octaves, double lacunarity, double gain) {
  const size_t n = x.size();
  std::vector<double> out(n == 2 ? 2 : 3, 0.0);
  double freq = 1, amp = 1;
  for (uint32_t o = 0; o < octaves; ++o) {
    std::vector<double> xs = x;
    for (double& v : xs) v *= freq;
    // gradients of the potentials (exact, from perlin()) scaled by the chain rule
    if (n == 2) {
      auto g = perlin(seed, xs, nullptr).g;
      out[0] += amp * freq * g[1];
      out[1] -= amp * freq * g[0];
    } else {
      std::vector<double> g[3];
      for (uint32_t k = 0; k < 3; ++k) g[k] = perlin(seed + k, xs, nullptr).g;
      out[0] += amp * freq * (g[2][1] - g[1][2]);
      out[1] += amp * freq * (g[0][2] - g[2][0]);
      out[2] += amp * freq * (g[1][0] - g[0][1]);
    }
    freq *= lacunarity;
    amp *= gain;
  }
  return out;
}

}  // namespace kjit::test::rng
