// examples/warp/fluid_checkpoint_common.hpp — what Warp 1.19's two checkpointed fluid
// optimisations (optim/example_fluid_checkpoint.py and its _custom_backward variant) share, in
// kjit: the stable-fluids kernels (module warp_fluid_checkpoint; float64 twins in
// warp_fluid_checkpoint_f64 for the gradient checks), the state of a step, the
// options, the target image, and the optimisation loop (a tape with one checkpoint per segment,
// Adam), which each port gives its own way of recording a segment.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/optim.hpp"
#include "kjit/runtime/tape.hpp"

namespace fluid_checkpoint {
using namespace kjit::dsl;

// Warp's N_GRID is a wp.constant (512); the grid size is a parameter here so that the check and
// the ctest can run small grids, and DH = 1 / N_GRID (a Python float, float32 in Warp's kernels)
// comes in as a Float of the same value. The kernels are Warp's float32 ones; their bodies are
// templates over the host scalar T so that the float64 twins (module
// warp_fluid_checkpoint_f64) run the same code for the central-difference gradient checks.
/// Damping makes the checkerboard mode decay.
template <class T> constexpr T jacobi_relaxation = T(2.0 / 3.0);

template <class T> using Grid = Array<Value<T>, 2>;

/// Periodic boundary: wraps an index into [0, n).
inline const auto cyclic_index = func("cyclic_index", [](Int idx, Int n) {
  Var<Int> ret_idx = idx % n;
  If(ret_idx < 0, [&] { ret_idx += n; });
  return Int(ret_idx);
});

template <class T> void fill_initial_density_body(Grid<T> density, Value<T> column_width) {
  auto [i, j] = tid<2>();
  Value<T> y_pos = Value<T>(i);
  // Three bands of fluid.
  If(column_width <= y_pos && y_pos < T(2) * column_width, [&] { density(i, j) = T(1); })
      .ElseIf(T(4.5) * column_width <= y_pos && y_pos < T(5.5) * column_width, [&] { density(i, j) = T(1); })
      .ElseIf(T(8) * column_width <= y_pos && y_pos < T(9) * column_width, [&] { density(i, j) = T(1); })
      .Else([&] { density(i, j) = T(0); });
}

/// Moves f0 along (vx, vy) back in time: semi-Lagrangian, bilinear, periodic.
template <class T> void advect_body(Value<T> dt, Grid<T> vx, Grid<T> vy, Grid<T> f0, Grid<T> f1, Int n) {
  auto [i, j] = tid<2>();
  Value<T> center_xs = Value<T>(i) - vx(i, j) * dt;
  Value<T> center_ys = Value<T>(j) - vy(i, j) * dt;
  Int left_idx = Int(floor(center_xs));
  Int bot_idx = Int(floor(center_ys));
  Value<T> s1 = center_xs - Value<T>(left_idx);  // weight of the right cell
  Value<T> s0 = T(1) - s1;
  Value<T> t1 = center_ys - Value<T>(bot_idx);  // weight of the top cell
  Value<T> t0 = T(1) - t1;
  Int i0 = cyclic_index(left_idx, n), i1 = cyclic_index(left_idx + 1, n);
  Int j0 = cyclic_index(bot_idx, n), j1 = cyclic_index(bot_idx + 1, n);
  f1(i, j) = s0 * (t0 * f0(i0, j0) + t1 * f0(i0, j1)) + s1 * (t0 * f0(i1, j0) + t1 * f0(i1, j1));
}

/// Backward-difference divergence, paired with the forward pressure gradient.
template <class T> void divergence_body(Grid<T> wx, Grid<T> wy, Grid<T> div, Int n, Value<T> dh) {
  auto [i, j] = tid<2>();
  div(i, j) = (wx(i, j) - wx(cyclic_index(i - 1, n), j) + wy(i, j) - wy(i, cyclic_index(j - 1, n))) / dh;
}

/// One damped Jacobi iteration of the pressure Poisson equation.
template <class T> void jacobi_iter_body(Grid<T> div, Grid<T> p0, Grid<T> p1, Int n, Value<T> dh) {
  auto [i, j] = tid<2>();
  p1(i, j) = (T(1) - jacobi_relaxation<T>) * p0(i, j) +
             T(0.25) * jacobi_relaxation<T> *
                 (-dh * dh * div(i, j) + p0(cyclic_index(i - 1, n), j) + p0(cyclic_index(i + 1, n), j) +
                  p0(i, cyclic_index(j - 1, n)) + p0(i, cyclic_index(j + 1, n)));
}

/// Subtracts the forward pressure gradient, paired with the backward divergence.
template <class T>
void update_velocities_body(Grid<T> p, Grid<T> wx, Grid<T> wy, Grid<T> vx, Grid<T> vy, Int n, Value<T> dh) {
  auto [i, j] = tid<2>();
  vx(i, j) = wx(i, j) - (p(cyclic_index(i + 1, n), j) - p(i, j)) / dh;
  vy(i, j) = wy(i, j) - (p(i, cyclic_index(j + 1, n)) - p(i, j)) / dh;
}

template <class T> void compute_loss_body(Grid<T> actual_state, Grid<T> target_state, Array<Value<T>> loss, Int n) {
  auto [i, j] = tid<2>();
  Value<T> loss_value = (actual_state(i, j) - target_state(i, j)) * (actual_state(i, j) - target_state(i, j)) /
                        Value<T>(n * n);
  atomic_add(loss, 0, loss_value);
}

/// The kernels of one precision (the launches take them by definition).
struct Kernels {
  const kjit::KernelDef &fill_initial_density, &advect, &divergence, &jacobi_iter, &update_velocities, &compute_loss;
  kjit::ir::Type element;  ///< float32 or float64: the grids' element type
};
}  // namespace fluid_checkpoint

