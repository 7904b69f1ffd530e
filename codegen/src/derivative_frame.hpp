// The frame both derivative transforms (reverse and tangent) start a derived function from.
#pragma once

#include <string>

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// A function derived from `f` (its adjoint or tangent), before its body: named `name`, with
/// `f`'s values, variables, print formats, callees, launch shape, location and kind, and its
/// parameters followed by one derivative per parameter, of the same type, named
/// `derivative_name(parameter name)`. The values are kept so that the derived body can use
/// `f`'s statements' results as they are.
template <class DerivativeName>
ir::Function derivative_frame(const ir::Function& f, std::string name, DerivativeName derivative_name) {
  ir::Function out;
  out.name = std::move(name);
  out.params = f.params;
  for (const ir::Param& p : f.params) out.params.push_back(ir::Param{derivative_name(p.name), p.type});
  out.vars = f.vars;
  out.values = f.values;
  out.strings = f.strings;
  out.callees = f.callees;
  out.launch_ndim = f.launch_ndim;
  out.loc = f.loc;
  out.is_function = f.is_function;
  return out;
}

}  // namespace kjit::codegen
