// examples/warp/fluid_checkpoint_solver.hpp — the pressure solve of
// fluid_checkpoint_custom_backward.cpp (Warp's example_fluid_checkpoint_custom_backward.py):
// Jacobi iterations off the tape through two reused scratch grids, and their adjoint, the
// transposed stencil, as one recorded function; and the time steps around it. Over the kernels
// of either precision (float32: the port; float64: tests/autodiff/warp_fluid_gradients.cpp).
#pragma once

#include <utility>

#include "fluid_checkpoint_common.hpp"

namespace fluid_checkpoint_custom_backward {
using namespace kjit::dsl;
using fluid_checkpoint::cyclic_index;
using fluid_checkpoint::Grid;
using fluid_checkpoint::jacobi_relaxation;

/// The adjoint of one damped Jacobi iteration: div enters pointwise, and on the periodic grid
/// each p0 cell reaches p1 through the same symmetric stencil, so each thread gathers its five
/// contributions without atomics.
template <class T>
void jacobi_iter_adjoint_body(Grid<T> div_grad, Grid<T> p1_grad, Grid<T> p0_grad, Int n, Value<T> dh) {
  auto [i, j] = tid<2>();
  div_grad(i, j) += T(-0.25) * jacobi_relaxation<T> * dh * dh * p1_grad(i, j);
  p0_grad(i, j) = (T(1) - jacobi_relaxation<T>) * p1_grad(i, j) +
                  T(0.25) * jacobi_relaxation<T> *
                      (p1_grad(cyclic_index(i - 1, n), j) + p1_grad(cyclic_index(i + 1, n), j) +
                       p1_grad(i, cyclic_index(j - 1, n)) + p1_grad(i, cyclic_index(j + 1, n)));
}

template <class T> void accumulate_pressure_grad_body(Grid<T> pressure_grad_increment, Grid<T> pressure_grad) {
  auto [i, j] = tid<2>();
  pressure_grad(i, j) += pressure_grad_increment(i, j);
}

/// The solve's adjoint kernels of one precision.
struct AdjointKernels {
  const kjit::KernelDef &jacobi_iter_adjoint, &accumulate_pressure_grad;
};

// float32: Warp's.
KJIT_MODULE(warp_fluid_checkpoint_custom_backward)
KJIT_KERNEL(jacobi_iter_adjoint, (Grid<float> div_grad, Grid<float> p1_grad, Grid<float> p0_grad, Int n, Float dh)) {
  jacobi_iter_adjoint_body<float>(div_grad, p1_grad, p0_grad, n, dh);
}
KJIT_KERNEL(accumulate_pressure_grad, (Grid<float> pressure_grad_increment, Grid<float> pressure_grad)) {
  accumulate_pressure_grad_body<float>(pressure_grad_increment, pressure_grad);
}
inline const AdjointKernels f32{jacobi_iter_adjoint.def(), accumulate_pressure_grad.def()};
}  // namespace fluid_checkpoint_custom_backward

// float64 twins, for the gradient checks.
namespace fluid_checkpoint_custom_backward_f64 {
using namespace kjit::dsl;
using namespace fluid_checkpoint_custom_backward;
KJIT_MODULE(warp_fluid_checkpoint_custom_backward_f64)
KJIT_KERNEL(jacobi_iter_adjoint,
            (Grid<double> div_grad, Grid<double> p1_grad, Grid<double> p0_grad, Int n, Double dh)) {
  jacobi_iter_adjoint_body<double>(div_grad, p1_grad, p0_grad, n, dh);
}
KJIT_KERNEL(accumulate_pressure_grad, (Grid<double> pressure_grad_increment, Grid<double> pressure_grad)) {
  accumulate_pressure_grad_body<double>(pressure_grad_increment, pressure_grad);
}
inline const fluid_checkpoint_custom_backward::AdjointKernels f64{jacobi_iter_adjoint.def(),
                                                                  accumulate_pressure_grad.def()};
}  // namespace fluid_checkpoint_custom_backward_f64