// The float32 kernels: Warp's, the ones the ports run.
namespace fluid_checkpoint {
KJIT_MODULE(warp_fluid_checkpoint)
KJIT_KERNEL(fill_initial_density, (Grid<float> density, Float column_width)) {
  fill_initial_density_body<float>(density, column_width);
}
KJIT_KERNEL(advect, (Float dt, Grid<float> vx, Grid<float> vy, Grid<float> f0, Grid<float> f1, Int n)) {
  advect_body<float>(dt, vx, vy, f0, f1, n);
}
KJIT_KERNEL(divergence, (Grid<float> wx, Grid<float> wy, Grid<float> div, Int n, Float dh)) {
  divergence_body<float>(wx, wy, div, n, dh);
}
KJIT_KERNEL(jacobi_iter, (Grid<float> div, Grid<float> p0, Grid<float> p1, Int n, Float dh)) {
  jacobi_iter_body<float>(div, p0, p1, n, dh);
}
KJIT_KERNEL(update_velocities,
            (Grid<float> p, Grid<float> wx, Grid<float> wy, Grid<float> vx, Grid<float> vy, Int n, Float dh)) {
  update_velocities_body<float>(p, wx, wy, vx, vy, n, dh);
}
KJIT_KERNEL(compute_loss, (Grid<float> actual_state, Grid<float> target_state, Array<Float> loss, Int n)) {
  compute_loss_body<float>(actual_state, target_state, loss, n);
}
inline const Kernels f32{fill_initial_density.def(), advect.def(),           divergence.def(),
                         jacobi_iter.def(),          update_velocities.def(), compute_loss.def(),
                         kjit::ir_type_of<float>()};
}  // namespace fluid_checkpoint

// Their float64 twins, for the gradient checks against central differences.
namespace fluid_checkpoint_f64 {
using namespace kjit::dsl;
using namespace fluid_checkpoint;
KJIT_MODULE(warp_fluid_checkpoint_f64)
KJIT_KERNEL(fill_initial_density, (Grid<double> density, Double column_width)) {
  fill_initial_density_body<double>(density, column_width);
}
KJIT_KERNEL(advect, (Double dt, Grid<double> vx, Grid<double> vy, Grid<double> f0, Grid<double> f1, Int n)) {
  advect_body<double>(dt, vx, vy, f0, f1, n);
}
KJIT_KERNEL(divergence, (Grid<double> wx, Grid<double> wy, Grid<double> div, Int n, Double dh)) {
  divergence_body<double>(wx, wy, div, n, dh);
}
KJIT_KERNEL(jacobi_iter, (Grid<double> div, Grid<double> p0, Grid<double> p1, Int n, Double dh)) {
  jacobi_iter_body<double>(div, p0, p1, n, dh);
}
KJIT_KERNEL(update_velocities,
            (Grid<double> p, Grid<double> wx, Grid<double> wy, Grid<double> vx, Grid<double> vy, Int n, Double dh)) {
  update_velocities_body<double>(p, wx, wy, vx, vy, n, dh);
}
KJIT_KERNEL(compute_loss, (Grid<double> actual_state, Grid<double> target_state, Array<Double> loss, Int n)) {
  compute_loss_body<double>(actual_state, target_state, loss, n);
}
}  // namespace fluid_checkpoint_f64

