// Reverse rules of IR statements: which adjoints each statement's adjoint adds to, and how.
#include "reverse_rules.hpp"

#include "adjoint_emitter.hpp"
#include "builtin_codegen.hpp"
#include "kjit/error.hpp"

namespace kjit::codegen {

namespace {
RuleStep step(RuleStep::Kind kind, AdjTarget out, std::string text = "") {
  return RuleStep{kind, {out}, {std::move(text)}};
}
AdjTarget value_target(ir::ValueId v) { return AdjTarget{false, int64_t(v)}; }
AdjTarget var_target(int64_t var) { return AdjTarget{true, var}; }
}  // namespace

std::string adj_name(const Names& n, const AdjTarget& t) {
  return t.var ? n.adj_var(t.id) : n.adj_value(ir::ValueId(t.id));
}

AdjointFacts::AdjointFacts(const ir::Function& fn) : fn_(fn) {
  ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param) param_of_[s.result] = s.param();
    if (s.op == ir::Op::Extract && s.type.is_array() && s.type.is_differentiable()) field_arrays_.insert(s.result);
  });
}

bool AdjointFacts::has_rule(const ir::Stmt& s) const {
  switch (s.op) {
    case ir::Op::Call: {
      const BuiltinCodegen& g = builtin_codegen(s.builtin());
      return g.adjoint && ir::builtin_info(s.builtin()).differentiable && differentiable(s.result);
    }
    case ir::Op::Cast: return differentiable(s.result) && differentiable(s.args[0]);
    case ir::Op::Construct:
      if (!differentiable(s.result)) return false;
      for (ir::ValueId a : s.args)
        if (differentiable(a)) return true;
      return false;
    case ir::Op::Extract:  // a struct's field flows back into the struct's adjoint
      return differentiable(s.result) &&
             (fn_.type_of(s.args[0]).shape == ir::Shape::Struct || differentiable(s.args[0]));
    case ir::Op::Insert: return differentiable(s.result);
    case ir::Op::LoadVar: case ir::Op::StoreVar: case ir::Op::DeclVar: return var_differentiable(s.var());
    case ir::Op::ArrayLoad: return differentiable(s.result) && has_adj_array(s.args[0]);
    case ir::Op::ArrayStore: case ir::Op::ArrayAtomic:
      return differentiable(s.args.back()) && has_adj_array(s.args[0]);
    case ir::Op::Print: return s.prints_values();
    case ir::Op::CallFunc: return function_has_adjoint(*fn_.callees.at(s.callee()));
    case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
    case ir::Op::ArrayShape:  // no derivative flows through constants, parameters' values, indices, shapes
    case ir::Op::If: case ir::Op::For: case ir::Op::While:  // their regions are reversed
      return false;
    case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return: case ir::Op::TangentCall: case ir::Op::GradFunc:
    case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
    case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
      return true;  // none can be reversed: rule() says which and why
  }
  return false;
}

ReverseRules::ReverseRules(const ir::Function& fn, const Names& names, ExprEmitter& ex)
    : AdjointFacts(fn), names_(names), ex_(ex), owned_(fn) {}

std::string ReverseRules::adj_array(ir::ValueId array) const {
  auto p = param_of_.find(array);
  if (p != param_of_.end()) return names_.adj_param(p->second);
  KJIT_CHECK(field_arrays_.count(array), "an array without an adjoint array");
  return grad_view(names_.value(array));
}

bool AdjointFacts::differentiable(ir::ValueId v) const {
  const ir::Type& t = fn_.type_of(v);
  return !t.is_array() && t.is_differentiable();
}

bool AdjointFacts::var_differentiable(int64_t var) const {
  return fn_.vars.at(size_t(var)).type.is_differentiable();
}

std::string ReverseRules::component(const std::string& value, const ir::Type& t, int i) const {
  switch (t.shape) {
    case ir::Shape::Vector: return value + ".c[" + std::to_string(i) + "]";
    case ir::Shape::Matrix:
      return value + ".c[" + std::to_string(i / t.cols) + "][" + std::to_string(i % t.cols) + "]";
    case ir::Shape::Quat:
    case ir::Shape::Transform: return "kj::extract(" + value + ", " + std::to_string(i) + ")";
    case ir::Shape::Struct: return value + "." + field_name(t, i);
    case ir::Shape::Void:
    case ir::Shape::Scalar: break;  // no components
  }
  KJIT_CHECK(false, "adjoint of constructing a " + t.str() + " is not implemented");
  return "";
}

