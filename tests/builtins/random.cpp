// Random numbers: the same seed and offset give the same stream in two processes (and, by
// construction, on every device: the stream is integer code); the sample mean and variance
// of 10^6 draws of each distribution lie within 5 standard errors of the exact moments.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kjit/kjit.hpp"
#include "test_support.hpp"

namespace randoms {
using namespace kjit::dsl;
KJIT_MODULE(builtins_random)

/// 16 draws per thread of each integer and float stream, from rand_init(seed, tid).
KJIT_KERNEL(stream, (Int seed, Array<uint32_t, 2> out)) {
  Int i = tid();
  Var<UInt32> s = rand_init(seed, i);
  For(0, 16, [&](Int k) { out(i, k) = randu(s); });
}

/// One sample per thread of every distribution: columns are the lanes listed in `kColumns`.
KJIT_KERNEL(sample, (Int seed, Array<float> cdf, Array<float, 2> out)) {
  Int i = tid();
  Var<UInt32> s = rand_init(seed, i);
  out(i, 0) = randf(s);
  out(i, 1) = randf(s, -2.0f, 6.0f);
  out(i, 2) = Float(randi(s, -10, 11));
  out(i, 3) = Float(randu(s, 5u, 9u));
  out(i, 4) = randn(s);
  out(i, 5) = Float(poisson(s, 3.0f));
  out(i, 6) = Float(poisson(s, 40.0f));
  Vec2f sq = sample_unit_square(s);
  out(i, 7) = sq.x();
  Vec3f cube = sample_unit_cube(s);
  out(i, 8) = cube.z();
  Vec2f disk = sample_unit_disk(s);
  out(i, 9) = disk.x() * disk.x();
  Vec2f ring = sample_unit_ring(s);
  out(i, 10) = ring.y() * ring.y();
  Vec3f sph = sample_unit_sphere_surface(s);
  out(i, 11) = sph.z() * sph.z();
  Vec3f ball = sample_unit_sphere(s);
  out(i, 12) = dot(ball, ball);
  Vec3f hs = sample_unit_hemisphere_surface(s);
  out(i, 13) = hs.z();
  Vec3f hb = sample_unit_hemisphere(s);
  out(i, 14) = hb.z();
  Vec2f tri = sample_triangle(s);
  out(i, 15) = tri.x();
  out(i, 16) = Float(sample_cdf(s, cdf));
  out(i, 17) = Float(randu(s)) * 2.3283064365386963e-10f;  // the full uint32 range, / 2^32
  out(i, 18) = Float(randi(s)) * 4.656612873077393e-10f;   // the full int32 range, / 2^31
}
}  // namespace randoms

using namespace kjit;

namespace {
std::vector<uint32_t> streams(int seed, int threads) {
  NdArray out = zeros<uint32_t>({threads, 16});
  launch(randoms::stream, Dims(threads), seed, out);
  return out.to_vector<uint32_t>();
}
}  // namespace

// Run by the test below in a second process (KJIT_RANDOM_STREAM_FILE names the output).
TEST_CASE("random stream dump" * doctest::skip(std::getenv("KJIT_RANDOM_STREAM_FILE") == nullptr)) {
  std::ofstream f(std::getenv("KJIT_RANDOM_STREAM_FILE"));
  for (uint32_t v : streams(1234, 64)) f << v << "\n";
}

TEST_CASE("the same seed and offset give the same stream in two processes") {
  std::vector<uint32_t> here = streams(1234, 64);
  test::TempDir dir("random");
  const std::string file = dir / "stream.txt";
  std::string output;
  int rc = test::run_test_case("KJIT_RANDOM_STREAM_FILE=" + file, "random stream dump", &output);
  INFO(output);
  REQUIRE(rc == 0);
  std::ifstream f(file);
  std::vector<uint32_t> there;
  for (uint32_t v; f >> v;) there.push_back(v);
  CHECK(there == here);
  // Different offsets (threads) and seeds give different streams.
  CHECK(here[0] != here[16]);
  CHECK(streams(1235, 1)[0] != here[0]);
}

TEST_CASE("mean and variance of 10^6 samples of each distribution") {
  const int n = 1000000, columns = 19;
  std::vector<float> cdf{0.1f, 0.3f, 0.6f, 1.0f};  // P = 0.1, 0.2, 0.3, 0.4
  NdArray out = zeros<float>({n, columns});
  launch(randoms::sample, n, 42, from_vector(cdf), out);
  auto v = out.to_vector<float>();
  struct Moment {
    const char* what;
    double mean, variance;
  };
  // Exact moments of each column.
  const Moment m[columns] = {
      {"randf", 0.5, 1.0 / 12},
      {"randf(-2, 6)", 2.0, 64.0 / 12},
      {"randi(-10, 11)", 0.0, (21.0 * 21 - 1) / 12},
      {"randu(5, 9)", 6.5, (4.0 * 4 - 1) / 12},
      {"randn", 0.0, 1.0},
      {"poisson(3)", 3.0, 3.0},
      {"poisson(40)", 40.0, 40.0},
      {"unit square x", 0.0, 1.0 / 12},
      {"unit cube z", 0.0, 1.0 / 12},
      {"unit disk x^2", 0.25, 1.0 / 8 - 1.0 / 16},                   // E x^4 = 1/8
      {"unit ring y^2", 0.5, 3.0 / 8 - 0.25},                         // E y^4 = 3/8
      {"sphere surface z^2", 1.0 / 3, 1.0 / 5 - 1.0 / 9},            // E z^4 = 1/5
      {"ball |x|^2", 3.0 / 5, 3.0 / 7 - 9.0 / 25},                    // E r^4 = 3/7
      {"hemisphere surface z", 0.5, 1.0 / 12},
      {"half ball z", 3.0 / 8, 1.0 / 5 - 9.0 / 64},                   // E z^2 = 1/5
      {"triangle u", 1.0 / 3, 1.0 / 18},
      {"sample_cdf", 2.0, 1.0},                                        // 0.2 + 0.6 + 1.2; E k^2 = 5
      {"randu() / 2^32", 0.5, 1.0 / 12},
      {"randi() / 2^31", 0.0, 1.0 / 3},
  };
  for (int c = 0; c < columns; ++c) {
    double s = 0, s2 = 0;
    for (int i = 0; i < n; ++i) {
      double x = v[size_t(i) * columns + size_t(c)];
      s += x, s2 += x * x;
    }
    double mean = s / n, var = s2 / n - mean * mean;
    // Standard errors: of the mean sqrt(var/n); of the variance about var*sqrt(2/n) for
    // these light-tailed distributions (4 * for the heavier ones).
    double se_mean = std::sqrt(m[c].variance / n), se_var = 4 * m[c].variance * std::sqrt(2.0 / n);
    INFO(m[c].what << ": mean " << mean << " (want " << m[c].mean << "), variance " << var << " (want " << m[c].variance << ")");
    CHECK(std::fabs(mean - m[c].mean) <= 5 * se_mean);
    CHECK(std::fabs(var - m[c].variance) <= 5 * se_var);
  }
}
