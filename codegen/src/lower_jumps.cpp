// Lowering of early exits into flags and guards.
#include "lower_jumps.hpp"

#include "ir_builder.hpp"
#include "kjit/error.hpp"

namespace kjit::codegen {

namespace {

const ir::Type kBool = ir::Type::scalar_of(ir::Scalar::Bool);
const ir::Type kInt = ir::Type::scalar_of(ir::Scalar::I32);

/// Whether `b` (or any region nested in it, loops included) contains op `op`.
bool contains(const ir::Block& b, ir::Op op) {
  bool found = false;
  ir::for_each_stmt(b, [&](const ir::Stmt& s) { found |= s.op == op; });
  return found;
}

/// Whether a Break or Continue in `b` belongs to the loop owning `b` (not to a nested loop).
bool has_own_jump(const ir::Block& b, ir::Op op) {
  for (const ir::Stmt& s : b.stmts) {
    if (s.op == op) return true;
    if (s.op == ir::Op::If && (has_own_jump(s.regions[0], op) || has_own_jump(s.regions[1], op)))
      return true;
  }
  return false;
}

class Lowerer {
 public:
  Lowerer(const ir::Function& in) : in_(in), out_(in), b_(out_) {}

  ir::Function run() {
    if (contains(in_.body, ir::Op::Return)) {
      ir::Block prologue;
      ret_ = b_.declare(prologue, kBool, b_.constant_bool(prologue, false, in_.loc), in_.loc);
      out_.body = std::move(prologue);
    } else {
      out_.body = ir::Block();
    }
    lower(in_.body.stmts, 0, out_.body);
    return std::move(out_);
  }

 private:
  struct Loop {
    int64_t brk = -1;
    int64_t cont = -1;
  };

  /// "Nothing has left this block yet": the negation of every flag that skips the rest of
  /// the current block. kNoValue when no flag can be set here.
  ir::ValueId guard(ir::Block& b, ir::SourceLoc loc) {
    std::vector<int64_t> flags;
    if (ret_ >= 0) flags.push_back(ret_);
    if (!loops_.empty()) {
      if (loops_.back().brk >= 0) flags.push_back(loops_.back().brk);
      if (loops_.back().cont >= 0) flags.push_back(loops_.back().cont);
    }
    if (flags.empty()) return ir::kNoValue;
    ir::ValueId any = b_.load(b, flags[0], loc);
    for (size_t i = 1; i < flags.size(); ++i)
      any = b_.call(b, ir::Builtin::LogicalOr, kBool, {any, b_.load(b, flags[i], loc)}, loc);
    return b_.call(b, ir::Builtin::Unot, kBool, {any}, loc);
  }

