// The demo program: launches the example kernels forward and backward.
#include <cstdio>
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"
int main() {
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) { x[i] = float(i); y[i] = 1.0f; }
  auto X = kjit::from_vector(x), Y = kjit::from_vector(y), O = kjit::zeros<float>({n});
  kjit::launch(demo::saxpy, n, X, Y, 2.0f, O);
  auto o = O.to_vector<float>();
  std::printf("saxpy: out[10] = %g (expect %g)\n", o[10], 2.0f * 10 + 1);
  auto gx = kjit::zeros<float>({n}), gy = kjit::zeros<float>({n}), go = kjit::from_vector(std::vector<float>(n, 1.0f));
  kjit::launch_adjoint(demo::saxpy, n, {X, Y, 2.0f, O}, {gx, gy, {}, go});
  std::printf("adj: gx[3] = %g gy[3] = %g\n", gx.to_vector<float>()[3], gy.to_vector<float>()[3]);
}
