// examples/warp/fluid_checkpoint_custom_backward.cpp — Warp 1.19's
// warp/examples/optim/example_fluid_checkpoint_custom_backward.py in kjit: the rollout and
// optimisation of fluid_checkpoint.cpp, whose pressure solve is not recorded launch by launch:
// its Jacobi iterations run off the tape (LaunchOptions::record_tape = false, Warp's
// record_tape=False) through two reused scratch grids, and one recorded function
// (Tape::record_func) runs the solve's adjoint, the transposed Jacobi stencil, backwards
// (fluid_checkpoint_solver.hpp). Each checkpoint's forward records that function on the tape it
// is given.
// Inputs, outputs and options as fluid_checkpoint.cpp's (the default segment size is Warp's
// estimate for this variant).
// Usage: warp_fluid_checkpoint_custom_backward [--grid N] [--steps S] [--pressure-iterations P]
//          [--segment-size K] [--iters I] [--target FILE] [--out FILE] [--deterministic 0|1]
#include <cstdio>
#include <exception>

#include "fluid_checkpoint_solver.hpp"

int main(int argc, char** argv) try {
  namespace fp = fluid_checkpoint_port;
  namespace fcb = fluid_checkpoint_custom_backward;
  // Warp's estimate for this variant: 14 grids a step (the solve keeps no iterates).
  const fp::Config c = fp::parse(argc, argv, [](int) { return 14L; });
  const fcb::JacobiSolver solver(c.pressure_iterations, c.grid, fluid_checkpoint::f32, fcb::f32);
  fp::optimise(c, "fluid_checkpoint_custom_backward", [](int n) { return fcb::fresh_fields(n, fluid_checkpoint::f32); },
               [&c, &solver](kjit::Tape& tape, const fp::Fields& state, const fp::Fields& end, int steps) {
                 tape.record_checkpoint([state, end, steps, &c, &solver](kjit::Tape& t) {
                   fcb::simulate_segment(state, end, steps, c.grid, solver, fluid_checkpoint::f32, t);
                 });
               });
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "warp_fluid_checkpoint_custom_backward: %s\n", e.what());
  return 1;
}