namespace fluid_checkpoint_f64 {
inline const fluid_checkpoint::Kernels f64{fill_initial_density.def(), advect.def(),           divergence.def(),
                                           jacobi_iter.def(),          update_velocities.def(), compute_loss.def(),
                                           kjit::ir_type_of<double>()};
}  // namespace fluid_checkpoint_f64

namespace fluid_checkpoint_port {

/// The state carried from one step (and one checkpoint segment) to the next.
struct Fields {
  kjit::NdArray vx, vy, density, pressure;
};

struct Config {
  int grid = 512, steps = 1000, pressure_iterations = 50, segment_size = 0, iters = 50;
  bool deterministic = true;
  std::string target, out;
};

/// An n x n grid of zeros of the kernels' precision (float32 unless told).
inline kjit::NdArray grid(int n, const fluid_checkpoint::Kernels& k = fluid_checkpoint::f32) {
  return kjit::NdArray::zeros(k.element, {n, n});
}

/// Warp's estimate_segment_size: the segment size with the fewest stored grids,
/// grids_per_step * S + 4 ceil(steps / S), ties going to the larger size.
inline int estimate_segment_size(int sim_steps, long grids_per_step) {
  int best = 1;
  long best_storage = -1;
  for (int size = 1; size <= sim_steps; ++size) {
    const long segments = (sim_steps + size - 1) / size;
    const long storage = grids_per_step * size + 4 * segments;
    if (best_storage < 0 || storage <= best_storage) best = size, best_storage = storage;
  }
  return best;
}

/// The options; `grids_per_step(pressure_iterations)` sizes the default segment (Warp's
/// estimate for the port).
inline Config parse(int argc, char** argv, const std::function<long(int)>& grids_per_step) {
  Config c;
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string o = argv[a], v = argv[a + 1];
    if (o == "--grid") c.grid = std::stoi(v);
    else if (o == "--steps") c.steps = std::stoi(v);
    else if (o == "--pressure-iterations") c.pressure_iterations = std::stoi(v);
    else if (o == "--segment-size") c.segment_size = std::stoi(v);
    else if (o == "--iters") c.iters = std::stoi(v);
    else if (o == "--target") c.target = v;
    else if (o == "--out") c.out = v;
    else if (o == "--deterministic") c.deterministic = v != "0";
    else throw std::invalid_argument("unknown option " + o);
  }
  if (c.grid < 2 || c.steps < 1 || c.pressure_iterations < 1 || c.iters < 1)
    throw std::invalid_argument("--grid must be at least 2, --steps, --pressure-iterations and --iters positive");
  if (c.segment_size == 0) c.segment_size = estimate_segment_size(c.steps, grids_per_step(c.pressure_iterations));
  if (c.segment_size < 1 || c.segment_size > c.steps)
    throw std::invalid_argument("--segment-size must be between one and --steps");
  return c;
}

/// The target density: --target's float32 values, else a disk of radius n / 4.
inline std::vector<float> load_target(const Config& c) {
  const size_t count = size_t(c.grid) * size_t(c.grid);
  std::vector<float> target(count);
  if (c.target.empty()) {
    for (int i = 0; i < c.grid; ++i)
      for (int j = 0; j < c.grid; ++j) {
        const double x = i - c.grid / 2.0, y = j - c.grid / 2.0;
        target[size_t(i) * size_t(c.grid) + size_t(j)] = x * x + y * y < c.grid * c.grid / 16.0 ? 1.0f : 0.0f;
      }
    return target;
  }
  std::ifstream in(c.target, std::ios::binary);
  in.read(reinterpret_cast<char*>(target.data()), std::streamsize(count * sizeof(float)));
  if (in.gcount() != std::streamsize(count * sizeof(float)))
    throw std::invalid_argument(c.target + ": expected " + std::to_string(count) + " float32 values");
  return target;
}

