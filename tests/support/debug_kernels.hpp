// Kernels of the debugging-aid tests, shared by the cpu suite (tests/builtins/debug.cpp) and the
// cuda:0 one (tests/gpu/debug_test.cpp), which expect the same output from them.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "kjit/kjit.hpp"

namespace debugging {
using namespace kjit::dsl;
KJIT_MODULE(builtins_debug)

/// Thread 1 prints x[1] (forward), a printf line, a text and a matrix, then s; out = 2 s with
/// s = |x|^2 (the adjoint of print(s) prints s's adjoint, "adj 2" for a unit out gradient).
KJIT_KERNEL(prints, (Array<Vec3d> x, Array<double> out)) {
  Int i = tid();
  If(i == 1, [&] {
    print(x[i]);
    printf("thread %d of %d, x = %g\n", i, launch_dim(0), x[i].y());
    print("plain text");
    print(Mat22d(1.0, 2.0, 3.0, 4.0));
  });
  Double s = dot(x[i], x[i]);
  If(i == 1, [&] { print(s); });
  out[i] = s * 2.0;
}

/// Checks what a forward launch of prints over x = {(1, 2, 3), (4, 5, 6)} wrote.
inline void check_prints_forward(const std::string& text) {
  CHECK(text.find("(4, 5, 6)\n") != std::string::npos);
  CHECK(text.find("thread 1 of 2, x = 5\n") != std::string::npos);
  CHECK(text.find("plain text\n") != std::string::npos);
  CHECK(text.find("[(1, 2), (3, 4)]\n") != std::string::npos);
  CHECK(text.find("77\n") != std::string::npos);
  CHECK(text.find("adj") == std::string::npos);
}

/// Checks what its adjoint launch with a unit gradient of out wrote.
inline void check_prints_adjoint(const std::string& text) {
  CHECK(text.find("adj 2\n") != std::string::npos);  // d(out)/d(s) = 2: the adjoint of s
  CHECK(text.find("thread 1") == std::string::npos);  // printf is forward only
}
}  // namespace debugging

namespace checks {
using namespace kjit::dsl;
KJIT_MODULE(builtins_checks)
KJIT_KERNEL(near, (Array<float> x, Array<float> y)) { expect_near(x[tid()], y[tid()], 1e-3f); }
/// The line of near's expect_near, which a failing check prints after the file name.
constexpr int kNearLine = __LINE__ - 2;
}  // namespace checks
