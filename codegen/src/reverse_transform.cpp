// The reverse transform (reverse_transform.hpp): the adjoint's frame, and the replay and sweep
// of straight-line code, branches and device function calls (loops: reverse_loops.cpp).
#include "reverse_transform.hpp"

#include <map>
#include <vector>

#include "adjoint_emitter.hpp"
#include "builtin_codegen.hpp"
#include "derivative_frame.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/ir/type.hpp"
#include "reverse_builder.hpp"

namespace kjit::codegen {

namespace {
void add_defs(const ir::Block& b, std::map<ir::ValueId, ForwardDef>& out) {
  for (ir::ValueId a : b.args) out[a] = ForwardDef{&b, nullptr};
  for (const ir::Stmt& s : b.stmts) {
    if (s.result != ir::kNoValue) out[s.result] = ForwardDef{&b, &s};
    for (const ir::Block& r : s.regions) add_defs(r, out);
  }
}
}  // namespace

std::map<ir::ValueId, ForwardDef> forward_defs(const ir::Block& b) {
  std::map<ir::ValueId, ForwardDef> out;
  add_defs(b, out);
  return out;
}

ir::Function ReverseBuilder::run() {
  // A function's parameters' adjoints go to its caller (is_function, kept).
  out_ = derivative_frame(in_, in_.name + ".adjoint", [](const std::string& p) { return "adj_" + p; });
  ir::Block& body = out_.body;
  // The adjoint arrays the sweep adds into or reads.
  for (const auto& [value, index] : params_) {
    const ir::Type& t = in_.type_of(value);
    if (t.is_array() && t.is_differentiable())
      adj_array_[value] = b_.add(body, ir::Op::Param, t, {}, int64_t(in_.params.size() + index), in_.loc);
  }
  // Variables and the parameters' adjoints first, zero (as the emitter declares them).
  for (size_t var = 0; var < in_.vars.size(); ++var) {
    declare_zero(body, int64_t(var), in_.vars[var].loc);
    if (in_.vars[var].type.is_differentiable())
      adj_var_of_var_[int64_t(var)] = declare_zero(body, new_var(in_.vars[var].type, in_.vars[var].loc), in_.vars[var].loc);
  }
  for (const auto& [value, index] : params_)
    if (facts_.differentiable(value)) declare_adjoint(body, value, in_.loc);
  declare_loops(body);
  // The sweep first: it names the values of branches it reads, which the replay keeps.
  ir::Block sweep;
  seed_result(sweep);
  reverse(in_.body, sweep);
  for (const auto& [value, var] : kept_) b_.add(body, ir::Op::DeclVar, ir::Type::void_type(), {}, var, out_.vars.at(size_t(var)).loc);
  replay(in_.body, body, nullptr);
  if (overflow_ >= 0) {  // a thread whose loop passed its bound gets no gradient (a partial one would be wrong)
    const ir::ValueId passed = b_.load(body, overflow_, in_.loc);
    const ir::ValueId within = b_.call(body, ir::Builtin::Unot, ir::Type::scalar_of(ir::Scalar::Bool), {passed}, in_.loc);
    ir::Stmt guard = b_.make(ir::Op::If, ir::Type::void_type(), {within}, 0, in_.loc);
    guard.regions[0] = std::move(sweep);
    body.stmts.push_back(std::move(guard));
  } else {
    for (ir::Stmt& s : sweep.stmts) body.stmts.push_back(std::move(s));
  }
  // Hand the value parameters' adjoints back: a kernel's entry point sums them over the
  // launch (widened), a device function's caller takes them as they are.
  for (const auto& [value, index] : params_) {
    if (!facts_.differentiable(value)) continue;
    ir::ValueId adj = b_.load(body, adj_of(value), in_.loc);
    const ir::Type sum = ir::adjoint_sum_type(in_.type_of(value));
    if (sum != in_.type_of(value) && !in_.is_function) adj = b_.add(body, ir::Op::Cast, sum, {adj}, 0, in_.loc);
    b_.add(body, ir::Op::AccumParam, ir::Type::void_type(), {adj}, int64_t(index), in_.loc);
  }
  return std::move(out_);  // verified by the pass list, as every pass's IR
}

int64_t ReverseBuilder::new_var(const ir::Type& t, const ir::SourceLoc& loc) {
  out_.vars.push_back(ir::LocalVar{t, loc});
  return int64_t(out_.vars.size() - 1);
}

int64_t ReverseBuilder::declare_zero(ir::Block& b, int64_t var, const ir::SourceLoc& loc) {
  b_.add(b, ir::Op::DeclVar, ir::Type::void_type(), {}, var, loc);
  b_.store(b, var, zero(b, out_.vars.at(size_t(var)).type, loc), loc);
  return var;
}

ir::ValueId ReverseBuilder::zero(ir::Block& b, const ir::Type& t, const ir::SourceLoc& loc) {
  return b_.add(b, ir::Op::Construct, t, {}, 0, loc);
}

void ReverseBuilder::declare_adjoint(ir::Block& b, ir::ValueId id, const ir::SourceLoc& loc) {
  if (!facts_.differentiable(id) || adj_.count(id)) return;
  adj_[id] = declare_zero(b, new_var(in_.type_of(id), loc), loc);
}

int64_t ReverseBuilder::adj_of(ir::ValueId id) const {
  auto it = adj_.find(id);
  KJIT_CHECK(it != adj_.end(), "the reverse transform reached %" + std::to_string(id) + " before its adjoint");
  return it->second;
}

ir::ValueId ReverseBuilder::val(ir::ValueId id) {
  const ForwardDef& def = defs_.at(id);
  if (def.block == &in_.body) return id;
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    if (scope->forward != def.block) continue;
    if (scope->iteration) return scope->iteration->at(id);  // the reversed iteration's replay
    auto copy = scope->copies.find(id);
    if (copy != scope->copies.end()) return copy->second;
    const ir::SourceLoc& loc = def.stmt->loc;
    if (def.stmt->op == ir::Op::Const) {
      scope->loads.push_back(b_.make(ir::Op::Const, def.stmt->type, {}, def.stmt->imm, loc, def.stmt->bits));
    } else {
      if (!kept_.count(id)) kept_[id] = new_var(in_.type_of(id), loc);
      scope->loads.push_back(b_.make(ir::Op::LoadVar, in_.type_of(id), {}, kept_.at(id), loc));
    }
    return scope->copies[id] = scope->loads.back().result;
  }
  KJIT_CHECK(false, "the reverse transform reached %" + std::to_string(id) + " outside the branch that defines it");
  return id;
}

