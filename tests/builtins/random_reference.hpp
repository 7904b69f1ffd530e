// float64 (and where the device uses float32 arithmetic, float32) replicas of the prelude's
// random stream and noise, for the tests' references.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace kjit::test::rng {

/// The PCG-style permutation that advances a state.
inline uint32_t pcg(uint32_t state) {
  uint32_t b = state * 747796405u + 2891336453u;
  uint32_t c = ((b >> ((b >> 28u) + 4u)) ^ b) * 277803737u;
  return (c >> 22u) ^ c;
}
/// A uniform float in [0, 1) with 24 random bits.
inline double unit(uint32_t s) { return double(s >> 8) * (1.0 / 16777216.0); }
/// The Poisson draw of the prelude, in the same float32 arithmetic: (count, next state).
std::pair<uint32_t, uint32_t> poisson(uint32_t state, float lam);

struct Perlin {
  double v = 0;
  std::vector<double> g;
};
/// Noise value and gradient at x (1..4 lanes), periodic when `period` is given.
Perlin perlin(uint32_t seed, const std::vector<double>& x, const std::vector<int>* period);
/// Curl noise from central differences of perlin() (2-D: rotated gradient; 3-/4-D: curl of
/// three potentials with seeds seed, seed+1, seed+2).
std::vector<double> curl(uint32_t seed, const std::vector<double>& x, uint32_t octaves, double lacunarity, double gain);

}  // namespace kjit::test::rng
