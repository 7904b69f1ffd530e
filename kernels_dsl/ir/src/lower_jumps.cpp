// Lowering of early exits into flags and guards.
#include "kjit/ir/lower_jumps.hpp"

#include "kjit/error.hpp"
#include "kjit/ir/builder.hpp"

namespace kjit::ir {

namespace {

const Type kBool = Type::scalar_of(Scalar::Bool);
const Type kInt = Type::scalar_of(Scalar::I32);

/// Whether `b` (or any region nested in it, loops included) contains op `op`.
bool contains(const Block& b, Op op) {
  bool found = false;
  for_each_stmt(b, [&](const Stmt& s) { found |= s.op == op; });
  return found;
}

/// Whether a Break or Continue in `b` belongs to the loop owning `b` (not to a nested loop).
bool has_own_jump(const Block& b, Op op) {
  for (const Stmt& s : b.stmts) {
    if (s.op == op) return true;
    if (s.op == Op::If && (has_own_jump(s.regions[0], op) || has_own_jump(s.regions[1], op)))
      return true;
  }
  return false;
}

class Lowerer {
 public:
  Lowerer(const Function& in) : in_(in), out_(in), b_(out_) {}

  Function run() {
    out_.body = Block();
    if (!contains(in_.body, Op::Return)) {
      lower(in_.body.stmts, 0, out_.body);
      out_.body.yield = in_.body.yield;  // a function's result, defined at its top level
      return std::move(out_);
    }
    ret_ = b_.declare(out_.body, kBool, b_.constant_bool(out_.body, false, in_.loc), in_.loc);
    if (in_.body.yield == kNoValue) {
      lower(in_.body.stmts, 0, out_.body);
      return std::move(out_);
    }
    // A device function that returns early: every Return (and the end of the body, as one
    // more Return of its yield) stores its value in one variable, read at the end.
    const Type result = in_.type_of(in_.body.yield);
    result_ = b_.declare(out_.body, result, b_.zero(out_.body, result, in_.loc), in_.loc);
    std::vector<Stmt> body = in_.body.stmts;
    body.push_back(b_.make(Op::Return, Type::void_type(), {in_.body.yield}, 0, in_.loc));
    lower(body, 0, out_.body);
    out_.body.yield = b_.load(out_.body, result_, in_.loc);
    return std::move(out_);
  }

 private:
  struct Loop {
    int64_t brk = -1;
    int64_t cont = -1;
  };

  /// "Nothing has left this block yet": the negation of every flag that skips the rest of
  /// the current block. kNoValue when no flag can be set here.
  ValueId guard(Block& b, SourceLoc loc) {
    std::vector<int64_t> flags;
    if (ret_ >= 0) flags.push_back(ret_);
    if (!loops_.empty()) {
      if (loops_.back().brk >= 0) flags.push_back(loops_.back().brk);
      if (loops_.back().cont >= 0) flags.push_back(loops_.back().cont);
    }
    if (flags.empty()) return kNoValue;
    ValueId any = b_.load(b, flags[0], loc);
    for (size_t i = 1; i < flags.size(); ++i)
      any = b_.call(b, Builtin::LogicalOr, kBool, {any, b_.load(b, flags[i], loc)}, loc);
    return b_.call(b, Builtin::Unot, kBool, {any}, loc);
  }

