// examples/warp/fluid_checkpoint.cpp — Warp 1.19's warp/examples/optim/example_fluid_checkpoint.py
// in kjit: a differentiable 2-D stable-fluids rollout (self-advection, a damped-Jacobi pressure
// projection on a periodic grid, density advection) whose initial velocity is optimised with Adam
// so that the final density matches a target image. Warp checkpoints by hand (saved segment starts,
// one wp.Tape per segment replayed in reverse, gradients copied between segments); here each
// segment is one kjit::Tape::record_checkpoint on a single tape, which replays it in backward().
// Warp reads its target from nvidia_logo.png; this port reads it as float32 (row-major, N x N)
// from --target (scripts/warp_examples.py writes Warp's own resized image), else uses a disk.
// --out gets, as float32: the loss of every iteration, then the optimised vx and vy, then the
// last iteration's gradients of vx and vy; the program prints the milliseconds per iteration.
// Usage: warp_fluid_checkpoint [--grid N] [--steps S] [--pressure-iterations P] [--segment-size K]
//                              [--iters I] [--target FILE] [--out FILE] [--deterministic 0|1]
#include <cstdio>
#include <exception>

#include "fluid_checkpoint_common.hpp"

namespace {
using fluid_checkpoint_port::Config;
using fluid_checkpoint_port::Fields;
using fluid_checkpoint_port::grid;

/// One time step from `in` to `out` (Warp's Example.step): self-advection, the projection with
/// `pressure_iterations` Jacobi iterations warm-started from in.pressure, density advection.
/// Every intermediate is a fresh array, so none is overwritten while a tape needs it.
void step(const Fields& in, const Fields& out, const Config& c) {
  namespace fc = fluid_checkpoint;
  const int n = c.grid;
  const kjit::Dims dims{n, n};
  const double dt = 1.0, dh = 1.0 / n;  // Python floats, float32 at the launch as in Warp
  kjit::NdArray wx = grid(n), wy = grid(n), div = grid(n);
  kjit::launch(fc::advect, dims, dt, in.vx, in.vy, in.vx, wx, n);
  kjit::launch(fc::advect, dims, dt, in.vx, in.vy, in.vy, wy, n);
  kjit::launch(fc::divergence, dims, wx, wy, div, n, dh);
  kjit::NdArray pressure = in.pressure;
  for (int k = 0; k < c.pressure_iterations; ++k) {
    kjit::NdArray next = k == c.pressure_iterations - 1 ? out.pressure : grid(n);
    kjit::launch(fc::jacobi_iter, dims, div, pressure, next, n, dh);
    pressure = next;
  }
  kjit::launch(fc::update_velocities, dims, pressure, wx, wy, out.vx, out.vy, n, dh);
  kjit::launch(fc::advect, dims, dt, out.vx, out.vy, in.density, out.density, n);
}

Fields fresh_fields(int n) { return Fields{grid(n), grid(n), grid(n), grid(n)}; }

/// `steps` time steps from `in`, the last one writing `out`.
void simulate_segment(const Fields& in, const Fields& out, int steps, const Config& c) {
  Fields state = in;
  for (int t = 1; t <= steps; ++t) {
    Fields next = t == steps ? out : fresh_fields(c.grid);
    step(state, next, c);
    state = next;
  }
}

}  // namespace

int main(int argc, char** argv) try {
  // Warp's estimate: 12 + 2 P grids a step (every Jacobi iterate is stored).
  const Config c = fluid_checkpoint_port::parse(argc, argv, [](int p) { return 12L + 2L * p; });
  fluid_checkpoint_port::optimise(c, "fluid_checkpoint", fresh_fields,
                                  [&c](kjit::Tape& tape, const Fields& state, const Fields& end, int steps) {
                                    tape.record_checkpoint([state, end, steps, &c] { simulate_segment(state, end, steps, c); });
                                  });
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "warp_fluid_checkpoint: %s\n", e.what());
  return 1;
}
