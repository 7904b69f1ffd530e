// examples/warp/fluid_checkpoint_common.hpp — what Warp 1.19's two checkpointed fluid
// optimisations (optim/example_fluid_checkpoint.py and its _custom_backward variant) share, in
// kjit: the stable-fluids kernels (module warp_fluid_checkpoint), the state of a step, the
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
KJIT_MODULE(warp_fluid_checkpoint)

// Warp's N_GRID is a wp.constant (512); the grid size is a parameter here so that the check and
// the ctest can run small grids, and DH = 1 / N_GRID (a Python float, float32 in Warp's kernels)
// comes in as a Float of the same value.
constexpr float jacobi_relaxation = float(2.0 / 3.0);  // damping makes the checkerboard mode decay

/// Periodic boundary: wraps an index into [0, n).
inline const auto cyclic_index = func("cyclic_index", [](Int idx, Int n) {
  Var<Int> ret_idx = idx % n;
  If(ret_idx < 0, [&] { ret_idx += n; });
  return Int(ret_idx);
});

KJIT_KERNEL(fill_initial_density, (Array<Float, 2> density, Float column_width)) {
  auto [i, j] = tid<2>();
  Float y_pos = Float(i);
  // Three bands of fluid.
  If(column_width <= y_pos && y_pos < 2.0f * column_width, [&] { density(i, j) = 1.0f; })
      .ElseIf(4.5f * column_width <= y_pos && y_pos < 5.5f * column_width, [&] { density(i, j) = 1.0f; })
      .ElseIf(8.0f * column_width <= y_pos && y_pos < 9.0f * column_width, [&] { density(i, j) = 1.0f; })
      .Else([&] { density(i, j) = 0.0f; });
}

/// Moves f0 along (vx, vy) back in time: semi-Lagrangian, bilinear, periodic.
KJIT_KERNEL(advect, (Float dt, Array<Float, 2> vx, Array<Float, 2> vy, Array<Float, 2> f0, Array<Float, 2> f1,
                     Int n)) {
  auto [i, j] = tid<2>();
  Float center_xs = Float(i) - vx(i, j) * dt;
  Float center_ys = Float(j) - vy(i, j) * dt;
  Int left_idx = Int(floor(center_xs));
  Int bot_idx = Int(floor(center_ys));
  Float s1 = center_xs - Float(left_idx);  // weight of the right cell
  Float s0 = 1.0f - s1;
  Float t1 = center_ys - Float(bot_idx);  // weight of the top cell
  Float t0 = 1.0f - t1;
  Int i0 = cyclic_index(left_idx, n), i1 = cyclic_index(left_idx + 1, n);
  Int j0 = cyclic_index(bot_idx, n), j1 = cyclic_index(bot_idx + 1, n);
  f1(i, j) = s0 * (t0 * f0(i0, j0) + t1 * f0(i0, j1)) + s1 * (t0 * f0(i1, j0) + t1 * f0(i1, j1));
}

/// Backward-difference divergence, paired with the forward pressure gradient.
KJIT_KERNEL(divergence, (Array<Float, 2> wx, Array<Float, 2> wy, Array<Float, 2> div, Int n, Float dh)) {
  auto [i, j] = tid<2>();
  div(i, j) = (wx(i, j) - wx(cyclic_index(i - 1, n), j) + wy(i, j) - wy(i, cyclic_index(j - 1, n))) / dh;
}

/// One damped Jacobi iteration of the pressure Poisson equation.
KJIT_KERNEL(jacobi_iter, (Array<Float, 2> div, Array<Float, 2> p0, Array<Float, 2> p1, Int n, Float dh)) {
  auto [i, j] = tid<2>();
  p1(i, j) = (1.0f - jacobi_relaxation) * p0(i, j) +
             0.25f * jacobi_relaxation *
                 (-dh * dh * div(i, j) + p0(cyclic_index(i - 1, n), j) + p0(cyclic_index(i + 1, n), j) +
                  p0(i, cyclic_index(j - 1, n)) + p0(i, cyclic_index(j + 1, n)));
}

/// Subtracts the forward pressure gradient, paired with the backward divergence.
KJIT_KERNEL(update_velocities, (Array<Float, 2> p, Array<Float, 2> wx, Array<Float, 2> wy, Array<Float, 2> vx,
                                Array<Float, 2> vy, Int n, Float dh)) {
  auto [i, j] = tid<2>();
  vx(i, j) = wx(i, j) - (p(cyclic_index(i + 1, n), j) - p(i, j)) / dh;
  vy(i, j) = wy(i, j) - (p(i, cyclic_index(j + 1, n)) - p(i, j)) / dh;
}

KJIT_KERNEL(compute_loss, (Array<Float, 2> actual_state, Array<Float, 2> target_state, Array<Float> loss, Int n)) {
  auto [i, j] = tid<2>();
  Float loss_value = (actual_state(i, j) - target_state(i, j)) * (actual_state(i, j) - target_state(i, j)) /
                     Float(n * n);
  atomic_add(loss, 0, loss_value);
}
}  // namespace fluid_checkpoint

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

inline kjit::NdArray grid(int n) { return kjit::zeros<float>({n, n}); }

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
