// Appends new statements to IR blocks during codegen passes (fresh values, fresh variables).
#pragma once

#include <vector>

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

/// Creates statements and variables in `fn`.
class IrBuilder {
 public:
  explicit IrBuilder(ir::Function& fn) : fn_(fn) {}

  /// A statement of `op` producing a new value of type `t` (none for void).
  ir::Stmt make(ir::Op op, ir::Type t, std::vector<ir::ValueId> args, int64_t imm,
                ir::SourceLoc loc, uint64_t bits = 0) {
    ir::Stmt s;
    s.op = op;
    s.type = t;
    s.args = std::move(args);
    s.imm = imm;
    s.bits = bits;
    s.loc = loc;
    if (!t.is_void()) s.result = fn_.new_value(t);
    if (op == ir::Op::If || op == ir::Op::While) s.regions.resize(2);
    if (op == ir::Op::For) s.regions.resize(1);
    return s;
  }
  /// Appends `make(...)` to `b`; returns the new value.
  ir::ValueId add(ir::Block& b, ir::Op op, ir::Type t, std::vector<ir::ValueId> args, int64_t imm,
                  ir::SourceLoc loc, uint64_t bits = 0) {
    b.stmts.push_back(make(op, t, std::move(args), imm, loc, bits));
    return b.stmts.back().result;
  }
  ir::ValueId constant_bool(ir::Block& b, bool v, ir::SourceLoc loc) {
    return add(b, ir::Op::Const, ir::Type::scalar_of(ir::Scalar::Bool), {}, 0, loc, v ? 1 : 0);
  }
  ir::ValueId call(ir::Block& b, ir::Builtin f, ir::Type t, std::vector<ir::ValueId> args,
                   ir::SourceLoc loc) {
    return add(b, ir::Op::Call, t, std::move(args), int64_t(f), loc);
  }
  /// A new local variable of type `t`, declared in `b` and set to `init`.
  int64_t declare(ir::Block& b, ir::Type t, ir::ValueId init, ir::SourceLoc loc) {
    fn_.vars.push_back(ir::LocalVar{t, loc});
    int64_t var = int64_t(fn_.vars.size() - 1);
    add(b, ir::Op::DeclVar, ir::Type::void_type(), {}, var, loc);
    add(b, ir::Op::StoreVar, ir::Type::void_type(), {init}, var, loc);
    return var;
  }
  /// A statement like `s` (the same result, operands and facts) whose regions have its
  /// regions' arguments and no statements: passes that rebuild regions fill them.
  static ir::Stmt shell(const ir::Stmt& s) {
    ir::Stmt c;
    c.op = s.op;
    c.type = s.type;
    c.result = s.result;
    c.args = s.args;
    c.imm = s.imm;
    c.bits = s.bits;
    c.loc = s.loc;
    c.regions.resize(s.regions.size());
    for (size_t r = 0; r < s.regions.size(); ++r) {
      c.regions[r].args = s.regions[r].args;
      c.regions[r].yield = s.regions[r].yield;
    }
    return c;
  }
  ir::ValueId load(ir::Block& b, int64_t var, ir::SourceLoc loc) {
    return add(b, ir::Op::LoadVar, fn_.vars.at(size_t(var)).type, {}, var, loc);
  }
  void store(ir::Block& b, int64_t var, ir::ValueId v, ir::SourceLoc loc) {
    add(b, ir::Op::StoreVar, ir::Type::void_type(), {v}, var, loc);
  }

 private:
  ir::Function& fn_;
};

}  // namespace kjit::codegen