ReverseRule ReverseRules::rule(const ir::Stmt& s) {
  ReverseRule r;
  if (!has_rule(s)) return r;
  auto v = [&](ir::ValueId id) { return names_.value(id); };
  auto adj = [&](ir::ValueId id) { return names_.adj_value(id); };
  // An element access's indices, operands 1..count of `s`: ", i, j" (the array is operand 0).
  auto indices = [&](size_t count) {
    std::string out;
    for (size_t i = 1; i <= count; ++i) out += ", " + v(s.args[i]);
    return out;
  };
  using K = RuleStep::Kind;
  switch (s.op) {
    case ir::Op::Call: {
      const BuiltinCodegen& g = builtin_codegen(s.builtin());
      RuleStep c{K::Call, {}, {rule_by_reference(g.adjoint) + "("}};
      for (ir::ValueId a : s.args) c.text.back() += v(a) + ", ";
      c.text.back() += v(s.result);
      for (ir::ValueId a : s.args)
        if (differentiable(a)) {
          c.text.back() += ", ";
          c.outs.push_back(value_target(a));
          c.text.push_back("");
        }
      c.text.back() += ", " + adj(s.result) + ")";
      r.steps.push_back(std::move(c));
      // Strong zero: an exactly zero incoming adjoint contributes nothing, even through an
      // inf or NaN partial (a dead, overflowing intermediate would otherwise turn 0 * inf
      // into NaN in the adjoints of live inputs). User structs come from no builtin; linear
      // rules have no partial that could be inf.
      if (s.type.shape != ir::Shape::Struct && !g.adjoint_linear) r.nonzero = adj(s.result);
      break;
    }
    case ir::Op::Cast:
      r.steps.push_back({K::Call, {value_target(s.args[0])},
                         {"kj::adj_cast(" + v(s.args[0]) + ", " + v(s.result) + ", ", ", " + adj(s.result) + ")"}});
      break;
    case ir::Op::Construct:
      for (size_t i = 0; i < s.args.size(); ++i)
        if (differentiable(s.args[i]))
          r.steps.push_back(step(K::Add, value_target(s.args[i]), component(adj(s.result), s.type, int(i))));
      break;
    case ir::Op::Extract: {
      const ir::Type& whole = fn_.type_of(s.args[0]);
      if (whole.shape == ir::Shape::Struct) {
        r.steps.push_back({K::Call, {value_target(s.args[0])}, {"", field_adjoint_add(whole, s.field(), adj(s.result))}});
        break;
      }
      std::string call = "kj::adj_extract(" + v(s.args[0]);
      for (size_t i = 1; i < s.args.size(); ++i) call += ", " + v(s.args[i]);
      r.steps.push_back({K::Call, {value_target(s.args[0])}, {call + ", " + v(s.result) + ", ", ", " + adj(s.result) + ")"}});
      break;
    }
    case ir::Op::Insert:
      if (s.type.shape == ir::Shape::Struct) {
        const std::string f = field_name(s.type, s.field());
        if (differentiable(s.args[1])) r.steps.push_back(step(K::Add, value_target(s.args[1]), adj(s.result) + "." + f));
        r.steps.push_back({K::Call, {value_target(s.args[0])},
                           {"{ " + s.type.cpp() + " kj_t = " + adj(s.result) + "; kj_t." + f + " = {}; ", " += kj_t; }"}});
      } else {
        std::string call = "kj::adj_insert(" + v(s.args[0]);
        for (size_t i = 2; i < s.args.size(); ++i) call += ", " + v(s.args[i]);
        r.steps.push_back({K::Call, {value_target(s.args[0]), value_target(s.args[1])},
                           {call + ", " + v(s.args[1]) + ", " + v(s.result) + ", ", ", ", ", " + adj(s.result) + ")"}});
      }
      break;
    case ir::Op::LoadVar:
      r.steps.push_back(step(K::Add, var_target(s.var()), adj(s.result)));
      break;
    case ir::Op::StoreVar:
      r.steps.push_back(step(K::Add, value_target(s.args[0]), names_.adj_var(s.var())));
      r.steps.push_back(step(K::Zero, var_target(s.var())));
      break;
    case ir::Op::DeclVar:
      r.steps.push_back(step(K::Zero, var_target(s.var())));
      break;
    case ir::Op::ArrayLoad: {
      const std::string a = adj_array(s.args[0]);
      const std::string elem = "kj::elem(" + a + indices(s.args.size() - 1) + ")";
      r.when = array_present(a);
      const bool own = owned(s.args[0]);
      r.steps.push_back({K::Effect, {}, {ex_.adjoint_add(a, elem, adj(s.result), s.type, own)}});
      if (own) r.comment = ExprEmitter::kOwnAddComment;
      else r.atomic = true;
      break;
    }
    case ir::Op::ArrayStore: {
      ir::ValueId value = s.args.back();
      const std::string a = adj_array(s.args[0]);
      r.when = array_present(a);
      r.steps.push_back(step(K::Add, value_target(value), "kj::elem(" + a + indices(s.args.size() - 2) + ")"));
      break;
    }
    case ir::Op::ArrayAtomic: {
      ir::ValueId value = s.args.back();
      const std::string a = adj_array(s.args[0]);
      const std::string idx = indices(s.args.size() - 2);
      const std::string elem = "kj::elem(" + a + idx + ")";
      r.when = array_present(a);
      switch (s.atomic_op()) {
        case ir::AtomicOp::Add:
          r.steps.push_back(step(K::Add, value_target(value), elem));
          break;
        case ir::AtomicOp::Sub:
          r.steps.push_back(step(K::Sub, value_target(value), elem));
          break;
        case ir::AtomicOp::Min:
        case ir::AtomicOp::Max: {  // one winner per component (see kj::adj_atomic_select)
          auto [before, after] = atomic_select_adjoint(v(s.args[0]), idx, v(value), a);
          r.steps.push_back({K::Call, {value_target(value)}, {std::move(before), std::move(after)}});
          r.atomic = true;
          break;
        }
        case ir::AtomicOp::And: case ir::AtomicOp::Or: case ir::AtomicOp::Xor:  // integers only
        case ir::AtomicOp::Exch: case ir::AtomicOp::Cas:  // refused on floats (adjoint_obstacles)
          KJIT_CHECK(false, std::string("the adjoint reached atomic_") + ir::atomic_op_name(s.atomic_op()) +
                                " on a differentiable value");
          break;
      }
      break;
    }
    case ir::Op::Print:  // print(): the adjoints of the printed values
      r.steps.push_back({K::Effect, {}, {ex_.print(s, true)}});
      break;
    case ir::Op::CallFunc: {
      // The adjoint of a device function (function_adjoint_call): arguments, result, the
      // adjoint of each differentiable argument, adj_ret.
      const ir::Function& f = *fn_.callees.at(s.callee());
      RuleStep c{K::Call, {}, {}};
      std::vector<std::string> operands, adjoints;
      for (ir::ValueId a : s.args) {
        operands.push_back(v(a));
        const ir::Type& t = fn_.type_of(a);
        if (!t.is_differentiable()) continue;
        if (t.is_array()) {
          adjoints.push_back(has_adj_array(a) ? adj_array(a) : t.cpp() + "{}");
        } else {
          adjoints.push_back("");
          c.outs.push_back(value_target(a));
        }
      }
      const bool returns = !s.type.is_void();
      c.text = function_adjoint_call(ex_.function_name(f), operands, returns ? v(s.result) : "", adjoints,
                                     returns && differentiable(s.result) ? adj(s.result) : "");
      r.steps.push_back(std::move(c));
      break;
    }
    case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
    case ir::Op::ArrayShape:
      break;  // no derivative flows through constants, parameters' values, indices, shapes
    case ir::Op::If: case ir::Op::For: case ir::Op::While:  // their regions are reversed
      break;
    case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
      KJIT_CHECK(false, std::string("the adjoint reached an unlowered ") + ir::op_name(s.op));
      break;
    case ir::Op::TangentCall: case ir::Op::GradFunc:
    case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
    case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
      adjoint_cannot_reverse(fn_, s);
  }
  if (r.empty()) return r;
  if (s.op == ir::Op::StoreVar) r.reads.push_back(var_target(s.var()));
  if (s.op == ir::Op::Print)
    for (ir::ValueId a : s.args)
      if (fn_.type_of(a).is_float()) r.reads.push_back(value_target(a));
  if (s.op != ir::Op::ArrayAtomic && s.result != ir::kNoValue && differentiable(s.result)) r.reads.push_back(value_target(s.result));
  return r;
}

