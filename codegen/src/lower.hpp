// Codegen's pass list: what every kernel and device function of a module goes through, once,
// before any text is written. The printers read the result (LoweredModule); none of them
// lowers or analyses a function again.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kjit/codegen/codegen.hpp"
#include "adjoint_loops.hpp"
#include "kjit/codegen/passes.hpp"
#include "lane_analysis.hpp"
#include "sweep_spans.hpp"

namespace kjit::codegen {

/// One function after the passes.
struct LoweredFunction {
  const ir::Function* traced = nullptr;  ///< as the DSL traced it (what the scalar forward prints)
  ir::Function jumps_lowered;            ///< lower_jumps: Break, Continue and Return as flags
  /// The dynamic loops of its adjoint (of jumps_lowered), numbered from 0 in program order,
  /// outer loops first; none without an adjoint.
  AdjointLoops adjoint_loops;
  /// The spans its adjoint's reverse sweep takes the body in (one: the whole body), cut from
  /// the jump-lowered body by CodegenOptions::adjoint_span; empty without adjoints.
  std::vector<SweepSpan> sweep_spans;
  /// A kernel's uniformity analyses for its cpu lane functions (of jumps_lowered): the
  /// forward's, and the adjoint's (which flattens no If whose reverse adds atomically); each
  /// only when the kernel gets that lane function.
  std::optional<LaneAnalysis> forward_lanes, adjoint_lanes;
  /// A kernel's reason for having no adjoint ("" when it has one, or adjoints are off).
  std::string adjoint_obstacle;
  /// The kernel's or device function's adjoint as IR (reverse_transform), where the reverse
  /// transform builds it (the one predicate in lower.cpp); else the adjoint emitter writes it.
  std::optional<ir::Function> adjoint_ir;
};

/// A module's functions after the passes, looked up by their traced form.
class LoweredModule {
 public:
  /// The lowered form of `traced`, a kernel of the module or a function one reaches.
  const LoweredFunction& of(const ir::Function& traced) const;
  /// Its jump-lowered IR.
  const ir::Function& jumps_lowered(const ir::Function& traced) const { return of(traced).jumps_lowered; }

 private:
  friend class Lowering;
  std::map<const ir::Function*, std::unique_ptr<LoweredFunction>> functions_;
};

/// Called after each pass with the function ("kernel demo::damp"), the pass's name and what
/// it left.
using PassObserver = std::function<void(const std::string& function, const char* pass, const std::string& ir)>;

/// Runs the passes over `kernels` and every function they reach (callees, user adjoints and
/// replays), checking the IR (ir::verify) after each pass that changes it. With
/// KJIT_PRINT_PASSES=1 in the environment, also prints each pass's result to stderr.
LoweredModule lower_module(const std::vector<const ir::Function*>& kernels, const CodegenOptions& options,
                           const PassObserver& observe = nullptr);

/// Whether the module's device functions get adjoints: with the kernels' adjoints, and also
/// without them where a kernel or what it reaches takes a gradient (grad(f) runs f's adjoint
/// in forward code).
bool function_adjoints(const std::vector<const ir::Function*>& kernels, const CodegenOptions& options);

}  // namespace kjit::codegen