  /// Lowers statements[from..] into `out`. Returns whether they may leave early.
  bool lower(const std::vector<Stmt>& stmts, size_t from, Block& out) {
    for (size_t i = from; i < stmts.size(); ++i) {
      const Stmt& s = stmts[i];
      bool exits = false;
      switch (s.op) {
        case Op::Return:
          if (!s.args.empty()) b_.store(out, result_, s.args[0], s.loc);
          b_.store(out, ret_, b_.constant_bool(out, true, s.loc), s.loc);
          return true;  // what follows is unreachable
        case Op::Break:
          b_.store(out, loop_flag(&Loop::brk, out, s.loc), b_.constant_bool(out, true, s.loc), s.loc);
          return true;
        case Op::Continue:
          b_.store(out, loop_flag(&Loop::cont, out, s.loc), b_.constant_bool(out, true, s.loc), s.loc);
          return true;
        case Op::If: {
          Stmt copy = Builder::shell(s);
          bool e0 = lower(s.regions[0].stmts, 0, copy.regions[0]);
          bool e1 = lower(s.regions[1].stmts, 0, copy.regions[1]);
          out.stmts.push_back(std::move(copy));
          exits = e0 || e1;
          break;
        }
        case Op::For:
          exits = lower_for(s, out);
          break;
        case Op::While:
          exits = lower_while(s, out);
          break;
        case Op::Const: case Op::Param: case Op::ThreadId: case Op::LaunchDim:
        case Op::Call: case Op::Cast: case Op::Construct: case Op::Extract:
        case Op::Insert: case Op::DeclVar: case Op::LoadVar: case Op::StoreVar:
        case Op::ArrayLoad: case Op::ArrayStore: case Op::ArrayAtomic:
        case Op::ArrayShape: case Op::Print: case Op::CallFunc: case Op::GradFunc: case Op::TangentCall:
          out.stmts.push_back(s);  // no region, no jump: unchanged
          break;
        case Op::AccumVar: case Op::CallAdjoint: case Op::StrongZero: case Op::AdjArrayAdd:
        case Op::AdjArrayRead: case Op::AccumParam: case Op::Checkpoint: case Op::ReverseSegments: case Op::GradView:  // made after lowering, by the reverse transform
          KJIT_CHECK(false, std::string("lower_jumps reached the reverse transform's ") + op_name(s.op));
          break;
      }
      if (exits && i + 1 < stmts.size()) {
        // The rest of the block runs only if nothing left it.
        ValueId g = guard(out, stmts[i + 1].loc);
        KJIT_CHECK(g != kNoValue, "an early exit without a flag");
        Stmt rest = b_.make(Op::If, Type::void_type(), {g}, 0, stmts[i + 1].loc);
        lower(stmts, i + 1, rest.regions[0]);
        out.stmts.push_back(std::move(rest));
        return true;
      }
      if (exits) return true;
    }
    return false;
  }

  /// The flag (brk or cont) of the innermost loop, declared on first use. Flags are declared
  /// by the loop before it starts; here the variable is only created.
  int64_t loop_flag(int64_t Loop::*which, Block&, SourceLoc loc) {
    KJIT_CHECK(!loops_.empty(), "Break or Continue outside a loop");
    int64_t& flag = loops_.back().*which;
    if (flag < 0) {
      out_.vars.push_back(LocalVar{kBool, loc});
      flag = int64_t(out_.vars.size() - 1);
    }
    return flag;
  }

  /// Declares `flag` = false at the start of `b` (or appends the declaration).
  void declare_flag(Block& b, int64_t flag, SourceLoc loc) {
    b_.add(b, Op::DeclVar, Type::void_type(), {}, flag, loc);
    b_.store(b, flag, b_.constant_bool(b, false, loc), loc);
  }

  /// Lowers the body of the innermost loop (loops_.back()): resets its continue flag first
  /// when the body uses it. The loop is re-read after lowering, never held by reference: a
  /// nested loop's push_back may reallocate loops_.
  void lower_body(const Block& body, Block& out, SourceLoc loc) {
    const size_t depth = loops_.size() - 1;
    Block lowered;
    lowered.args = out.args;
    lower(body.stmts, 0, lowered);
    const Loop& loop = loops_.at(depth);
    if (loop.cont >= 0) {
      Block reset;
      b_.store(reset, loop.cont, b_.constant_bool(reset, false, loc), loc);
      for (Stmt& st : lowered.stmts) reset.stmts.push_back(std::move(st));
      lowered.stmts = std::move(reset.stmts);
    }
    for (Stmt& st : lowered.stmts) out.stmts.push_back(std::move(st));
  }

