// The uniformity analysis of the cpu's lane functions, and the facts derived from it.
#include "lane_analysis.hpp"

#include <memory>

#include "builtin_codegen.hpp"
#include "kjit/error.hpp"
#include "reverse_rules.hpp"

namespace kjit::codegen {

namespace {
/// The most statements a divergent If may hold to run inside its lane loop (both sides for
/// every lane) rather than as masked loops skipped when no lane takes a side.
constexpr int kFlattenLimit = 24;

bool set(std::vector<bool>& flags, size_t i) {
  if (flags.at(i)) return false;
  flags[i] = true;
  return true;
}
}  // namespace

LaneAnalysis::LaneAnalysis(const ir::Function& lowered, const std::function<bool(const ir::Stmt&)>& may_flatten)
    : fn_(lowered), may_flatten_(may_flatten), varying_(fn_.values.size(), false),
      varying_var_(fn_.vars.size(), false), remat_(fn_.values.size(), false), def_use_(lowered) {
  while (analyze(fn_.body, false)) {
  }
  mark_rematerializable();
  ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
    int budget = kFlattenLimit;
    if (s.op == ir::Op::If && varying(s.args[0]) && flattenable(s, budget)) flat_.insert(&s);
  });
}

bool LaneAnalysis::any_varying(const std::vector<ir::ValueId>& args) const {
  for (ir::ValueId a : args)
    if (varying(a)) return true;
  return false;
}

bool LaneAnalysis::call_needs_guard(const ir::Stmt& call) {
  return call.type.is_void() || builtin_codegen(call.builtin()).takes_site ||
         ir::builtin_info(call.builtin()).category == ir::BuiltinCategory::Random;
}

/// One pass over `b` (`masked`: some lanes may be inactive here). Returns whether anything
/// became varying; run until it returns false.
bool LaneAnalysis::analyze(const ir::Block& b, bool masked) {
  bool changed = false;
  for (const ir::Stmt& s : b.stmts) {
    switch (s.op) {
      case ir::Op::ThreadId: case ir::Op::ArrayLoad: case ir::Op::ArrayAtomic: case ir::Op::CallFunc:
      case ir::Op::GradFunc:
        if (s.result != ir::kNoValue) changed |= set(varying_, s.result);
        break;
      case ir::Op::Const: case ir::Op::Param: case ir::Op::LaunchDim: case ir::Op::DeclVar:
      case ir::Op::ArrayStore: case ir::Op::Print:
        break;
      case ir::Op::Call: case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract:
      case ir::Op::Insert: case ir::Op::ArrayShape: case ir::Op::TangentCall:
        if (s.result != ir::kNoValue && any_varying(s.args)) changed |= set(varying_, s.result);
        break;
      case ir::Op::LoadVar:
        if (varying_var_.at(size_t(s.var()))) changed |= set(varying_, s.result);
        break;
      case ir::Op::StoreVar:
        if (masked || varying(s.args[0])) changed |= set(varying_var_, size_t(s.var()));
        break;
      case ir::Op::If: {
        bool inner = masked || varying(s.args[0]);
        changed |= analyze(s.regions[0], inner);
        changed |= analyze(s.regions[1], inner);
        break;
      }
      case ir::Op::For: {
        bool divergent = any_varying(s.args);
        if (divergent) changed |= set(varying_, s.regions[0].args.at(0));
        changed |= analyze(s.regions[0], masked || divergent);
        break;
      }
      case ir::Op::While: {
        // The condition's uniformity is what this pass is computing: read last pass's.
        bool divergent = varying(s.regions[0].yield);
        changed |= analyze(s.regions[0], masked || divergent);
        changed |= analyze(s.regions[1], masked || divergent);
        break;
      }
      case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
        KJIT_CHECK(false, "lane codegen reached a jump that lower_jumps should have removed");
        break;
      case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
      case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
        KJIT_CHECK(false, std::string("lane analysis reached the reverse transform's ") + ir::op_name(s.op));
        break;
    }
  }
  return changed;
}

