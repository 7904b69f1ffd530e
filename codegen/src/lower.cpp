// Codegen's pass list (lower.hpp): the passes every function of a module goes through, in
// order, each a function over the IR in a file of its own.
#include "lower.hpp"

#include <cstdlib>
#include <iostream>
#include <set>

#include "adjoint_emitter.hpp"
#include "adjoint_loops.hpp"
#include "adjoint_obstacles.hpp"
#include "generation_errors.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/printer.hpp"
#include "kjit/ir/verifier.hpp"
#include "lane_emitter.hpp"
#include "reverse_transform.hpp"
#include "kjit/ir/lower_jumps.hpp"

namespace kjit::codegen {

const LoweredFunction& LoweredModule::of(const ir::Function& traced) const {
  auto it = functions_.find(&traced);
  KJIT_CHECK(it != functions_.end(), "function '" + traced.name + "' was not lowered with its module");
  return *it->second;
}

namespace {

std::string describe(const ir::Function& fn, bool kernel) {
  return (kernel ? "kernel " : "device function ") + fn.name;
}

std::string loops_text(const AdjointLoops& loops) {
  std::string text;
  for (const AdjointLoop& l : loops.list) {
    text += "loop " + std::to_string(l.id) + " at " + l.stmt->loc.short_str() + ": " + std::to_string(l.state.size()) +
            " variables checkpointed, " + std::to_string(l.readonly.size()) + " read only\n";
  }
  return text.empty() ? "no dynamic loops\n" : text;
}

/// The values and variables a lane analysis finds varying, and the Ifs it flattens.
std::string lanes_text(const LaneAnalysis& a) {
  const ir::Function& fn = a.fn();
  std::string values, vars;
  for (size_t v = 0; v < fn.values.size(); ++v)
    if (!fn.values[v].is_void() && a.varying(ir::ValueId(v))) values += " %" + std::to_string(v);
  for (size_t v = 0; v < fn.vars.size(); ++v)
    if (a.varying_var(int64_t(v))) vars += " $" + std::to_string(v);
  int flat = 0;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) { flat += s.op == ir::Op::If && a.flat(s); });
  return "varying values:" + (values.empty() ? std::string(" none") : values) +
         "\nvarying variables:" + (vars.empty() ? std::string(" none") : vars) +
         "\nflattened ifs: " + std::to_string(flat) + "\n";
}

std::string spans_text(const std::vector<SweepSpan>& spans) {
  if (spans.size() == 1) return "one span: the whole body\n";
  std::string text;
  for (size_t i = 0; i < spans.size(); ++i)
    text += "span " + std::to_string(i) + ": top-level statements " + std::to_string(spans[i].begin) + ".." +
            std::to_string(spans[i].end) + ", " + std::to_string(spans[i].vars_read.size()) + " variables read, " +
            std::to_string(spans[i].inputs.size()) + " values in, " + std::to_string(spans[i].locals.size()) +
            " local values\n";
  return text;
}

}  // namespace

/// Runs the pass list over one module.
class Lowering {
 public:
  Lowering(const CodegenOptions& options, const PassObserver& observe) : options_(options), observe_(observe) {
    const char* print = std::getenv("KJIT_PRINT_PASSES");
    print_ = print && *print && std::string(print) != "0";
  }

  LoweredModule run(const std::vector<const ir::Function*>& kernels) {
    function_adjoints_ = function_adjoints(kernels, options_);
    for (const ir::Function* k : kernels) lower(*k, true);
    return std::move(module_);
  }

 private:
  /// The one predicate of the reverse transform's increments: whether it builds this kernel's
  /// or device function's adjoint (else the adjoint emitter writes it): one with an adjoint
  /// (`reversed`: a kernel without an adjoint obstacle, a function with differentiable
  /// parameters and no user adjoint), swept back in one span, of statements the transform has
  /// rules for (reverse_transform_gap: straight-line code, branches, loops, device function
  /// calls, struct fields and the arrays they hold, print(), atomic min/max); its body only, which the scalar printer
  /// prints (a cpu lane function for a kernel's adjoint, where it has one for its atomics, is
  /// still the lane emitter's).
  bool by_reverse_transform(const LoweredFunction& l, bool reversed) const {
    return options_.reverse_transform && reversed && l.sweep_spans.size() == 1 &&
           reverse_transform_gap(l.jumps_lowered).empty();
  }