/// How a port records one checkpoint segment on the tape: `steps` steps from `state` into
/// `end`.
using RecordSegment = std::function<void(kjit::Tape& tape, const Fields& state, const Fields& end, int steps)>;

/// Warp's optimisation loop: per iteration a tape over the rollout (one checkpoint per segment,
/// recorded by `record_segment`; `fresh` makes a segment's end state) and the loss, backward,
/// Adam on the initial velocities. Prints the losses and the ms per iteration (`name`) and
/// writes --out: the losses, the optimised vx and vy, the last iteration's gradients of both.
inline void optimise(const Config& c, const char* name, const std::function<Fields(int)>& fresh,
                     const RecordSegment& record_segment) {
  namespace fc = fluid_checkpoint;
  // Warp's cpu launches run on one thread, so its atomics (the loss, every adjoint's gradient
  // accumulation) add in index order; deterministic launches do the same on kjit's pool.
  kjit::set_deterministic(c.deterministic);
  const int n = c.grid;
  const kjit::Dims dims{n, n};
  std::vector<int> segment_lengths;
  for (int start = 0; start < c.steps; start += c.segment_size)
    segment_lengths.push_back(std::min(c.segment_size, c.steps - start));
  std::printf("Checkpoint schedule: %d steps in %zu segments of at most %d steps.\n", c.steps, segment_lengths.size(),
              c.segment_size);

  // Warp's Example.__init__: the initial velocities are the optimised parameters; density and
  // the pressure's initial guess start each iteration the same.
  kjit::NdArray vx0 = grid(n).requires_grad(), vy0 = grid(n).requires_grad();
  const Fields empty = fresh(n);
  const Fields start{vx0, vy0, empty.density, empty.pressure};
  kjit::launch(fc::fill_initial_density, dims, start.density, n / 10.0);
  const kjit::NdArray target = kjit::from_vector(load_target(c), {n, n});
  kjit::NdArray loss = kjit::zeros<float>({1});
  kjit::optim::Adam optimizer({vx0.flatten(), vy0.flatten()}, /*lr=*/0.01);

  std::vector<float> losses, gx, gy;  // gx, gy: the last iteration's gradients
  std::vector<double> ms;
  for (int iter = 0; iter < c.iters; ++iter) {
    const auto t0 = std::chrono::steady_clock::now();
    kjit::Tape tape;
    {
      auto on = tape.record();
      loss.zero();
      Fields state = start;
      for (int steps : segment_lengths) {
        // The segment's end state lives on (the next segment and the loss read it); what the
        // segment makes inside is freed after it and made again by backward().
        const Fields end = fresh(n);
        record_segment(tape, state, end, steps);
        state = end;
      }
      kjit::launch(fc::compute_loss, dims, state.density, target, loss, n);
    }
    tape.backward(loss);
    if (iter == c.iters - 1) gx = vx0.grad().to_vector<float>(), gy = vy0.grad().to_vector<float>();
    optimizer.step({vx0.grad().flatten(), vy0.grad().flatten()});
    tape.zero();
    losses.push_back(loss.to_vector<float>()[0]);
    // The first iteration compiles (or loads from the cache).
    if (iter > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    std::printf("Iteration %05d loss: %.6f\n", iter, double(losses.back()));
  }
  if (!c.out.empty()) {
    std::vector<float> out = losses;
    for (const std::vector<float>& part : {vx0.to_vector<float>(), vy0.to_vector<float>(), gx, gy})
      out.insert(out.end(), part.begin(), part.end());
    std::ofstream(c.out, std::ios::binary)
        .write(reinterpret_cast<const char*>(out.data()), std::streamsize(out.size() * sizeof(float)));
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%s %dx%d, %d steps, %d pressure iterations, %d iterations: %.3f ms per iteration (median of %zu)\n",
              name, n, n, c.steps, c.pressure_iterations, c.iters, ms.empty() ? 0.0 : ms[ms.size() / 2], ms.size());
}

}  // namespace fluid_checkpoint_port
