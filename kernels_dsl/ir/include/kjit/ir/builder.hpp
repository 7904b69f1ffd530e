// kjit/ir/builder.hpp — appends new statements to IR blocks in passes that rewrite the IR
// (fresh values, fresh variables).
#pragma once

#include <vector>

#include "kjit/ir/ir.hpp"

namespace kjit::ir {

/// Creates statements and variables in `fn`.
class Builder {
 public:
  explicit Builder(Function& fn) : fn_(fn) {}

  /// A statement of `op` producing a new value of type `t` (none for void).
  Stmt make(Op op, Type t, std::vector<ValueId> args, int64_t imm,
                SourceLoc loc, uint64_t bits = 0) {
    Stmt s;
    s.op = op;
    s.type = t;
    s.args = std::move(args);
    s.imm = imm;
    s.bits = bits;
    s.loc = loc;
    if (!t.is_void()) s.result = fn_.new_value(t);
    s.regions.resize(size_t(op_info(op).regions));  // ops.def's regions column
    return s;
  }
  /// Appends `make(...)` to `b`; returns the new value.
  ValueId add(Block& b, Op op, Type t, std::vector<ValueId> args, int64_t imm,
                  SourceLoc loc, uint64_t bits = 0) {
    b.stmts.push_back(make(op, t, std::move(args), imm, loc, bits));
    return b.stmts.back().result;
  }
  ValueId constant_bool(Block& b, bool v, SourceLoc loc) {
    return add(b, Op::Const, Type::scalar_of(Scalar::Bool), {}, 0, loc, v ? 1 : 0);
  }
  /// The zero of `t` (a scalar constant, or an aggregate built from nothing).
  ValueId zero(Block& b, const Type& t, SourceLoc loc) {
    if (t.shape == Shape::Scalar) return add(b, Op::Const, t, {}, 0, loc);
    return add(b, Op::Construct, t, {}, 0, loc);
  }
  ValueId call(Block& b, Builtin f, Type t, std::vector<ValueId> args,
                   SourceLoc loc) {
    return add(b, Op::Call, t, std::move(args), int64_t(f), loc);
  }
  /// A new local variable of type `t`, declared in `b` and set to `init`.
  int64_t declare(Block& b, Type t, ValueId init, SourceLoc loc) {
    fn_.vars.push_back(LocalVar{t, loc});
    int64_t var = int64_t(fn_.vars.size() - 1);
    add(b, Op::DeclVar, Type::void_type(), {}, var, loc);
    add(b, Op::StoreVar, Type::void_type(), {init}, var, loc);
    return var;
  }
  /// A statement like `s` (the same result, operands and facts) whose regions have its
  /// regions' arguments and no statements: passes that rebuild regions fill them.
  static Stmt shell(const Stmt& s) {
    Stmt c;
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
  ValueId load(Block& b, int64_t var, SourceLoc loc) {
    return add(b, Op::LoadVar, fn_.vars.at(size_t(var)).type, {}, var, loc);
  }
  void store(Block& b, int64_t var, ValueId v, SourceLoc loc) {
    add(b, Op::StoreVar, Type::void_type(), {v}, var, loc);
  }

 private:
  Function& fn_;
};

}  // namespace kjit::ir