  /// The passes, in order, for `fn` (and first for every function it reaches).
  void lower(const ir::Function& fn, bool kernel) {
    if (module_.functions_.count(&fn)) return;
    auto owned = std::make_unique<LoweredFunction>();
    LoweredFunction& l = *owned;
    module_.functions_.emplace(&fn, std::move(owned));
    l.traced = &fn;
    const std::string who = describe(fn, kernel);
    generating((kernel ? "kernel '" : "device function '") + fn.name + "'", fn.loc, nullptr, [&] {
      analysed(who, "traced", [&] { return ir::print(fn); });  // verified when it was traced
      l.jumps_lowered = ir::lower_jumps(fn);
      changed(who, "lower_jumps", l.jumps_lowered);
      if (kernel && options_.enable_adjoint) {
        l.adjoint_obstacle = adjoint_obstacle(fn);
        analysed(who, "adjoint_obstacle", [&] { return l.adjoint_obstacle.empty() ? "none\n" : l.adjoint_obstacle + "\n"; });
      }
      const bool adjoints = kernel ? options_.enable_adjoint : function_adjoints_;
      if (adjoints) {
        l.sweep_spans = plan_sweep_spans(l.jumps_lowered.body, options_.adjoint_span);
        analysed(who, "sweep_spans", [&] { return spans_text(l.sweep_spans); });
      }
      if (kernel && wants_forward_lane_function(fn, options_)) {
        l.forward_lanes.emplace(l.jumps_lowered);
        analysed(who, "forward_lanes", [&] { return lanes_text(*l.forward_lanes); });
      }
      if (kernel && options_.enable_adjoint && l.adjoint_obstacle.empty() && wants_lane_function(fn, options_)) {
        l.adjoint_lanes.emplace(l.jumps_lowered, no_atomic_adjoint(l.jumps_lowered));
        analysed(who, "adjoint_lanes", [&] { return lanes_text(*l.adjoint_lanes); });
      }
      const bool reversed = kernel ? l.adjoint_obstacle.empty() : function_reversed(fn);
      if (adjoints && reversed) {
        l.adjoint_loops = AdjointLoops(l.jumps_lowered);
        analysed(who, "adjoint_loops", [&] { return loops_text(l.adjoint_loops); });
      }
      if (adjoints && by_reverse_transform(l, reversed)) {
        l.adjoint_ir = reverse_transform(l.jumps_lowered, l.adjoint_loops);
        changed(who, "reverse_transform", *l.adjoint_ir);
      }
    });
    for (const auto& callee : fn.callees) lower(*callee, false);
    if (fn.custom_adjoint) lower(*fn.custom_adjoint, false);
    if (fn.custom_replay) lower(*fn.custom_replay, false);
  }

  /// After a pass that rewrote the IR: checks it, then shows it.
  void changed(const std::string& who, const char* pass, const ir::Function& ir) {
    ir::verify(ir);
    analysed(who, pass, [&] { return ir::print(ir); });
  }
  /// After an analysis: shows its result, written (by `text`) only when someone looks.
  template <class Text>
  void analysed(const std::string& who, const char* pass, Text&& text) {
    if (observe_ || print_) show(who, pass, text());
  }
  void show(const std::string& who, const char* pass, const std::string& text) {
    if (observe_) observe_(who, pass, text);
    if (print_) std::cerr << "# kjit pass " << pass << ": " << who << "\n" << text << std::flush;
  }

  const CodegenOptions& options_;
  const PassObserver& observe_;
  bool print_ = false;
  bool function_adjoints_ = false;
  LoweredModule module_;
};

namespace {
/// Whether `fn` or anything it reaches (callees, user adjoints and replays) takes a gradient.
bool reaches_gradient(const ir::Function& fn, std::set<const ir::Function*>& seen) {
  if (!seen.insert(&fn).second) return false;
  bool found = false;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) { found = found || s.op == ir::Op::GradFunc; });
  for (const auto& c : fn.callees) found = reaches_gradient(*c, seen) || found;
  if (fn.custom_adjoint) found = reaches_gradient(*fn.custom_adjoint, seen) || found;
  if (fn.custom_replay) found = reaches_gradient(*fn.custom_replay, seen) || found;
  return found;
}
}  // namespace

bool function_adjoints(const std::vector<const ir::Function*>& kernels, const CodegenOptions& options) {
  if (options.enable_adjoint) return true;
  std::set<const ir::Function*> seen;
  bool found = false;
  for (const ir::Function* k : kernels) found = reaches_gradient(*k, seen) || found;
  return found;
}

LoweredModule lower_module(const std::vector<const ir::Function*>& kernels, const CodegenOptions& options,
                           const PassObserver& observe) {
  return Lowering(options, observe).run(kernels);
}

std::vector<PassSnapshot> pass_snapshots(const std::vector<const ir::Function*>& kernels,
                                         const CodegenOptions& options) {
  std::vector<PassSnapshot> out;
  lower_module(kernels, options, [&](const std::string& who, const char* pass, const std::string& ir) {
    out.push_back({who, pass, ir});
  });
  return out;
}

}  // namespace kjit::codegen