std::vector<std::vector<ir::ValueId>> ReverseBuilder::first_touches(const ir::Block& b) const {
  return codegen::first_touches(b, [&](ir::ValueId id) { return defs_.at(id).block == &b && !params_.count(id); });
}

void ReverseBuilder::replay(const ir::Block& b, ir::Block& out, const Replica* copy) {
  for (const ir::Stmt& s : b.stmts) {
    replay(s, out, copy);
    auto kept = kept_.find(s.result);
    if (s.result != ir::kNoValue && kept != kept_.end() && (!copy || copy->keep))
      b_.store(out, kept->second, copy ? copy->values.at(s.result) : s.result, s.loc);
  }
}

void ReverseBuilder::replay(const ir::Stmt& s, ir::Block& out, const Replica* copy) {
  switch (s.op) {
    case ir::Op::DeclVar:  // declared above
    case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::Print:
      return;
    case ir::Op::Call:  // a void builtin is a side effect
    case ir::Op::CallFunc:  // printed as a replay: through the function's replay, a void one not at all
      if (!s.type.is_void()) out.stmts.push_back(replica(s, copy));
      return;
    case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
    case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert:
    case ir::Op::LoadVar: case ir::Op::StoreVar: case ir::Op::ArrayLoad: case ir::Op::ArrayShape:
      out.stmts.push_back(replica(s, copy));
      return;
    case ir::Op::If: {
      ir::Stmt c = replica(s, copy);
      replay(s.regions[0], c.regions[0], copy);
      replay(s.regions[1], c.regions[1], copy);
      out.stmts.push_back(std::move(c));
      return;
    }
    case ir::Op::For: case ir::Op::While:
      replay_loop(s, out, copy);
      return;
    case ir::Op::Break: case ir::Op::Continue:
    case ir::Op::Return: case ir::Op::GradFunc: case ir::Op::TangentCall: case ir::Op::AccumVar:
    case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd: case ir::Op::AdjArrayRead:
    case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
      break;
  }
  KJIT_CHECK(false, std::string("the reverse transform has no replay of ") + ir::op_name(s.op));
}