  /// Lowers statements[from..] into `out`. Returns whether they may leave early.
  bool lower(const std::vector<ir::Stmt>& stmts, size_t from, ir::Block& out) {
    for (size_t i = from; i < stmts.size(); ++i) {
      const ir::Stmt& s = stmts[i];
      bool exits = false;
      switch (s.op) {
        case ir::Op::Return:
          b_.store(out, ret_, b_.constant_bool(out, true, s.loc), s.loc);
          return true;  // what follows is unreachable
        case ir::Op::Break:
          b_.store(out, loop_flag(&Loop::brk, out, s.loc), b_.constant_bool(out, true, s.loc), s.loc);
          return true;
        case ir::Op::Continue:
          b_.store(out, loop_flag(&Loop::cont, out, s.loc), b_.constant_bool(out, true, s.loc), s.loc);
          return true;
        case ir::Op::If: {
          ir::Stmt copy = IrBuilder::shell(s);
          bool e0 = lower(s.regions[0].stmts, 0, copy.regions[0]);
          bool e1 = lower(s.regions[1].stmts, 0, copy.regions[1]);
          out.stmts.push_back(std::move(copy));
          exits = e0 || e1;
          break;
        }
        case ir::Op::For:
          exits = lower_for(s, out);
          break;
        case ir::Op::While:
          exits = lower_while(s, out);
          break;
        case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
        case ir::Op::Call: case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract:
        case ir::Op::Insert: case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar:
        case ir::Op::ArrayLoad: case ir::Op::ArrayStore: case ir::Op::ArrayAtomic:
        case ir::Op::ArrayShape: case ir::Op::Print: case ir::Op::CallFunc: case ir::Op::TangentCall:
          out.stmts.push_back(s);  // no region, no jump: unchanged
          break;
      }
      if (exits && i + 1 < stmts.size()) {
        // The rest of the block runs only if nothing left it.
        ir::ValueId g = guard(out, stmts[i + 1].loc);
        KJIT_CHECK(g != ir::kNoValue, "an early exit without a flag");
        ir::Stmt rest = b_.make(ir::Op::If, ir::Type::void_type(), {g}, 0, stmts[i + 1].loc);
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
  int64_t loop_flag(int64_t Loop::*which, ir::Block&, ir::SourceLoc loc) {
    KJIT_CHECK(!loops_.empty(), "Break or Continue outside a loop");
    int64_t& flag = loops_.back().*which;
    if (flag < 0) {
      out_.vars.push_back(ir::LocalVar{kBool, loc});
      flag = int64_t(out_.vars.size() - 1);
    }
    return flag;
  }

  /// Declares `flag` = false at the start of `b` (or appends the declaration).
  void declare_flag(ir::Block& b, int64_t flag, ir::SourceLoc loc) {
    b_.add(b, ir::Op::DeclVar, ir::Type::void_type(), {}, flag, loc);
    b_.store(b, flag, b_.constant_bool(b, false, loc), loc);
  }

  /// Lowers the body of the innermost loop (loops_.back()): resets its continue flag first
  /// when the body uses it. The loop is re-read after lowering, never held by reference: a
  /// nested loop's push_back may reallocate loops_.
  void lower_body(const ir::Block& body, ir::Block& out, ir::SourceLoc loc) {
    const size_t depth = loops_.size() - 1;
    ir::Block lowered;
    lowered.args = out.args;
    lower(body.stmts, 0, lowered);
    const Loop& loop = loops_.at(depth);
    if (loop.cont >= 0) {
      ir::Block reset;
      b_.store(reset, loop.cont, b_.constant_bool(reset, false, loc), loc);
      for (ir::Stmt& st : lowered.stmts) reset.stmts.push_back(std::move(st));
      lowered.stmts = std::move(reset.stmts);
    }
    for (ir::Stmt& st : lowered.stmts) out.stmts.push_back(std::move(st));
  }

  bool lower_for(const ir::Stmt& s, ir::Block& out) {
    const ir::Block& body = s.regions[0];
    bool leaves = has_own_jump(body, ir::Op::Break) || (ret_ >= 0 && contains(body, ir::Op::Return));
    loops_.push_back(Loop{});
    ir::Block pre;  // flag declarations before the loop
    if (!leaves) {
      ir::Stmt copy = IrBuilder::shell(s);
      lower_body(body, copy.regions[0], s.loc);
      if (loops_.back().cont >= 0) declare_flag(pre, loops_.back().cont, s.loc);
      loops_.pop_back();
      for (ir::Stmt& st : pre.stmts) out.stmts.push_back(std::move(st));
      out.stmts.push_back(std::move(copy));
      return false;
    }
    // A loop that can be left early becomes a While over an induction variable, whose
    // condition also tests the flags.
    ir::SourceLoc loc = s.loc;
    ir::ValueId begin = s.args[0], end = s.args[1], step = s.args[2];
    int64_t iv = b_.declare(pre, kInt, begin, loc);
    ir::Stmt loop = b_.make(ir::Op::While, ir::Type::void_type(), {}, 0, loc);
    ir::Block& body_out = loop.regions[1];
    // The induction value keeps its id: defined by a load at the top of the body.
    body_out.stmts.push_back(b_.make(ir::Op::LoadVar, kInt, {}, iv, loc));
    ir::ValueId induction = body.args.at(0);
    body_out.stmts.back().result = induction;
    b_.store(body_out, iv, b_.call(body_out, ir::Builtin::Add, kInt, {induction, step}, loc), loc);
    lower_body(body, body_out, loc);
    Loop flags = loops_.back();
    loops_.pop_back();
    if (flags.brk < 0) flags.brk = new_flag(loc);
    declare_flag(pre, flags.brk, loc);
    if (flags.cont >= 0) declare_flag(pre, flags.cont, loc);

    // Condition: (step > 0 ? i < end : step < 0 && i > end) && !brk && !ret
    ir::Block& c = loop.regions[0];
    ir::ValueId i = b_.load(c, iv, loc);
    ir::ValueId zero = b_.add(c, ir::Op::Const, kInt, {}, 0, loc, 0);
    ir::ValueId up = b_.call(c, ir::Builtin::Gt, kBool, {step, zero}, loc);
    ir::ValueId down = b_.call(c, ir::Builtin::Lt, kBool, {step, zero}, loc);
    ir::ValueId below = b_.call(c, ir::Builtin::Lt, kBool, {i, end}, loc);
    ir::ValueId above = b_.call(c, ir::Builtin::Gt, kBool, {i, end}, loc);
    ir::ValueId going_down = b_.call(c, ir::Builtin::LogicalAnd, kBool, {down, above}, loc);
    ir::ValueId in_range = b_.call(c, ir::Builtin::Where, kBool, {up, below, going_down}, loc);
    c.yield = and_not_flags(c, in_range, flags.brk, loc);
    for (ir::Stmt& st : pre.stmts) out.stmts.push_back(std::move(st));
    out.stmts.push_back(std::move(loop));
    return ret_ >= 0 && contains(body, ir::Op::Return);
  }

  bool lower_while(const ir::Stmt& s, ir::Block& out) {
    const ir::Block& cond = s.regions[0];
    const ir::Block& body = s.regions[1];
    ir::SourceLoc loc = s.loc;
    loops_.push_back(Loop{});
    ir::Stmt loop = IrBuilder::shell(s);
    lower_body(body, loop.regions[1], loc);
    Loop flags = loops_.back();
    loops_.pop_back();
    bool returns = ret_ >= 0 && contains(body, ir::Op::Return);
    ir::Block pre;
    if (flags.cont >= 0) declare_flag(pre, flags.cont, loc);
    if (flags.brk >= 0) declare_flag(pre, flags.brk, loc);
    if (flags.brk < 0 && !returns) {
      loop.regions[0] = cond;
    } else {
      // The user's condition is evaluated only while no flag is set:
      //   var c = false; if (!brk && !ret) { c = <cond> }; yield c
      ir::Block& c = loop.regions[0];
      ir::ValueId f = b_.constant_bool(c, false, loc);
      int64_t result = b_.declare(c, kBool, f, loc);
      ir::ValueId t = b_.constant_bool(c, true, loc);
      ir::ValueId go = and_not_flags(c, t, flags.brk, loc);
      ir::Stmt check = b_.make(ir::Op::If, ir::Type::void_type(), {go}, 0, loc);
      check.regions[0].stmts = cond.stmts;
      b_.store(check.regions[0], result, cond.yield, loc);
      c.stmts.push_back(std::move(check));
      c.yield = b_.load(c, result, loc);
    }
    for (ir::Stmt& st : pre.stmts) out.stmts.push_back(std::move(st));
    out.stmts.push_back(std::move(loop));
    return returns;
  }

  int64_t new_flag(ir::SourceLoc loc) {
    out_.vars.push_back(ir::LocalVar{kBool, loc});
    return int64_t(out_.vars.size() - 1);
  }

  /// value && !brk && !ret
  ir::ValueId and_not_flags(ir::Block& b, ir::ValueId value, int64_t brk, ir::SourceLoc loc) {
    for (int64_t flag : {brk, ret_}) {
      if (flag < 0) continue;
      ir::ValueId set = b_.load(b, flag, loc);
      ir::ValueId unset = b_.call(b, ir::Builtin::Unot, kBool, {set}, loc);
      value = b_.call(b, ir::Builtin::LogicalAnd, kBool, {value, unset}, loc);
    }
    return value;
  }

  const ir::Function& in_;
  ir::Function out_;
  IrBuilder b_;
  int64_t ret_ = -1;
  std::vector<Loop> loops_;
};

}  // namespace

ir::Function lower_jumps(const ir::Function& fn) {
  bool any = contains(fn.body, ir::Op::Return) || contains(fn.body, ir::Op::Break) ||
             contains(fn.body, ir::Op::Continue);
  if (!any) return fn;
  return Lowerer(fn).run();
}

}  // namespace kjit::codegen
