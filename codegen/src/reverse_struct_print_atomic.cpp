// The reverse transform's rules (reverse_builder.hpp) of a struct's fields, print() of values and
// atomic min/max, each as the adjoint emitter's rule of the statement (reverse_rules.cpp) adds.
#include "kjit/error.hpp"
#include "kjit/ir/structs.hpp"
#include "reverse_builder.hpp"

namespace kjit::codegen {

void ReverseBuilder::reverse_struct_insert(const ir::Stmt& s, ir::Block& out) {
  const ir::SourceLoc& loc = s.loc;
  const ir::Type field = ir::struct_info(s.type.struct_id).fields.at(size_t(s.field())).type;
  const ir::ValueId adj = b_.load(out, adj_of(s.result), loc);
  if (facts_.differentiable(s.args[1])) {
    const ir::ValueId part = b_.add(out, ir::Op::Extract, field, {adj}, s.field(), loc);
    b_.add(out, ir::Op::AccumVar, ir::Type::void_type(), {part}, adj_of(s.args[1]), loc);
  }
  // The emitter's { T kj_t = adj; kj_t.field = {}; adj_whole += kj_t; }: the same bits.
  const ir::ValueId rest = b_.add(out, ir::Op::Insert, s.type, {adj, zero(out, field, loc)}, s.field(), loc);
  b_.add(out, ir::Op::AccumVar, ir::Type::void_type(), {rest}, adj_of(s.args[0]), loc);
}

void ReverseBuilder::reverse_print(const ir::Stmt& s, ir::Block& out) {
  std::vector<ir::ValueId> printed;
  for (ir::ValueId a : s.args) {
    const ir::Type& t = in_.type_of(a);
    printed.push_back(t.is_float() ? b_.load(out, adj_of(a), s.loc) : zero(out, t, s.loc));
  }
  b_.add(out, ir::Op::CallAdjoint, ir::Type::void_type(), std::move(printed), int64_t(ir::Op::Print), s.loc,
         uint64_t(s.format()));
}

void ReverseBuilder::reverse_atomic_select(const ir::Stmt& s, ir::Block& out) {
  const ir::AtomicOp op = s.atomic_op();
  KJIT_CHECK(op == ir::AtomicOp::Min || op == ir::AtomicOp::Max,  // others are refused (adjoint_obstacles)
             std::string("the reverse transform reached atomic_") + ir::atomic_op_name(op) + " on a differentiable value");
  std::vector<ir::ValueId> args;
  for (ir::ValueId a : s.args) args.push_back(val(a));
  args.push_back(adjoint_array(out, s.args[0], s.loc));
  ir::Stmt call = b_.make(ir::Op::CallAdjoint, ir::Type::void_type(), std::move(args), int64_t(ir::Op::ArrayAtomic), s.loc);
  call.outs.assign(s.args.size(), -1);
  call.outs.back() = adj_of(s.args.back());
  out.stmts.push_back(std::move(call));
}

}  // namespace kjit::codegen