bool ReverseWork::runs(const ir::Stmt& s, const ReverseRule& r) const {
  if (r.empty()) return false;
  auto value = [&](ir::ValueId v) { return tracked_(value_target(v)); };
  if (s.op == ir::Op::ArrayAtomic) return r.atomic || value(s.args.back());  // min/max consume the element's adjoint
  if (s.op == ir::Op::ArrayStore) return value(s.args.back());
  if (s.op == ir::Op::StoreVar || s.op == ir::Op::DeclVar) return tracked_(var_target(s.var()));
  if (s.op == ir::Op::Print || s.op == ir::Op::CallFunc) return true;
  return s.result != ir::kNoValue && value(s.result);
}

bool ReverseWork::has_work(const ir::Stmt& s) {
  switch (ir::op_info(s.op).adjoint) {
    case ir::OpAdjoint::None: return false;
    case ir::OpAdjoint::Rule: return runs(s, rules_.rule(s));
    case ir::OpAdjoint::Regions:
      if (s.op == ir::Op::While) return has_work(s.regions[1]);  // its condition is only replayed
      for (const ir::Block& r : s.regions)
        if (has_work(r)) return true;
      return false;
  }
  return false;
}

bool ReverseWork::has_work(const ir::Block& b) {
  auto it = blocks_.find(&b);
  if (it != blocks_.end()) return it->second;
  bool any = false;
  for (const ir::Stmt& s : b.stmts) any = any || has_work(s);
  return blocks_[&b] = any;
}