namespace fluid_checkpoint_custom_backward {
using fluid_checkpoint_port::Fields;
using fluid_checkpoint_port::grid;

/// Warp's JacobiSolver: the pressure solve through two scratch grids it reuses for every solve
/// and every backward, its launches off the tape, and its adjoint one recorded function.
class JacobiSolver {
 public:
  JacobiSolver(int iterations, int n, const fluid_checkpoint::Kernels& k, const AdjointKernels& adjoint)
      : iterations_(iterations), n_(n), k_(&k), adjoint_(&adjoint), scratch0_(grid(n, k)), scratch1_(grid(n, k)) {}

  /// Advances p0 to p1 (div fixed); with a tape, records the solve's adjoint on it.
  void solve(const kjit::NdArray& div, const kjit::NdArray& p0, const kjit::NdArray& p1, kjit::Tape* tape) const {
    const kjit::Dims dims{n_, n_};
    const double dh = 1.0 / n_;
    kjit::LaunchOptions off_tape;
    off_tape.record_tape = false;
    kjit::NdArray pressure = p0, scratch0 = scratch0_, scratch1 = scratch1_;
    for (int k = 0; k < iterations_; ++k) {
      kjit::NdArray next = k == iterations_ - 1 ? p1 : scratch0;
      kjit::launch(k_->jacobi_iter, dims, {div, pressure, next, n_, dh}, off_tape);
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
    const kjit::Dims dims{n_, n_};
    const double dh = 1.0 / n_;
    kjit::LaunchOptions off_tape;
    off_tape.record_tape = false;
    kjit::NdArray g0 = scratch0_, g1 = scratch1_;
    g0.copy_from(p1.grad());  // a copy: p1's gradient stays for other users
    for (int k = 0; k < iterations_; ++k) {
      kjit::launch(adjoint_->jacobi_iter_adjoint, dims, {div.grad(), g0, g1, n_, dh}, off_tape);
      std::swap(g0, g1);
    }
    kjit::launch(adjoint_->accumulate_pressure_grad, dims, {g0, p0.grad()}, off_tape);
  }

  int iterations_, n_;
  const fluid_checkpoint::Kernels* k_;
  const AdjointKernels* adjoint_;
  kjit::NdArray scratch0_, scratch1_;
};

/// One time step from `in` to `out` (Warp's Example.step): self-advection, the projection by
/// `solver` warm-started from in.pressure, density advection. Every intermediate is a fresh
/// array, so none is overwritten while a tape needs it.
inline void step(const Fields& in, const Fields& out, int n, const JacobiSolver& solver,
                 const fluid_checkpoint::Kernels& k, kjit::Tape* tape) {
  const kjit::Dims dims{n, n};
  const double dt = 1.0, dh = 1.0 / n;  // Python floats, float32 at the launch as in Warp
  kjit::NdArray wx = grid(n, k), wy = grid(n, k), div = grid(n, k).requires_grad();
  kjit::launch(k.advect, dims, {dt, in.vx, in.vy, in.vx, wx, n});
  kjit::launch(k.advect, dims, {dt, in.vx, in.vy, in.vy, wy, n});
  kjit::launch(k.divergence, dims, {wx, wy, div, n, dh});
  solver.solve(div, in.pressure, out.pressure, tape);
  kjit::launch(k.update_velocities, dims, {out.pressure, wx, wy, out.vx, out.vy, n, dh});
  kjit::launch(k.advect, dims, {dt, out.vx, out.vy, in.density, out.density, n});
}

/// The state after a step; the pressure has its own gradient, which the solve's function uses.
inline Fields fresh_fields(int n, const fluid_checkpoint::Kernels& k) {
  return Fields{grid(n, k), grid(n, k), grid(n, k), grid(n, k).requires_grad()};
}

/// `steps` time steps from `in`, the last one writing `out`, recorded on `tape`.
inline void simulate_segment(const Fields& in, const Fields& out, int steps, int n, const JacobiSolver& solver,
                             const fluid_checkpoint::Kernels& k, kjit::Tape& tape) {
  Fields state = in;
  for (int t = 1; t <= steps; ++t) {
    Fields next = t == steps ? out : fresh_fields(n, k);
    step(state, next, n, solver, k, &tape);
    state = next;
  }
}

}  // namespace fluid_checkpoint_custom_backward
