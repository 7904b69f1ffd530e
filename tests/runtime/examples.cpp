// Each example kernel on the cpu against a plain C++ loop, on random data.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "kjit/kjit.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"

using namespace kjit;

namespace {
std::mt19937 rng(11);
float uf(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }
}  // namespace

TEST_CASE("saxpy and daxpy") {
  const int n = 10007;  // not a multiple of any chunk size
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) { x[size_t(i)] = uf(-1, 1); y[size_t(i)] = uf(-1, 1); }
  auto out = zeros<float>({n});
  launch(demo::saxpy, n, from_vector(x), from_vector(y), 1.5f, out);
  auto o = out.to_vector<float>();
  for (int i = 0; i < n; ++i) REQUIRE(o[size_t(i)] == 1.5f * x[size_t(i)] + y[size_t(i)]);

  std::vector<double> xd(x.begin(), x.end()), yd(y.begin(), y.end());
  auto outd = zeros<double>({n});
  launch(demo::daxpy, n, from_vector(xd), from_vector(yd), -0.25, outd);
  auto od = outd.to_vector<double>();
  for (int i = 0; i < n; ++i) REQUIRE(od[size_t(i)] == -0.25 * xd[size_t(i)] + yd[size_t(i)]);
}

TEST_CASE("springs: gathers and atomic scatters") {
  const int np = 500, ns = 3000;
  std::vector<vec3f> x(np);
  for (auto& p : x) p = vec3f{{uf(-2, 2), uf(-2, 2), uf(-2, 2)}};
  std::vector<int> pairs;
  std::vector<float> rest(ns);
  for (int s = 0; s < ns; ++s) {
    int a = int(rng() % np), b = int(rng() % np);
    if (a == b) b = (a + 1) % np;
    pairs.push_back(a);
    pairs.push_back(b);
    rest[size_t(s)] = uf(0.1f, 1.0f);
  }
  const float k = 50.0f;
  auto f = zeros<vec3f>({np});
  launch(demo::springs, ns, from_vector(x), from_vector(pairs), from_vector(rest), k, f);
  std::vector<double> ref(size_t(np) * 3, 0.0);
  for (int s = 0; s < ns; ++s) {
    int a = pairs[size_t(2 * s)], b = pairs[size_t(2 * s + 1)];
    float d[3] = {x[size_t(a)][0] - x[size_t(b)][0], x[size_t(a)][1] - x[size_t(b)][1], x[size_t(a)][2] - x[size_t(b)][2]};
    float len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (int c = 0; c < 3; ++c) {
      float force = d[c] * (k * (len - rest[size_t(s)]) / len);
      ref[size_t(a) * 3 + size_t(c)] -= force;
      ref[size_t(b) * 3 + size_t(c)] += force;
    }
  }
  auto got = f.to_vector<vec3f>();
  for (int p = 0; p < np; ++p)
    for (int c = 0; c < 3; ++c)
      REQUIRE(got[size_t(p)][c] == doctest::Approx(ref[size_t(p) * 3 + size_t(c)]).epsilon(1e-4).scale(100));
}

TEST_CASE("damp: a dynamic loop and a branch") {
  const int n = 2000;
  std::vector<vec3f> v(n);
  for (auto& p : v) p = vec3f{{uf(-30, 30), uf(-30, 30), uf(-30, 30)}};
  for (int steps : {0, 1, 7}) {
    auto out = zeros<vec3f>({n});
    launch(demo::damp, n, from_vector(v), 0.8f, steps, out);
    auto got = out.to_vector<vec3f>();
    for (int i = 0; i < n; ++i) {
      float w[3] = {v[size_t(i)][0], v[size_t(i)][1], v[size_t(i)][2]};
      for (int s = 0; s < steps; ++s) for (float& c : w) c *= 0.8f;
      float len = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
      if (len > 10.0f) for (float& c : w) c = c / len * 10.0f;
      for (int c = 0; c < 3; ++c) REQUIRE(got[size_t(i)][c] == doctest::Approx(w[c]).epsilon(1e-5));
    }
  }
}

TEST_CASE("iterate: x <- x*c + sin(x)") {
  const int n = 300;
  std::vector<double> x(n), c(n);
  for (int i = 0; i < n; ++i) { x[size_t(i)] = uf(-2, 2); c[size_t(i)] = uf(0.1f, 0.9f); }
  auto out = zeros<double>({n});
  launch(demo::iterate, n, from_vector(x), from_vector(c), 25, out);
  auto got = out.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    double y = x[size_t(i)];
    for (int s = 0; s < 25; ++s) y = y * c[size_t(i)] + std::sin(y);
    REQUIRE(got[size_t(i)] == doctest::Approx(y).epsilon(1e-12));
  }
}
