// The reverse transform's loops (reverse_builder.hpp): each loop replayed with the adjoint
// emitter's checkpoints (Checkpoint), and swept back segment by segment (ReverseSegments), each
// iteration replayed again from its recorded state and swept back, as the emitter writes it.
#include "kjit/error.hpp"
#include "reverse_builder.hpp"

namespace kjit::codegen {

ir::Stmt ReverseBuilder::replica(const ir::Stmt& s, const Replica* copy) {
  if (!copy) return s.regions.empty() ? s : ir::Builder::shell(s);
  ir::Stmt c = ir::Builder::shell(s);
  auto value = [&](ir::ValueId id) {
    auto it = copy->values.find(id);
    return it != copy->values.end() ? it->second : val(id);
  };
  for (ir::ValueId& a : c.args) a = value(a);
  if (c.result != ir::kNoValue) c.result = copy->values.at(c.result);
  for (ir::Block& r : c.regions) {
    for (ir::ValueId& a : r.args) a = copy->values.at(a);
    if (r.yield != ir::kNoValue) r.yield = value(r.yield);
  }
  return c;
}

void ReverseBuilder::fresh_values(const ir::Block& b, std::map<ir::ValueId, ir::ValueId>& out) {
  for (const ir::Stmt& s : b.stmts) {
    if (s.result != ir::kNoValue) out[s.result] = out_.new_value(in_.type_of(s.result));
    for (const ir::Block& r : s.regions) {
      for (ir::ValueId a : r.args) out[a] = out_.new_value(in_.type_of(a));
      fresh_values(r, out);
    }
  }
}

ir::Stmt ReverseBuilder::checkpoint(size_t index, ir::CheckpointPart part, const ir::SourceLoc& loc) {
  ir::Stmt c = b_.make(ir::Op::Checkpoint, ir::Type::void_type(), {}, int64_t(index), loc, uint64_t(part));
  c.outs.push_back(overflow_);
  for (int64_t var : loops_.list[index].state) c.outs.push_back(var);
  return c;
}

void ReverseBuilder::declare_loops(ir::Block& body) {
  if (loops_.list.empty()) return;
  overflow_ = new_var(ir::Type::scalar_of(ir::Scalar::Bool), in_.loc);
  b_.add(body, ir::Op::DeclVar, ir::Type::void_type(), {}, overflow_, in_.loc);
  b_.store(body, overflow_, b_.constant_bool(body, false, in_.loc), in_.loc);
  for (size_t index = 0; index < loops_.list.size(); ++index) {
    const AdjointLoop& L = loops_.list[index];
    body.stmts.push_back(checkpoint(index, ir::CheckpointPart::Declare, L.stmt->loc));
    for (int64_t var : L.readonly) {
      const int64_t copy = readonly_[{index, var}] = new_var(in_.vars.at(size_t(var)).type, L.stmt->loc);
      b_.add(body, ir::Op::DeclVar, ir::Type::void_type(), {}, copy, L.stmt->loc);
    }
  }
}

void ReverseBuilder::replay_loop(const ir::Stmt& s, ir::Block& out, const Replica* copy) {
  const size_t index = loops_.index.at(&s);
  for (int64_t var : loops_.list[index].readonly) b_.store(out, readonly_.at({index, var}), b_.load(out, var, s.loc), s.loc);
  out.stmts.push_back(checkpoint(index, ir::CheckpointPart::Start, s.loc));
  ir::Stmt c = replica(s, copy);
  if (s.op == ir::Op::While) replay(s.regions[0], c.regions[0], copy);
  ir::Block& body = c.regions[s.op == ir::Op::For ? 0 : 1];
  body.stmts.push_back(checkpoint(index, ir::CheckpointPart::Step, s.loc));
  replay(loop_body(s), body, copy);
  out.stmts.push_back(std::move(c));
}

ReverseBuilder::Replica ReverseBuilder::iteration(const ir::Stmt& s, ir::Block& region, bool keep) {
  Replica copy;
  copy.keep = keep;
  region.args.push_back(out_.new_value(ir::Type::scalar_of(ir::Scalar::I32)));
  fresh_values(loop_body(s), copy.values);
  if (s.op == ir::Op::For) {
    const ir::Type i32 = ir::Type::scalar_of(ir::Scalar::I32);
    const ir::ValueId steps = b_.call(region, ir::Builtin::Mul, i32, {region.args[0], val(s.args[2])}, s.loc);
    copy.values[s.regions[0].args.at(0)] = b_.call(region, ir::Builtin::Add, i32, {val(s.args[0]), steps}, s.loc);
  }
  return copy;
}

void ReverseBuilder::reverse_loop(const ir::Stmt& s, ir::Block& out) {
  const size_t index = loops_.index.at(&s);
  const AdjointLoop& L = loops_.list[index];
  for (int64_t var : L.readonly) b_.store(out, var, b_.load(out, readonly_.at({index, var}), s.loc), s.loc);
  ir::Stmt segments = b_.make(ir::Op::ReverseSegments, ir::Type::void_type(), {}, int64_t(index), s.loc);
  segments.outs = L.state;
  const ir::Block& body = loop_body(s);
  ir::Block& back = segments.regions[1];
  const Replica copy = iteration(s, back, true);
  scopes_.push_back(Scope{&body, {}, {}, &copy.values});
  ir::Block sweep;
  reverse(body, sweep);
  scopes_.pop_back();
  replay(body, back, &copy);
  for (ir::Stmt& t : sweep.stmts) back.stmts.push_back(std::move(t));
  ir::Block& record = segments.regions[0];
  const Replica recorded = iteration(s, record, false);
  if (!L.state.empty()) replay(body, record, &recorded);  // (without state, no segment is recorded)
  out.stmts.push_back(std::move(segments));
}

}  // namespace kjit::codegen
