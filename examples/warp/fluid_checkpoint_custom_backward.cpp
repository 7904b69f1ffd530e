// examples/warp/fluid_checkpoint_custom_backward.cpp — Warp 1.19's
// warp/examples/optim/example_fluid_checkpoint_custom_backward.py in kjit: the rollout and
// optimisation of fluid_checkpoint.cpp, whose pressure solve is not recorded launch by launch:
// its Jacobi iterations run off the tape (LaunchOptions::record_tape = false, Warp's
// record_tape=False) through two reused scratch grids, and one recorded function
// (Tape::record_func) runs the solve's adjoint, the transposed Jacobi stencil, backwards. Each
// checkpoint's forward records that function on the tape it is given.
// Inputs, outputs and options as fluid_checkpoint.cpp's (the default segment size is Warp's
// estimate for this variant).
// Usage: warp_fluid_checkpoint_custom_backward [--grid N] [--steps S] [--pressure-iterations P]
//          [--segment-size K] [--iters I] [--target FILE] [--out FILE] [--deterministic 0|1]
#include <cstdio>
#include <exception>
#include <utility>

#include "fluid_checkpoint_common.hpp"

namespace fluid_checkpoint_custom_backward {
using namespace kjit::dsl;
using fluid_checkpoint::cyclic_index;
using fluid_checkpoint::jacobi_relaxation;
KJIT_MODULE(warp_fluid_checkpoint_custom_backward)

/// The adjoint of one damped Jacobi iteration: div enters pointwise, and on the periodic grid
/// each p0 cell reaches p1 through the same symmetric stencil, so each thread gathers its five
/// contributions without atomics.
KJIT_KERNEL(jacobi_iter_adjoint, (Array<Float, 2> div_grad, Array<Float, 2> p1_grad, Array<Float, 2> p0_grad, Int n,
                                  Float dh)) {
  auto [i, j] = tid<2>();
  div_grad(i, j) += -0.25f * jacobi_relaxation * dh * dh * p1_grad(i, j);
  p0_grad(i, j) = (1.0f - jacobi_relaxation) * p1_grad(i, j) +
                  0.25f * jacobi_relaxation *
                      (p1_grad(cyclic_index(i - 1, n), j) + p1_grad(cyclic_index(i + 1, n), j) +
                       p1_grad(i, cyclic_index(j - 1, n)) + p1_grad(i, cyclic_index(j + 1, n)));
}

KJIT_KERNEL(accumulate_pressure_grad, (Array<Float, 2> pressure_grad_increment, Array<Float, 2> pressure_grad)) {
  auto [i, j] = tid<2>();
  pressure_grad(i, j) += pressure_grad_increment(i, j);
}
}  // namespace fluid_checkpoint_custom_backward

namespace {
using fluid_checkpoint_port::Config;
using fluid_checkpoint_port::Fields;
using fluid_checkpoint_port::grid;

/// Warp's JacobiSolver: the pressure solve through two scratch grids it reuses for every solve
/// and every backward, its launches off the tape, and its adjoint one recorded function.
class JacobiSolver {
 public:
  JacobiSolver(int iterations, int n) : iterations_(iterations), n_(n), scratch0_(grid(n)), scratch1_(grid(n)) {}

  /// Advances p0 to p1 (div fixed); with a tape, records the solve's adjoint on it.
  void solve(const kjit::NdArray& div, const kjit::NdArray& p0, const kjit::NdArray& p1, kjit::Tape* tape) const {
    namespace fc = fluid_checkpoint;
    const kjit::Dims dims{n_, n_};
    const double dh = 1.0 / n_;
    kjit::LaunchOptions off_tape;
    off_tape.record_tape = false;
    kjit::NdArray pressure = p0, scratch0 = scratch0_, scratch1 = scratch1_;
    for (int k = 0; k < iterations_; ++k) {
      kjit::NdArray next = k == iterations_ - 1 ? p1 : scratch0;
      kjit::launch(fc::jacobi_iter.def(), dims, {div, pressure, next, n_, dh}, off_tape);
      pressure = next;
      std::swap(scratch0, scratch1);
    }
    if (!tape) return;
    const JacobiSolver solver = *this;  // the scratch handles: the same grids
    // Its gradients are the arrays' own: they need one each (Warp's requires_grad=True).
    tape->record_func([solver, div, p0, p1] { solver.backward(div, p0, p1); }, {div, p0, p1});
  }