void LaneAnalysis::mark_rematerializable() {
  for (size_t v = 0; v < fn_.values.size(); ++v) {
    const ir::Stmt* s = def_use_.def(v);
    if (!s || !varying(ir::ValueId(v))) continue;
    bool ok = false;
    if (s->op == ir::Op::ThreadId) ok = true;
    if (s->op == ir::Op::Cast && s->type.shape == ir::Shape::Scalar && s->type.is_integer()) ok = true;
    if (s->op == ir::Op::Call && s->type.shape == ir::Shape::Scalar && s->type.is_integer()) {
      ir::Builtin b = s->builtin();
      ok = b == ir::Builtin::Add || b == ir::Builtin::Sub || b == ir::Builtin::Mul;
    }
    for (ir::ValueId a : s->args)  // values are defined before use: args are decided
      ok = ok && (!varying(a) || remat_[a]);
    remat_[v] = ok;
  }
}

bool LaneAnalysis::is_uniform_stmt(const ir::Stmt& s) const {
  switch (s.op) {
    case ir::Op::DeclVar: case ir::Op::StoreVar: return !varying_var_.at(size_t(s.var()));
    case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::Print: case ir::Op::CallFunc:
    case ir::Op::GradFunc:
      return false;  // effects run once per lane
    case ir::Op::Call:
      return !s.type.is_void() && !varying(s.result);
    case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
    case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert:
    case ir::Op::LoadVar: case ir::Op::ArrayLoad: case ir::Op::ArrayShape: case ir::Op::TangentCall:
      return !varying(s.result);
    case ir::Op::If: case ir::Op::For: case ir::Op::While: case ir::Op::Break:
    case ir::Op::Continue: case ir::Op::Return:
    case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
    case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:  // effects (not analysed: lanes run no adjoint kernel's IR)
      return false;
  }
  return false;
}

/// Whether If `s` can run inside its lane loop: small, and nothing in it that would stop the
/// loop vectorizing or must be skipped when no lane takes a side (loops, atomics, device
/// functions, prints, checks, random draws). `budget` counts its statements down.
bool LaneAnalysis::flattenable(const ir::Stmt& s, int& budget) const {
  for (const ir::Block& r : s.regions)
    for (const ir::Stmt& inner : r.stmts) {
      if (--budget < 0) return false;
      if (may_flatten_ && !may_flatten_(inner)) return false;
      switch (inner.op) {
        case ir::Op::If:
          if (!varying(inner.args[0]) || !flattenable(inner, budget)) return false;
          break;
        case ir::Op::Call:
          if (call_needs_guard(inner)) return false;
          break;
        case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
        case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert:
        case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar: case ir::Op::ArrayLoad:
        case ir::Op::ArrayStore: case ir::Op::ArrayShape: case ir::Op::TangentCall:
          break;
        case ir::Op::ArrayAtomic: case ir::Op::For: case ir::Op::While: case ir::Op::Break:
        case ir::Op::Continue: case ir::Op::Return: case ir::Op::Print: case ir::Op::CallFunc:
        case ir::Op::GradFunc: case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
        case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
          return false;
      }
    }
  return true;
}

bool LaneAnalysis::needs_guard(const ir::Stmt& s) const {
  switch (s.op) {
    case ir::Op::ArrayLoad: case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::CallFunc:
    case ir::Op::GradFunc: case ir::Op::Print:
      return true;
    case ir::Op::Call:
      return call_needs_guard(s);
    case ir::Op::Extract: case ir::Op::Insert: {  // a component index from the lane's data
      size_t first = s.op == ir::Op::Extract ? 1 : 2;
      for (size_t i = first; i < s.args.size(); ++i)
        if (!def_use_.defined_by(s.args[i], ir::Op::Const)) return true;
      return false;
    }
    case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
    case ir::Op::Cast: case ir::Op::Construct: case ir::Op::DeclVar: case ir::Op::LoadVar:
    case ir::Op::StoreVar: case ir::Op::ArrayShape: case ir::Op::TangentCall: case ir::Op::If: case ir::Op::For:
    case ir::Op::While: case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
      return false;
    case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
    case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:  // effects on adjoints: guarded like the stores they reverse
      return true;
  }
  return false;
}

std::function<bool(const ir::Stmt&)> no_atomic_adjoint(const ir::Function& lowered) {
  auto owned = std::make_shared<std::unique_ptr<OwnedArrays>>();
  return [owned, &lowered](const ir::Stmt& s) {
    if (s.op != ir::Op::ArrayLoad || !lowered.type_of(s.result).is_differentiable()) return true;
    if (!*owned) *owned = std::make_unique<OwnedArrays>(lowered);
    return (**owned)(s.args[0]);
  };
}

}  // namespace kjit::codegen
