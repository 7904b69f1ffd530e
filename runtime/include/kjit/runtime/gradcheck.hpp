// kjit/runtime/gradcheck.hpp — checks a kernel's adjoint and its tangent (forward mode)
// against central finite differences, and the two against each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/runtime/launch.hpp"

namespace kjit {

/// How check_gradients perturbs and what it accepts.
struct GradCheckOptions {
  /// Finite-difference step relative to max(1, |x|); 0 picks cbrt(machine epsilon) of the
  /// element type (about 6e-6 for float64, 5e-3 for float32).
  double step = 0;
  /// A component passes when |adjoint - numeric| <= atol + rtol * max(|adjoint|, |numeric|);
  /// negative values pick defaults by precision (float64: rtol 1e-6, atol 1e-9; float32:
  /// rtol 2e-2, atol 1e-3).
  double rtol = -1;
  double atol = -1;
  /// Richardson extrapolation of the central difference (steps h and h/2): error O(h^4)
  /// instead of O(h^2), for two more forward launches per component.
  bool richardson = true;
  /// Elements checked per input array (chosen at random when the array is larger).
  int max_elements = 64;
  /// Seed of the random output weights and of the element sample.
  uint64_t seed = 1;
  /// Parameters to check by name; empty means every floating array the kernel reads (and does
  /// not write) and every float32/float64 value parameter it uses (scalars, vectors,
  /// matrices...: a value's gradient is its adjoint summed over the launch's threads; its
  /// tangent is the same value for every thread).
  std::vector<std::string> inputs;
  /// The checks to run: the adjoint against finite differences (`adjoint`), the tangent
  /// launch (launch_tangent) against finite differences along a random direction per input
  /// (`tangents`), and the dot-product identity <J v, w> = <v, J^T w> between the two
  /// (`dot_product`, arrays and values; it runs the adjoint launch even when `adjoint` is off).
  bool adjoint = true;
  bool tangents = true;
  bool dot_product = true;
  /// The dot-product identity holds up to rounding: |<J v, w> - <v, J^T w>| <= dot_rtol *
  /// sum |w| |J v|; negative picks 1e-10 for float64, 1e-4 for float32.
  double dot_rtol = -1;
  /// Where to run; the launch arguments are copied there (the caller's arrays are not
  /// modified).
  Device device = Device::cpu();
};

/// The outcome of one check of one input (an array, or a value: one element).
struct GradCheckParam {
  std::string name;
  /// "adjoint" (per component: the adjoint against the finite difference of L), "tangent"
  /// (per output component: the tangent along v against the finite difference of the outputs
  /// along v) or "dot" (one comparison: <J v, w> against <v, J^T w>).
  std::string check = "adjoint";
  int64_t checked = 0;           ///< scalar components compared
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t worst_index = -1;      ///< flat element index of the worst component
  int worst_component = 0;       ///< its component within the element (vec3: 0..2)
  double worst_adjoint = 0;      ///< the derivative's value there (adjoint, tangent or <J v, w>)
  double worst_numeric = 0;      ///< what it is compared with (finite difference or <v, J^T w>)
  bool passed = true;
};

/// The outcome of check_gradients.
struct GradCheckReport {
  std::vector<GradCheckParam> params;    ///< the adjoint, per input array
  std::vector<GradCheckParam> tangents;  ///< forward mode: "tangent" and "dot" rows per input
  /// Why forward mode was not checked (the kernel has no tangent: kjit refuses it there, the
  /// message names the line); this alone does not fail the report.
  std::string tangent_error;
  bool passed() const;
  /// A table: parameter, components checked, max abs/rel error, worst index, verdict.
  std::string str() const;
};

/// Compares the adjoint of `kernel` with central finite differences of the scalar function
/// L = sum over every output element of w * output, with fixed random weights w (outputs
/// are the arrays the kernel writes). For each checked element x_j of each input (array, or
/// value parameter: one element of one or more components):
/// numeric = (L(x_j + h) - L(x_j - h)) / 2h, evaluated by forward launches on copies of the
/// arguments; adjoint = the gradient one adjoint launch seeded with w produces.
///
/// Forward mode (options.tangents): per differentiable input p (each array the kernel reads
/// and does not write, each floating value), a random direction v_p; the tangent launch's
/// J v_p is compared, output component by output component, with the central difference
/// (F(x + h v_p) - F(x - h v_p)) / 2h; and <J v_p, w> with <v_p, J^T w> from the
/// adjoint launch. The tangent's first use builds the module's tangent kernels.
GradCheckReport check_gradients(const KernelDef& kernel, const Dims& dims,
                                const std::vector<LaunchArg>& args,
                                const GradCheckOptions& options = {});
template <class... P>
GradCheckReport check_gradients(const Kernel<P...>& kernel, const Dims& dims,
                                std::vector<LaunchArg> args, const GradCheckOptions& options = {}) {
  return check_gradients(kernel.def(), dims, args, options);
}

}  // namespace kjit