 private:
  /// p1's gradient through the transposed iterations into p0's and div's (the previous step's
  /// final pressure is this solve's initial guess: its gradient is added to).
  void backward(const kjit::NdArray& div, const kjit::NdArray& p0, const kjit::NdArray& p1) const {
    namespace fcb = fluid_checkpoint_custom_backward;
    const kjit::Dims dims{n_, n_};
    const double dh = 1.0 / n_;
    kjit::LaunchOptions off_tape;
    off_tape.record_tape = false;
    kjit::NdArray g0 = scratch0_, g1 = scratch1_;
    g0.copy_from(p1.grad());  // a copy: p1's gradient stays for other users
    for (int k = 0; k < iterations_; ++k) {
      kjit::launch(fcb::jacobi_iter_adjoint.def(), dims, {div.grad(), g0, g1, n_, dh}, off_tape);
      std::swap(g0, g1);
    }
    kjit::launch(fcb::accumulate_pressure_grad.def(), dims, {g0, p0.grad()}, off_tape);
  }

  int iterations_, n_;
  kjit::NdArray scratch0_, scratch1_;
};

/// One time step from `in` to `out` (Warp's Example.step): self-advection, the projection by
/// `solver` warm-started from in.pressure, density advection. Every intermediate is a fresh
/// array, so none is overwritten while a tape needs it.
void step(const Fields& in, const Fields& out, const Config& c, const JacobiSolver& solver, kjit::Tape* tape) {
  namespace fc = fluid_checkpoint;
  const int n = c.grid;
  const kjit::Dims dims{n, n};
  const double dt = 1.0, dh = 1.0 / n;  // Python floats, float32 at the launch as in Warp
  kjit::NdArray wx = grid(n), wy = grid(n), div = grid(n).requires_grad();
  kjit::launch(fc::advect, dims, dt, in.vx, in.vy, in.vx, wx, n);
  kjit::launch(fc::advect, dims, dt, in.vx, in.vy, in.vy, wy, n);
  kjit::launch(fc::divergence, dims, wx, wy, div, n, dh);
  solver.solve(div, in.pressure, out.pressure, tape);
  kjit::launch(fc::update_velocities, dims, out.pressure, wx, wy, out.vx, out.vy, n, dh);
  kjit::launch(fc::advect, dims, dt, out.vx, out.vy, in.density, out.density, n);
}

/// The state after a step; the pressure has its own gradient, which the solve's function uses.
Fields fresh_fields(int n) { return Fields{grid(n), grid(n), grid(n), grid(n).requires_grad()}; }

/// `steps` time steps from `in`, the last one writing `out`, recorded on `tape`.
void simulate_segment(const Fields& in, const Fields& out, int steps, const Config& c, const JacobiSolver& solver,
                      kjit::Tape& tape) {
  Fields state = in;
  for (int t = 1; t <= steps; ++t) {
    Fields next = t == steps ? out : fresh_fields(c.grid);
    step(state, next, c, solver, &tape);
    state = next;
  }
}

}  // namespace

int main(int argc, char** argv) try {
  // Warp's estimate for this variant: 14 grids a step (the solve keeps no iterates).
  const Config c = fluid_checkpoint_port::parse(argc, argv, [](int) { return 14L; });
  const JacobiSolver solver(c.pressure_iterations, c.grid);
  fluid_checkpoint_port::optimise(
      c, "fluid_checkpoint_custom_backward", fresh_fields,
      [&c, &solver](kjit::Tape& tape, const Fields& state, const Fields& end, int steps) {
        tape.record_checkpoint(
            [state, end, steps, &c, &solver](kjit::Tape& t) { simulate_segment(state, end, steps, c, solver, t); });
      });
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "warp_fluid_checkpoint_custom_backward: %s\n", e.what());
  return 1;
}
