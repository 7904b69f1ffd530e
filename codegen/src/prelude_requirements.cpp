// Reads the prelude chunks a module needs off its IR: the chunks of its value types, of the
// builtins it calls (and their adjoints), of arrays, atomics, loops and device functions.
#include "prelude_requirements.hpp"

#include <set>
#include <utility>

#include "builtin_codegen.hpp"
#include "kjit/error.hpp"
#include "lower.hpp"
#include "sweep_spans.hpp"
#include "kjit/ir/structs.hpp"

namespace kjit::codegen {

namespace {

void need_type(PreludeUse& use, const ir::Type& t, bool with_adjoint) {
  if (t.is_array()) use.need("array");
  switch (t.shape) {
    case ir::Shape::Vector: use.need("vec"); break;
    case ir::Shape::Matrix: use.need("mat"); break;
    case ir::Shape::Quat: use.need("quat"); break;
    case ir::Shape::Transform: use.need("transform"); break;
    case ir::Shape::Struct: {
      const ir::StructInfo& info = ir::struct_info(t.struct_id);
      if (!info.prelude_chunk.empty()) use.need(info.prelude_chunk);
      // User structs get an atomic_add for their adjoint arrays.
      if (info.prelude_chunk.empty() && with_adjoint) use.need("atomic");
      for (const ir::StructField& f : info.fields) need_type(use, f.type, with_adjoint);
      return;
    }
    case ir::Shape::Void:
    case ir::Shape::Scalar: break;  // the core chunk's
  }
  if (t.scalar == ir::Scalar::F16 || t.scalar == ir::Scalar::BF16) use.need("half");
}

void need_function(PreludeUse& use, const LoweredModule& lowered, const ir::Function& fn, bool with_adjoint,
                   std::set<std::pair<const ir::Function*, bool>>& seen) {
  if (!seen.insert({&fn, with_adjoint}).second) return;
  // The adjoint emitter plans its spans on the lowered body, and so must this.
  if (with_adjoint && lowered.of(fn).sweep_spans.size() > 1) use.need("opaque");
  for (const ir::Type& t : fn.values) need_type(use, t, with_adjoint);
  for (const ir::Param& p : fn.params) need_type(use, p.type, with_adjoint);
  for (const ir::LocalVar& v : fn.vars) need_type(use, v.type, with_adjoint);
  bool differentiable = false;
  for (const ir::Param& p : fn.params) differentiable |= p.type.is_differentiable();
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    switch (s.op) {
      case ir::Op::ArrayLoad:
      case ir::Op::ArrayStore:
        use.need("array");
        if (with_adjoint && differentiable) use.need("atomic");
        break;
      case ir::Op::ArrayAtomic:
        use.need("array");
        use.need("atomic");
        break;
      case ir::Op::For:
      case ir::Op::While:
        if (with_adjoint) use.need("status");
        break;
      case ir::Op::Call: {
        const BuiltinCodegen& g = builtin_codegen(s.builtin());
        bool function = !g.op || s.args.empty() ||
                        (g.op_integers_only && !fn.type_of(s.args[0]).is_integer());
        if (function && g.chunk) use.need(g.chunk);
        bool float_args = false;
        for (ir::ValueId a : s.args) float_args |= fn.type_of(a).is_differentiable();
        if (with_adjoint && g.adjoint && float_args) use.need(g.adjoint_chunk);
        // The product of transforms is an operator defined with the transform builtins.
        if (s.builtin() == ir::Builtin::Mul && fn.type_of(s.args[0]).shape == ir::Shape::Transform)
          use.need("transformmath");
        break;
      }
      case ir::Op::TangentCall: {  // a prelude function, or the forward function over duals
        const BuiltinCodegen& g = builtin_codegen(s.builtin());
        if (g.tangent_function) {
          use.need(g.tangent_chunk);
        } else {
          use.need(g.chunk);
          use.need("dual");
        }
        break;
      }
      case ir::Op::CallFunc:
        need_function(use, lowered, *fn.callees.at(s.callee()), with_adjoint, seen);
        break;
      case ir::Op::GradFunc:  // grad_<f> runs f's adjoint, also from a user adjoint's body
        need_function(use, lowered, *fn.callees.at(s.callee()), true, seen);
        break;
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
      case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert:
      case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar: case ir::Op::ArrayShape:
      case ir::Op::If: case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
      case ir::Op::Print:
        break;  // their types' chunks are required above
      case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
      case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:  // only in an adjoint kernel: its rules' chunks are the kernel's own
        KJIT_CHECK(false, std::string("prelude planning reached the reverse transform's ") + ir::op_name(s.op));
        break;
    }
  });
  if (fn.custom_adjoint) need_function(use, lowered, *fn.custom_adjoint, false, seen);
  if (fn.custom_replay) need_function(use, lowered, *fn.custom_replay, false, seen);
}

}  // namespace

namespace {
int trig_calls(const ir::Function& fn, std::set<const ir::Function*>& seen) {
  if (!seen.insert(&fn).second) return 0;
  int n = 0;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::CallFunc || s.op == ir::Op::GradFunc) n += trig_calls(*fn.callees.at(s.callee()), seen);
    if (s.op != ir::Op::Call) return;
    const ir::Builtin b = s.builtin();
    const ir::Scalar t = s.type.scalar;
    if ((b == ir::Builtin::Sin || b == ir::Builtin::Cos || b == ir::Builtin::Tan) &&
        (t == ir::Scalar::F32 || t == ir::Scalar::F16 || t == ir::Scalar::BF16))
      ++n;
  });
  if (fn.custom_adjoint) n += trig_calls(*fn.custom_adjoint, seen);
  if (fn.custom_replay) n += trig_calls(*fn.custom_replay, seen);
  return n;
}
}  // namespace

bool outline_trig(const std::vector<const ir::Function*>& kernels) {
  std::set<const ir::Function*> seen;
  int n = 0;
  for (const ir::Function* fn : kernels) n += trig_calls(*fn, seen);
  return n >= kOutlineTrigCalls;
}

PreludeUse prelude_requirements(const std::vector<const ir::Function*>& kernels, const LoweredModule& lowered,
                                bool with_adjoint) {
  PreludeUse use;
  std::set<std::pair<const ir::Function*, bool>> seen;
  for (const ir::Function* fn : kernels) {
    need_function(use, lowered, *fn, with_adjoint, seen);
    // An adjoint entry sums its value parameters' adjoints over the launch's threads.
    for (const ir::Param& p : fn->params)
      if (with_adjoint && !p.type.is_array() && p.type.is_differentiable()) use.need("reduce");
  }
  return use;
}

}  // namespace kjit::codegen
