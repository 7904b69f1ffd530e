// The Warp fluid_checkpoint ports' gradients (examples/warp/fluid_checkpoint*.{hpp,cpp}) in
// float64: the same kernels and steps, recorded launch by launch or in checkpoints, and with the
// custom backward's recorded function, against central differences of the loss
// (check_gradients over the whole program).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gradient_support.hpp"
#include "kjit/runtime/tape.hpp"
#include "warp/fluid_checkpoint_solver.hpp"
#include "warp/fluid_checkpoint_steps.hpp"

using namespace kjit;

namespace wfg_tests {
using namespace kjit::dsl;
using fluid_checkpoint::cyclic_index;
using fluid_checkpoint::Grid;
using fluid_checkpoint::jacobi_relaxation;
KJIT_MODULE(wfg_tests)

// A custom backward with a classic slip: the transposed stencil is right, but div's gradient is
// never added (jacobi_iter_adjoint without its first line). The check must catch it.
KJIT_KERNEL(adjoint_without_div, (Grid<double> div_grad, Grid<double> p1_grad, Grid<double> p0_grad, Int n, Double dh)) {
  auto [i, j] = tid<2>();
  p0_grad(i, j) = (1.0 - jacobi_relaxation<double>) * p1_grad(i, j) +
                  0.25 * jacobi_relaxation<double> *
                      (p1_grad(cyclic_index(i - 1, n), j) + p1_grad(cyclic_index(i + 1, n), j) +
                       p1_grad(i, cyclic_index(j - 1, n)) + p1_grad(i, cyclic_index(j + 1, n)));
}
}  // namespace wfg_tests

namespace {
namespace fc = fluid_checkpoint;
namespace fp = fluid_checkpoint_port;
namespace fcb = fluid_checkpoint_custom_backward;
const fc::Kernels& K = fluid_checkpoint_f64::f64;

/// The optimisation's loss program at a small size: `steps` steps from random initial
/// velocities (the inputs), in segments of `segment` steps (0: no checkpoints), then the loss
/// against a disk.
struct Rollout {
  int n = 16, steps = 4, iterations = 3, segment = 0;
  NdArray vx0, vy0, loss = zeros<double>({1}), target;
  fp::Fields start;
  std::function<fp::Fields(int)> fresh;
  /// Records `count` steps from `in` to `out` on the tape it is given.
  std::function<void(Tape&, const fp::Fields&, const fp::Fields&, int)> segment_steps;

  Rollout(std::function<fp::Fields(int)> fresh_fields, unsigned seed) : fresh(std::move(fresh_fields)) {
    vx0 = from_vector(autodiff_support::random_values(n * n, -0.45, 0.45, seed), {n, n}).requires_grad();
    vy0 = from_vector(autodiff_support::random_values(n * n, -0.45, 0.45, seed + 1), {n, n}).requires_grad();
    const fp::Fields empty = fresh(n);
    start = fp::Fields{vx0, vy0, empty.density, empty.pressure};
    launch(K.fill_initial_density, {n, n}, {start.density, n / 10.0});
    std::vector<double> disk(size_t(n * n));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        disk[size_t(i * n + j)] = (i - n / 2.0) * (i - n / 2.0) + (j - n / 2.0) * (j - n / 2.0) < n * n / 16.0;
    target = from_vector(disk, {n, n});
  }

  void operator()(Tape& tape) {
    loss.zero();
    fp::Fields state = start;
    for (int done = 0; done < steps;) {
      const int count = segment == 0 ? steps : std::min(segment, steps - done);
      const fp::Fields end = fresh(n);
      if (segment == 0) {
        segment_steps(tape, state, end, count);
      } else {
        auto body = segment_steps;
        tape.record_checkpoint([body, state, end, count](Tape& inner) { body(inner, state, end, count); });
      }
      state = end;
      done += count;
    }
    launch(K.compute_loss, {n, n}, {state.density, target, loss, n});
  }

  GradCheckReport check() {
    GradCheckOptions options;
    options.max_elements = 24;
    // Relative agreement, not float64's default absolute floor (1e-9, about 1e-5 of these
    // gradients of 1e-4 to 1e-3): the worst components agree to 1e-6 (the bilinear
    // interpolation's kinks near some sample points); a wrong backward misses by order one.
    options.rtol = 1e-5;
    options.atol = 1e-12;
    return check_gradients(std::ref(*this), loss, {vx0, vy0}, options);
  }
};

Rollout recorded_rollout(int segment) {
  Rollout r([](int n) { return fp::fresh_fields(n, K); }, 5);
  r.segment = segment;
  r.segment_steps = [n = r.n, iterations = r.iterations](Tape&, const fp::Fields& in, const fp::Fields& out,
                                                         int count) {
    fp::simulate_segment(in, out, count, n, iterations, K);
  };
  return r;
}

Rollout custom_backward_rollout(int segment, const fcb::AdjointKernels& adjoint) {
  Rollout r([](int n) { return fcb::fresh_fields(n, K); }, 9);
  r.segment = segment;
  const fcb::JacobiSolver solver(r.iterations, r.n, K, adjoint);
  r.segment_steps = [n = r.n, solver](Tape& tape, const fp::Fields& in, const fp::Fields& out, int count) {
    fcb::simulate_segment(in, out, count, n, solver, K, tape);
  };
  return r;
}
}  // namespace

TEST_CASE("the fluid_checkpoint port's gradients, launch by launch and through checkpoints, in float64") {
  for (int segment : {0, 1, 3}) {
    CAPTURE(segment);
    Rollout r = recorded_rollout(segment);
    const GradCheckReport report = r.check();
    autodiff_support::expect_pass(report);
    REQUIRE(report.params.size() == 2);
    CHECK(report.params[0].checked == 24);
  }
}

TEST_CASE("the custom-backward port's gradients (a recorded function per solve), plain and checkpointed") {
  for (int segment : {0, 2}) {
    CAPTURE(segment);
    Rollout r = custom_backward_rollout(segment, fluid_checkpoint_custom_backward_f64::f64);
    autodiff_support::expect_pass(r.check());
  }
  // Both ports differentiate the same function: their gradients agree to rounding.
  Rollout a = recorded_rollout(2), b = custom_backward_rollout(2, fluid_checkpoint_custom_backward_f64::f64);
  b.vx0.copy_from(a.vx0);
  b.vy0.copy_from(a.vy0);
  for (Rollout* r : {&a, &b}) {
    Tape tape;
    {
      auto on = tape.record();
      (*r)(tape);
    }
    tape.backward(r->loss);
  }
  CHECK(a.loss.to_vector<double>()[0] == doctest::Approx(b.loss.to_vector<double>()[0]).epsilon(1e-12));
  const std::vector<double> ga = a.vx0.grad().to_vector<double>(), gb = b.vx0.grad().to_vector<double>();
  double largest = 0, worst = 0;
  for (size_t e = 0; e < ga.size(); ++e) largest = std::max(largest, std::abs(ga[e])), worst = std::max(worst, std::abs(ga[e] - gb[e]));
  CHECK(largest > 1e-6);  // a gradient to compare
  CHECK(worst <= 1e-10 * largest);
}

TEST_CASE("a custom backward that forgets div's gradient fails the check") {
  const fcb::AdjointKernels wrong{wfg_tests::adjoint_without_div.def(),
                                  fluid_checkpoint_custom_backward_f64::accumulate_pressure_grad.def()};
  for (int segment : {0, 2}) {
    CAPTURE(segment);
    Rollout r = custom_backward_rollout(segment, wrong);
    const GradCheckReport report = r.check();
    INFO(report.str());
    CHECK_FALSE(report.passed());
  }
}