  bool lower_for(const Stmt& s, Block& out) {
    const Block& body = s.regions[0];
    bool leaves = has_own_jump(body, Op::Break) || (ret_ >= 0 && contains(body, Op::Return));
    loops_.push_back(Loop{});
    Block pre;  // flag declarations before the loop
    if (!leaves) {
      Stmt copy = Builder::shell(s);
      lower_body(body, copy.regions[0], s.loc);
      if (loops_.back().cont >= 0) declare_flag(pre, loops_.back().cont, s.loc);
      loops_.pop_back();
      for (Stmt& st : pre.stmts) out.stmts.push_back(std::move(st));
      out.stmts.push_back(std::move(copy));
      return false;
    }
    // A loop that can be left early becomes a While over an induction variable, whose
    // condition also tests the flags.
    SourceLoc loc = s.loc;
    ValueId begin = s.args[0], end = s.args[1], step = s.args[2];
    int64_t iv = b_.declare(pre, kInt, begin, loc);
    Stmt loop = b_.make(Op::While, Type::void_type(), {}, 0, loc);
    Block& body_out = loop.regions[1];
    // The induction value keeps its id: defined by a load at the top of the body.
    body_out.stmts.push_back(b_.make(Op::LoadVar, kInt, {}, iv, loc));
    ValueId induction = body.args.at(0);
    body_out.stmts.back().result = induction;
    b_.store(body_out, iv, b_.call(body_out, Builtin::Add, kInt, {induction, step}, loc), loc);
    lower_body(body, body_out, loc);
    Loop flags = loops_.back();
    loops_.pop_back();
    if (flags.brk < 0) flags.brk = new_flag(loc);
    declare_flag(pre, flags.brk, loc);
    if (flags.cont >= 0) declare_flag(pre, flags.cont, loc);

    // Condition: (step > 0 ? i < end : step < 0 && i > end) && !brk && !ret
    Block& c = loop.regions[0];
    ValueId i = b_.load(c, iv, loc);
    ValueId zero = b_.add(c, Op::Const, kInt, {}, 0, loc, 0);
    ValueId up = b_.call(c, Builtin::Gt, kBool, {step, zero}, loc);
    ValueId down = b_.call(c, Builtin::Lt, kBool, {step, zero}, loc);
    ValueId below = b_.call(c, Builtin::Lt, kBool, {i, end}, loc);
    ValueId above = b_.call(c, Builtin::Gt, kBool, {i, end}, loc);
    ValueId going_down = b_.call(c, Builtin::LogicalAnd, kBool, {down, above}, loc);
    ValueId in_range = b_.call(c, Builtin::Where, kBool, {up, below, going_down}, loc);
    c.yield = and_not_flags(c, in_range, flags.brk, loc);
    for (Stmt& st : pre.stmts) out.stmts.push_back(std::move(st));
    out.stmts.push_back(std::move(loop));
    return ret_ >= 0 && contains(body, Op::Return);
  }

  bool lower_while(const Stmt& s, Block& out) {
    const Block& cond = s.regions[0];
    const Block& body = s.regions[1];
    SourceLoc loc = s.loc;
    loops_.push_back(Loop{});
    Stmt loop = Builder::shell(s);
    lower_body(body, loop.regions[1], loc);
    Loop flags = loops_.back();
    loops_.pop_back();
    bool returns = ret_ >= 0 && contains(body, Op::Return);
    Block pre;
    if (flags.cont >= 0) declare_flag(pre, flags.cont, loc);
    if (flags.brk >= 0) declare_flag(pre, flags.brk, loc);
    if (flags.brk < 0 && !returns) {
      loop.regions[0] = cond;
    } else {
      // The user's condition is evaluated only while no flag is set:
      //   var c = false; if (!brk && !ret) { c = <cond> }; yield c
      Block& c = loop.regions[0];
      ValueId f = b_.constant_bool(c, false, loc);
      int64_t result = b_.declare(c, kBool, f, loc);
      ValueId t = b_.constant_bool(c, true, loc);
      ValueId go = and_not_flags(c, t, flags.brk, loc);
      Stmt check = b_.make(Op::If, Type::void_type(), {go}, 0, loc);
      check.regions[0].stmts = cond.stmts;
      b_.store(check.regions[0], result, cond.yield, loc);
      c.stmts.push_back(std::move(check));
      c.yield = b_.load(c, result, loc);
    }
    for (Stmt& st : pre.stmts) out.stmts.push_back(std::move(st));
    out.stmts.push_back(std::move(loop));
    return returns;
  }

  int64_t new_flag(SourceLoc loc) {
    out_.vars.push_back(LocalVar{kBool, loc});
    return int64_t(out_.vars.size() - 1);
  }

  /// value && !brk && !ret
  ValueId and_not_flags(Block& b, ValueId value, int64_t brk, SourceLoc loc) {
    for (int64_t flag : {brk, ret_}) {
      if (flag < 0) continue;
      ValueId set = b_.load(b, flag, loc);
      ValueId unset = b_.call(b, Builtin::Unot, kBool, {set}, loc);
      value = b_.call(b, Builtin::LogicalAnd, kBool, {value, unset}, loc);
    }
    return value;
  }

  const Function& in_;
  Function out_;
  Builder b_;
  int64_t ret_ = -1;     ///< the flag "the function has returned"
  int64_t result_ = -1;  ///< the variable a device function's Returns store their value in
  std::vector<Loop> loops_;
};

}  // namespace

Function lower_jumps(const Function& fn) {
  bool any = contains(fn.body, Op::Return) || contains(fn.body, Op::Break) ||
             contains(fn.body, Op::Continue);
  if (!any) return fn;
  return Lowerer(fn).run();
}

}  // namespace kjit::ir