void ReverseBuilder::reverse(const ir::Block& b, ir::Block& out) {
  const std::vector<std::vector<ir::ValueId>> touches = first_touches(b);
  for (size_t i = b.stmts.size(); i-- > 0;) {
    for (ir::ValueId id : touches[i]) declare_adjoint(out, id, b.stmts[i].loc);
    if (has_work(b.stmts[i])) reverse(b.stmts[i], out);
  }
}

void ReverseBuilder::reverse_if(const ir::Stmt& s, ir::Block& out) {
  ir::Stmt r = b_.make(ir::Op::If, ir::Type::void_type(), {val(s.args[0])}, s.imm, s.loc);
  for (size_t side = 0; side < 2; ++side) {
    if (side == 1 && !has_work(s.regions[1])) break;
    scopes_.push_back(Scope{&s.regions[side], {}, {}});
    reverse(s.regions[side], r.regions[side]);
    std::vector<ir::Stmt>& stmts = r.regions[side].stmts;
    stmts.insert(stmts.begin(), scopes_.back().loads.begin(), scopes_.back().loads.end());
    scopes_.pop_back();
  }
  out.stmts.push_back(std::move(r));
}

bool ReverseBuilder::has_work(const ir::Stmt& s) const {
  if (s.op == ir::Op::If) return has_work(s.regions[0]) || has_work(s.regions[1]);
  if (s.op == ir::Op::For || s.op == ir::Op::While) return has_work(loop_body(s));  // a condition is only replayed
  return facts_.has_rule(s);
}

bool ReverseBuilder::has_work(const ir::Block& b) const {
  for (const ir::Stmt& s : b.stmts)
    if (has_work(s)) return true;
  return false;
}

void ReverseBuilder::call_adjoint(const ir::Stmt& s, ir::Block& out, std::vector<int64_t> outs, bool strong_zero) {
  const ir::ValueId adj_ret = b_.load(out, adj_of(s.result), s.loc);
  std::vector<ir::ValueId> args;
  for (ir::ValueId a : s.args) args.push_back(val(a));
  args.push_back(val(s.result));
  args.push_back(adj_ret);
  const bool field = s.op == ir::Op::Extract && in_.type_of(s.args[0]).shape == ir::Shape::Struct;
  ir::Stmt call = b_.make(ir::Op::CallAdjoint, ir::Type::void_type(), std::move(args), int64_t(s.op), s.loc,
                          s.op == ir::Op::Call ? uint64_t(s.builtin()) : field ? uint64_t(s.field()) : 0);
  call.outs = std::move(outs);
  if (!strong_zero) {
    out.stmts.push_back(std::move(call));
    return;
  }
  ir::Stmt sz = b_.make(ir::Op::StrongZero, ir::Type::void_type(), {adj_ret}, 0, s.loc);
  sz.regions[0].stmts.push_back(std::move(call));
  out.stmts.push_back(std::move(sz));
}

void ReverseBuilder::call_function_adjoint(const ir::Stmt& s, ir::Block& out) {
  std::vector<ir::ValueId> args;
  std::vector<int64_t> outs;
  for (ir::ValueId a : s.args) {
    args.push_back(val(a));
    outs.push_back(adj_or_none(a));
  }
  if (!s.type.is_void()) args.push_back(val(s.result));
  for (ir::ValueId a : s.args)
    if (in_.type_of(a).is_array() && in_.type_of(a).is_differentiable()) args.push_back(adjoint_array(out, a, s.loc));
  if (!s.type.is_void() && facts_.differentiable(s.result)) args.push_back(b_.load(out, adj_of(s.result), s.loc));
  ir::Stmt call = b_.make(ir::Op::CallAdjoint, ir::Type::void_type(), std::move(args), int64_t(ir::Op::CallFunc), s.loc,
                          uint64_t(s.callee()));
  call.outs = std::move(outs);
  out.stmts.push_back(std::move(call));
}

