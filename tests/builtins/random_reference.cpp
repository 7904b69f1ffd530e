// Warp's random stream, Poisson sampler and Perlin noise restated for the tests: the noise
// as a sum over the cell's corners weighted by products of fades (the prelude interpolates
// pairwise instead), in float64 from Warp's float32 lattice gradients.
#include "random_reference.hpp"

namespace kjit::test::rng {

std::pair<uint32_t, uint32_t> poisson(uint32_t state, float lam) {
  auto uf = [](uint32_t s) { return (float)(s >> 8) * (1.0f / 16777216.0f); };
  uint32_t s = state;
  if (lam == 0.0f) return {0u, s};
  if (!(lam >= 10.0f)) {  // negative and NaN rates too: one draw, then 0
    float limit = std::exp(-lam), p = 1.0f;
    uint32_t k = 0;
    for (;;) {
      s = pcg(s);
      p *= uf(s);
      if (!(p > limit)) return {k, s};
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
/// Warp's lattice gradient: the cell's hash (coordinates times primes, xor-ed; the state added
/// to the last product), then 2u - 1 in 1-D or the normalized unit-square/cube/hypercube draw.
std::vector<double> gradient(uint32_t seed, const std::vector<int>& cell) {
  const uint32_t primes[4] = {73856093u, 19349663u, 53471161u, 10000019u};
  const size_t n = cell.size();
  uint32_t h = uint32_t(cell[n - 1]) * primes[n - 1] + seed;
  for (size_t d = 0; d + 1 < n; ++d) h ^= uint32_t(cell[d]) * primes[d];
  auto uf = [](uint32_t s) { return float(s >> 8) * (1.0f / 16777216.0f); };
  if (n == 1) return {double(2.0f * uf(pcg(h)) - 1.0f)};
  std::vector<float> g(n);
  float len2 = 0;
  for (size_t d = 0; d < n; ++d) {
    h = pcg(h);
    g[d] = uf(h) - 0.5f;
    len2 += g[d] * g[d];
  }
  float len = std::sqrt(len2);
  std::vector<double> out;
  for (float v : g) out.push_back(len > 0 ? double(v / len) : 0.0);
  return out;
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
      if (period) {  // Warp's wrap: C's remainder (negative cells stay negative), x1 = (x0 + 1) % p
        int p = (*period)[d], x0 = int(fl) % p;
        cell[d] = bit ? (x0 + 1) % p : x0;
      }
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
  std::vector<double> sum[3] = {std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
  double freq = 1, amp = 1;
  uint32_t state = seed;
  for (uint32_t o = 0; o < octaves; ++o) {
    std::vector<double> xs = x;
    for (double& v : xs) v *= freq;
    // Warp's gradients at the scaled point (no chain-rule factor); 3-D and 4-D: three fields,
    // each the next in rand_init(state, 10019689), rand_init(state, 13112221), octave after octave.
    for (int f = 0; f < (n == 2 ? 1 : 3); ++f) {
      if (f > 0) state = pcg(state + pcg(f == 1 ? 10019689u : 13112221u));
      auto g = perlin(state, xs, nullptr).g;
      for (size_t k = 0; k < n; ++k) sum[f][k] += amp * g[k];
    }
    freq *= lacunarity;
    amp *= gain;
  }
  if (n == 2) return {-sum[0][1], sum[0][0]};
  return {sum[2][1] - sum[1][2], sum[0][2] - sum[2][0], sum[1][0] - sum[0][1]};
}

}  // namespace kjit::test::rng
