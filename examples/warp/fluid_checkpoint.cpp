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

#include "fluid_checkpoint_steps.hpp"

int main(int argc, char** argv) try {
  // Warp's estimate: 12 + 2 P grids a step (every Jacobi iterate is stored).
  const fluid_checkpoint_port::Config c = fluid_checkpoint_port::parse(argc, argv, [](int p) { return 12L + 2L * p; });
  namespace fp = fluid_checkpoint_port;
  fp::optimise(c, "fluid_checkpoint", [](int n) { return fp::fresh_fields(n, fluid_checkpoint::f32); },
               [&c](kjit::Tape& tape, const fp::Fields& state, const fp::Fields& end, int steps) {
                 tape.record_checkpoint([state, end, steps, &c] {
                   fp::simulate_segment(state, end, steps, c.grid, c.pressure_iterations, fluid_checkpoint::f32);
                 });
               });
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "warp_fluid_checkpoint: %s\n", e.what());
  return 1;
}
