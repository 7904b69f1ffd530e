// kjit/ir/visitor.hpp — a statement visitor driven by ops.def: a class that derives from it
// must handle every op kind, or it does not compile.
#pragma once

#include "kjit/ir/ir.hpp"

namespace kjit::ir {

/// CRTP visitor: `Derived` defines `R visit_<Op>(const Stmt&)` for every op in ops.def, and
/// `visit(s)` dispatches to the one for `s.op`.
template <class Derived, class R = void>
class StmtVisitor {
 public:
  R visit(const Stmt& s) {
    switch (s.op) {
#define KJIT_IR_OP(E, name, regions, kind, adjoint) \
  case Op::E:               \
    return static_cast<Derived*>(this)->visit_##E(s);
#include "kjit/ir/ops.def"
#undef KJIT_IR_OP
    }
    return static_cast<Derived*>(this)->visit_unknown(s);
  }
  R visit_unknown(const Stmt&) { return R(); }
};

}  // namespace kjit::ir
