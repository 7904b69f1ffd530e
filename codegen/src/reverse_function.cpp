// The reverse transform of a device function (reverse_transform.hpp): what its adjoint adds to
// a kernel's frame, the result's adjoint its caller hands in.
#include "reverse_builder.hpp"

namespace kjit::codegen {

void ReverseBuilder::seed_result(ir::Block& sweep) {
  const ir::ValueId result = in_.body.yield;
  if (!in_.is_function || result == ir::kNoValue || !facts_.differentiable(result)) return;
  // The caller's adjoint of the result (kj_adj_ret): a parameter after the adjoints'.
  const ir::Type& t = in_.type_of(result);
  out_.params.push_back(ir::Param{kAdjointOfResult, t});
  const ir::ValueId adj_ret = b_.add(sweep, ir::Op::Param, t, {}, int64_t(out_.params.size() - 1), in_.loc);
  declare_adjoint(sweep, result, in_.loc);
  b_.add(sweep, ir::Op::AccumVar, ir::Type::void_type(), {adj_ret}, adj_of(result), in_.loc);
}

}  // namespace kjit::codegen
