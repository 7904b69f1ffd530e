// examples/warp/fluid_checkpoint_steps.hpp — the time steps of fluid_checkpoint.cpp (Warp's
// example_fluid_checkpoint.py): every launch recorded, every Jacobi iterate a fresh grid; over
// the kernels of either precision (float32: the port; float64: the gradient checks in
// tests/autodiff/warp_fluid_gradients.cpp).
#pragma once

#include "fluid_checkpoint_common.hpp"

namespace fluid_checkpoint_port {

/// One time step from `in` to `out` (Warp's Example.step): self-advection, the projection with
/// `pressure_iterations` Jacobi iterations warm-started from in.pressure, density advection.
/// Every intermediate is a fresh array, so none is overwritten while a tape needs it.
inline void step(const Fields& in, const Fields& out, int n, int pressure_iterations,
                 const fluid_checkpoint::Kernels& k) {
  const kjit::Dims dims{n, n};
  const double dt = 1.0, dh = 1.0 / n;  // Python floats, float32 at the launch as in Warp
  kjit::NdArray wx = grid(n, k), wy = grid(n, k), div = grid(n, k);
  kjit::launch(k.advect, dims, {dt, in.vx, in.vy, in.vx, wx, n});
  kjit::launch(k.advect, dims, {dt, in.vx, in.vy, in.vy, wy, n});
  kjit::launch(k.divergence, dims, {wx, wy, div, n, dh});
  kjit::NdArray pressure = in.pressure;
  for (int it = 0; it < pressure_iterations; ++it) {
    kjit::NdArray next = it == pressure_iterations - 1 ? out.pressure : grid(n, k);
    kjit::launch(k.jacobi_iter, dims, {div, pressure, next, n, dh});
    pressure = next;
  }
  kjit::launch(k.update_velocities, dims, {pressure, wx, wy, out.vx, out.vy, n, dh});
  kjit::launch(k.advect, dims, {dt, out.vx, out.vy, in.density, out.density, n});
}

inline Fields fresh_fields(int n, const fluid_checkpoint::Kernels& k) {
  return Fields{grid(n, k), grid(n, k), grid(n, k), grid(n, k)};
}

/// `steps` time steps from `in`, the last one writing `out`.
inline void simulate_segment(const Fields& in, const Fields& out, int steps, int n, int pressure_iterations,
                             const fluid_checkpoint::Kernels& k) {
  Fields state = in;
  for (int t = 1; t <= steps; ++t) {
    Fields next = t == steps ? out : fresh_fields(n, k);
    step(state, next, n, pressure_iterations, k);
    state = next;
  }
}

}  // namespace fluid_checkpoint_port