std::vector<std::vector<ir::ValueId>> first_touches(const ir::Block& b,
                                                    const std::function<bool(ir::ValueId)>& declared_here) {
  std::map<ir::ValueId, size_t> last;
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    auto touch = [&](ir::ValueId id) {
      if (declared_here(id)) last[id] = i;
    };
    const ir::Stmt& top = b.stmts[i];
    if (top.result != ir::kNoValue) touch(top.result);
    for (ir::ValueId a : top.args) touch(a);
    for (const ir::Block& r : top.regions) {
      ir::for_each_stmt(r, [&](const ir::Stmt& s) {
        for (ir::ValueId a : s.args) touch(a);
      });
      if (r.yield != ir::kNoValue) touch(r.yield);
    }
  }
  std::vector<std::vector<ir::ValueId>> at(b.stmts.size());
  for (const auto& [id, i] : last) at[i].push_back(id);
  return at;
}

void write_scalar_rule(SourceWriter& w, const ReverseRule& r, const Names& n, int indent, const ir::SourceLoc& loc) {
  const std::string when = r.when.empty() ? "" : "if (" + r.when + ") ";
  for (const RuleStep& st : r.steps) {
    std::string line;
    switch (st.kind) {
      case RuleStep::Kind::Add: line = adj_name(n, st.outs[0]) + " += " + st.text[0]; break;
      case RuleStep::Kind::Sub: line = adj_name(n, st.outs[0]) + " -= " + st.text[0]; break;
      case RuleStep::Kind::Zero: line = adj_name(n, st.outs[0]) + " = {}"; break;
      case RuleStep::Kind::Effect: line = st.text[0]; break;
      case RuleStep::Kind::Call:
        for (size_t i = 0; i < st.text.size(); ++i) line += st.text[i] + (i < st.outs.size() ? adj_name(n, st.outs[i]) : "");
        break;
    }
    const bool brace = st.kind == RuleStep::Kind::Call && line.back() == '}';  // a block, not a call
    line = when + line + (brace ? "" : ";");
    if (!r.nonzero.empty()) {
      std::vector<std::string> accumulators;
      for (const AdjTarget& t : st.outs) accumulators.push_back(adj_name(n, t));
      line = strong_zero(r.nonzero, accumulators, line);
    }
    w.user_line(line + (st.kind == RuleStep::Kind::Effect ? r.comment : ""), indent, loc);
  }
}

}  // namespace kjit::codegen