ir::ValueId ReverseBuilder::adjoint_array(ir::Block& out, ir::ValueId array, const ir::SourceLoc& loc) {
  auto param = adj_array_.find(array);
  if (param != adj_array_.end()) return param->second;
  if (facts_.has_adj_array(array)) return b_.add(out, ir::Op::GradView, in_.type_of(array), {val(array)}, 0, loc);
  return zero(out, in_.type_of(array), loc);  // (an array over an address: the emitter's T{})
}

ir::ValueId ReverseBuilder::index_constant(ir::Block& out, int i, const ir::SourceLoc& loc) {
  return b_.add(out, ir::Op::Const, ir::Type::scalar_of(ir::Scalar::I32), {}, 0, loc, uint64_t(int64_t(i)));
}

ir::ValueId ReverseBuilder::component(ir::Block& out, ir::ValueId adj, const ir::Type& t, size_t i, const ir::SourceLoc& loc) {
  std::vector<ir::ValueId> args{adj};
  switch (t.shape) {
    case ir::Shape::Vector: case ir::Shape::Quat: case ir::Shape::Transform:
      args.push_back(index_constant(out, int(i), loc));
      break;
    case ir::Shape::Matrix:
      args.push_back(index_constant(out, int(i) / t.cols, loc));
      args.push_back(index_constant(out, int(i) % t.cols, loc));
      break;
    case ir::Shape::Struct:  // the field (imm)
      return b_.add(out, ir::Op::Extract, ir::struct_info(t.struct_id).fields.at(i).type, std::move(args), int64_t(i), loc);
    case ir::Shape::Void: case ir::Shape::Scalar:
      KJIT_CHECK(false, "the reverse transform reached the components of a " + t.str());
      break;
  }
  return b_.add(out, ir::Op::Extract, ir::Type::scalar_of(t.scalar), std::move(args), 0, loc);
}

