// tangent_checker.hpp — forward mode in the randomized tester: a program's tangent launch
// along random directions against the reference's central differences along them, and
// against its adjoint through the dot-product identity <w, J v> = <v, J^T w>.
#pragma once

#include <string>
#include <vector>

#include "kjit/kernel.hpp"
#include "program.hpp"
#include "reference.hpp"

namespace fuzz {

/// What the forward-mode check of one program found.
struct TangentCheck {
  bool refused = false;      ///< forward mode refused the program, naming the line (detail)
  std::string failure;       ///< empty, or the failure's kind ("tangent", "tangent-refusal-without-line", ...)
  std::string detail;
  int components = 0;        ///< output components compared with finite differences
  int nonsmooth = 0;         ///< directions skipped: a step crossed a kink
  /// The direction of the arrays a, v, m and the tangents of every output along it (J v),
  /// for the dot-product identity once the adjoint has run.
  std::vector<std::vector<double>> direction, jv;
};

/// Launches the tangent of `def` (the traced program `fn` of `prog`) at `init` along a random
/// direction of the arrays a, v and m, and along the scalar s, and compares every output's
/// tangent with central differences of the reference. `scale`: the size of the outputs.
/// `values`: when not null, each launch's tangent outputs are appended to it as they are read
/// back (append_values: tangent-avm.<output>, then tangent-s.<output>).
TangentCheck check_tangent(const Program& prog, const kjit::KernelDef& def, const kjit::ir::Function& fn,
                           const std::vector<RefArg>& init, double scale, std::string* values = nullptr);

/// <w, J v> against <v, J^T w>, with `grads` the adjoint's gradients of a, v and m seeded
/// with the weights `w`: "" when they agree to rounding, else what differs.
std::string check_dot_product(const TangentCheck& t, const std::vector<std::vector<double>>& w,
                              const std::vector<std::vector<double>>& grads);

}  // namespace fuzz
