// What the two halves of check_gradients share (internal): the arguments' host and device
// copies, the outputs and their random weights, the forward launch on the current inputs,
// and the comparison of a derivative with its finite difference.
#pragma once

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "kjit/runtime/gradcheck.hpp"

namespace kjit::detail {

/// Scalar component `c` of element `i` of a contiguous host array of float32 or float64.
double component(const NdArray& a, int64_t i, int c);
void set_component(NdArray& a, int64_t i, int c, double v);
/// Whether the elements of `element` are float32 or float64 components (what is checked).
bool checkable(const ir::Type& element);
/// Component `c` of a value argument as a double (any scalar kind of the right layout).
double value_component(const LaunchArg& a, int c);
/// A value of floating type `t` holding `comps`.
LaunchArg value_of(const ir::Type& t, const std::vector<double>& comps);

/// The elements of an input of `count` elements a check compares: all, or `max_elements` of
/// them at random, in order.
std::vector<int64_t> sample_elements(int64_t count, int max_elements, std::mt19937_64& rng);
/// The options' tolerances and finite-difference step for `element`, or the precision's defaults.
double rtol_for(const GradCheckOptions& options, const ir::Type& element);
double atol_for(const GradCheckOptions& options, const ir::Type& element);
double step_for(const GradCheckOptions& options, const ir::Type& element, double magnitude);

/// One check_gradients call in progress.
struct GradCheckRun {
  GradCheckRun(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
               const GradCheckOptions& options);

  const KernelDef& kernel;
  const Dims& dims;
  const std::vector<LaunchArg>& args;
  const GradCheckOptions& options;
  std::set<size_t> read, written;  ///< parameters the kernel reads / writes as arrays
  std::set<size_t> used;           ///< parameters the kernel uses at all
  std::vector<std::vector<double>> values;  ///< per floating value argument: its components
  std::vector<NdArray> host, dev;  ///< per array argument: host copy (perturbed), device copy
  std::vector<LaunchArg> launch_args;  ///< the device copies (and values, perturbed in place)
  std::vector<size_t> outputs;     ///< floating arrays the kernel writes
  std::vector<NdArray> weights;    ///< per output: the random w of L = sum w * output
  std::vector<NdArray> initial;    ///< per output: its contents before the launch
  std::mt19937_64 rng;

  /// Runs the forward pass on the current inputs (host arrays and launch values); returns
  /// the outputs on the host.
  std::vector<NdArray> forward();
};

/// Adds one comparison of `derivative` against `numeric` to `row` (its error and, when it
/// is the worst so far by the tolerances, where it is).
void compare(GradCheckParam& row, double derivative, double numeric, double rtol, double atol, int64_t index,
             int component, double& worst_score);

/// Checks `derivative(e, c)` for every component c of each of `elements` of an input of type
/// `element` against the central difference of a function of the input: `get(e, c)` and
/// `set(e, c, x)` read and write the component where the function sees it, `evaluate()` runs
/// the function and `difference(plus, minus)` says how much its result changed. The step is
/// the options' for the component's magnitude, taken as the input actually moved (rounding),
/// Richardson-extrapolated when the options ask; the component is restored after.
template <class Get, class Set, class Evaluate, class Difference, class Derivative>
void check_components(GradCheckParam& row, const GradCheckOptions& options, const ir::Type& element,
                      const std::vector<int64_t>& elements, Get get, Set set, Evaluate evaluate,
                      Difference difference, Derivative derivative) {
  double worst_score = -1;
  for (int64_t e : elements) {
    for (int c = 0; c < element.lanes(); ++c) {
      const double x0 = get(e, c);
      auto central = [&](double h) {
        set(e, c, x0 + h);
        double hp = get(e, c) - x0;
        auto plus = evaluate();
        set(e, c, x0 - h);
        double hm = x0 - get(e, c);
        auto minus = evaluate();
        set(e, c, x0);
        return difference(plus, minus) / (hp + hm);
      };
      double h = step_for(options, element, std::fabs(x0));
      double numeric = central(h);
      if (options.richardson) numeric = (4.0 * central(h / 2) - numeric) / 3.0;
      compare(row, derivative(e, c), numeric, rtol_for(options, element), atol_for(options, element), e, c,
              worst_score);
    }
  }
}

/// Forward mode: the tangent of every differentiable input against the finite difference of
/// the forward along a random direction, and (when `adjoint_grads` has the input's
/// adjoint) the dot-product identity <J v, w> = <v, J^T w>. Fills report.tangents.
void check_tangents(GradCheckRun& run, const std::vector<NdArray>& adjoint_grads, GradCheckReport& report);

}  // namespace kjit::detail
