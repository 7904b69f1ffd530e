// Helpers the autodiff suites share: seeded random inputs and "the gradient check passed".
#pragma once

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"

namespace autodiff_support {

/// `n` values uniform in [lo, hi) (drawn in double, rounded to T), the same for the same seed.
template <class T = double>
std::vector<T> random_values(int n, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = T(u(rng));
  return v;
}

/// The report passed, and every differentiable parameter was actually checked.
inline void expect_pass(const kjit::GradCheckReport& r) {
  INFO(r.str());
  CHECK(r.passed());
  for (const kjit::GradCheckParam& p : r.params) CHECK(p.checked > 0);
}

}  // namespace autodiff_support