void ReverseBuilder::reverse(const ir::Stmt& s, ir::Block& out) {
  const ir::SourceLoc& loc = s.loc;
  switch (s.op) {
    case ir::Op::Call: {
      std::vector<int64_t> outs;
      for (ir::ValueId a : s.args) outs.push_back(adj_or_none(a));
      // Strong zero: as the reverse rules (user structs come from no builtin; linear rules
      // have no partial that could be inf).
      const bool linear = builtin_codegen(s.builtin()).adjoint_linear;
      call_adjoint(s, out, std::move(outs), s.type.shape != ir::Shape::Struct && !linear);
      return;
    }
    case ir::Op::Cast:
      call_adjoint(s, out, {adj_of(s.args[0])}, false);
      return;
    case ir::Op::Construct: {
      const ir::ValueId adj = b_.load(out, adj_of(s.result), loc);
      for (size_t i = 0; i < s.args.size(); ++i) {
        if (!facts_.differentiable(s.args[i])) continue;
        b_.add(out, ir::Op::AccumVar, ir::Type::void_type(), {component(out, adj, s.type, i, loc)}, adj_of(s.args[i]), loc);
      }
      return;
    }
    case ir::Op::Extract: case ir::Op::Insert: {  // into the whole's adjoint, and an Insert's part's
      if (s.op == ir::Op::Insert && s.type.shape == ir::Shape::Struct) return reverse_struct_insert(s, out);
      std::vector<int64_t> outs(s.args.size(), -1);
      outs[0] = adj_of(s.args[0]);
      if (s.op == ir::Op::Insert) outs[1] = adj_of(s.args[1]);
      call_adjoint(s, out, std::move(outs), false);
      return;
    }
    case ir::Op::LoadVar:
      b_.add(out, ir::Op::AccumVar, ir::Type::void_type(), {b_.load(out, adj_of(s.result), loc)},
             adj_var_of_var_.at(s.var()), loc);
      return;
    case ir::Op::StoreVar: case ir::Op::DeclVar: {
      const int64_t adj_var = adj_var_of_var_.at(s.var());
      if (s.op == ir::Op::StoreVar)
        b_.add(out, ir::Op::AccumVar, ir::Type::void_type(), {b_.load(out, adj_var, loc)}, adj_of(s.args[0]), loc);
      b_.store(out, adj_var, zero(out, out_.vars.at(size_t(adj_var)).type, loc), loc);
      return;
    }
    case ir::Op::ArrayLoad: {
      std::vector<ir::ValueId> args{adjoint_array(out, s.args[0], loc)};
      for (size_t i = 1; i < s.args.size(); ++i) args.push_back(val(s.args[i]));
      args.push_back(b_.load(out, adj_of(s.result), loc));
      b_.add(out, ir::Op::AdjArrayAdd, ir::Type::void_type(), std::move(args), 0, loc, owned_(s.args[0]) ? 1 : 0);
      return;
    }
    case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: {
      const bool add = s.op == ir::Op::ArrayStore || s.atomic_op() == ir::AtomicOp::Add || s.atomic_op() == ir::AtomicOp::Sub;
      if (!add) return reverse_atomic_select(s, out);
      const bool sub = s.op == ir::Op::ArrayAtomic && s.atomic_op() == ir::AtomicOp::Sub;
      std::vector<ir::ValueId> args{adjoint_array(out, s.args[0], loc)};
      for (size_t i = 1; i + 1 < s.args.size(); ++i) args.push_back(val(s.args[i]));
      b_.add(out, ir::Op::AdjArrayRead, ir::Type::void_type(), std::move(args), adj_of(s.args.back()), loc, sub ? 1 : 0);
      return;
    }
    case ir::Op::If:
      reverse_if(s, out);
      return;
    case ir::Op::CallFunc:
      call_function_adjoint(s, out);
      return;
    case ir::Op::For: case ir::Op::While:
      reverse_loop(s, out);
      return;
    case ir::Op::Print:
      reverse_print(s, out);
      return;
    case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
    case ir::Op::ArrayShape:
    case ir::Op::Break: case ir::Op::Continue:
    case ir::Op::Return: case ir::Op::GradFunc: case ir::Op::TangentCall: case ir::Op::AccumVar:
    case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd: case ir::Op::AdjArrayRead:
    case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
      break;  // no work (has_work)
  }
  KJIT_CHECK(false, std::string("the reverse transform has no rule for ") + ir::op_name(s.op));
}

std::string reverse_transform_gap(const ir::Function& fn) {
  std::string gap;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (!gap.empty()) return;
    auto note = [&](const std::string& what) { gap = what + " at " + s.loc.short_str(); };
    switch (s.op) {
      case ir::Op::GradFunc: return note("a gradient (refused by adjoint_obstacle)");
      case ir::Op::TangentCall: return note("a tangent");
      case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return: return note("a jump");
      case ir::Op::If: case ir::Op::CallFunc: case ir::Op::For: case ir::Op::While:
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim: case ir::Op::Call:
      case ir::Op::Cast: case ir::Op::Construct: case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar:
      case ir::Op::ArrayLoad: case ir::Op::ArrayStore: case ir::Op::ArrayShape: case ir::Op::ArrayAtomic:
      case ir::Op::Extract: case ir::Op::Insert: case ir::Op::Print:
        return;
      case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
      case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
        return note("an adjoint already");
    }
  });
  return gap;
}

ir::Function reverse_transform(const ir::Function& fn, const AdjointLoops& loops) {
  const std::string gap = reverse_transform_gap(fn);
  KJIT_CHECK(gap.empty(), "the reverse transform does not cover " + fn.name + " yet: " + gap);
  return ReverseBuilder(fn, loops).run();
}

}  // namespace kjit::codegen
