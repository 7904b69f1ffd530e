// Reads the prelude chunks a module needs off its IR.
#include "prelude_requirements.hpp"

#include "builtin_codegen.hpp"

namespace kjit::codegen {

namespace {
void need_type(PreludeUse& use, const ir::Type& t) {
  switch (t.shape) {
    case ir::Shape::Vector: use.need("vec"); break;
    case ir::Shape::Matrix: use.need("mat"); break;
    default: break;
  }
  if (t.is_array()) use.need("array");
}
}  // namespace

PreludeUse prelude_requirements(const std::vector<const ir::Function*>& kernels, bool with_adjoint) {
  PreludeUse use;
  for (const ir::Function* fn : kernels) {
    for (const ir::Type& t : fn->values) need_type(use, t);
    for (const ir::Param& p : fn->params) need_type(use, p.type);
    for (const ir::LocalVar& v : fn->vars) need_type(use, v.type);
    bool differentiable = false;
    for (const ir::Param& p : fn->params) differentiable |= p.type.is_differentiable();
    ir::for_each_stmt(fn->body, [&](const ir::Stmt& s) {
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
          const ir::Type& first = fn->type_of(s.args.at(0));
          bool function = !g.op || (g.op_integers_only && !first.is_integer());
          if (function && g.chunk) use.need(g.chunk);
          bool float_args = false;
          for (ir::ValueId a : s.args) float_args |= fn->type_of(a).is_float();
          if (with_adjoint && g.adjoint && float_args) use.need(g.adjoint_chunk);
          break;
        }
        default:
          break;
      }
    });
  }
  return use;
}

}  // namespace kjit::codegen
