// The reverse transform (reverse_transform.hpp): a loop-free kernel's adjoint as IR.
#include "reverse_transform.hpp"

#include <map>
#include <vector>

#include "builtin_codegen.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/builder.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/ir/type.hpp"
#include "own_index.hpp"

namespace kjit::codegen {

namespace {

/// A value with an adjoint: not an array (arrays have adjoint arrays), of a floating kind.
bool differentiable(const ir::Function& fn, ir::ValueId v) {
  const ir::Type& t = fn.type_of(v);
  return !t.is_array() && t.is_differentiable();
}

/// The array parameter each Param value of `fn` is.
std::map<ir::ValueId, size_t> param_values(const ir::Function& fn) {
  std::map<ir::ValueId, size_t> out;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param) out[s.result] = s.param();
  });
  return out;
}

class ReverseTransform {
 public:
  explicit ReverseTransform(const ir::Function& in) : in_(in), b_(out_), params_(param_values(in)), owned_(in) {}

  ir::Function run() {
    out_.name = in_.name + ".adjoint";
    out_.params = in_.params;
    for (const ir::Param& p : in_.params) out_.params.push_back(ir::Param{"adj_" + p.name, p.type});
    out_.vars = in_.vars;
    out_.values = in_.values;
    out_.strings = in_.strings;
    out_.launch_ndim = in_.launch_ndim;
    out_.loc = in_.loc;
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
      if (differentiable(in_, value)) declare_adjoint(body, value, in_.loc);
    for (const ir::Stmt& s : in_.body.stmts) replay(s, body);
    const std::vector<std::vector<ir::ValueId>> touches = first_touches();
    for (size_t i = in_.body.stmts.size(); i-- > 0;) {
      const ir::Stmt& s = in_.body.stmts[i];
      for (ir::ValueId id : touches[i]) declare_adjoint(body, id, s.loc);
      reverse(s, body);
    }
    // Hand the value parameters' adjoints back: the entry point sums them over the launch.
    for (const auto& [value, index] : params_) {
      if (!differentiable(in_, value)) continue;
      ir::ValueId adj = b_.load(body, adj_of(value), in_.loc);
      const ir::Type sum = ir::adjoint_sum_type(in_.type_of(value));
      if (sum != in_.type_of(value)) adj = b_.add(body, ir::Op::Cast, sum, {adj}, 0, in_.loc);
      b_.add(body, ir::Op::AccumParam, ir::Type::void_type(), {adj}, int64_t(index), in_.loc);
    }
    return std::move(out_);  // verified by the pass list, as every pass's IR
  }

 private:
  int64_t new_var(const ir::Type& t, const ir::SourceLoc& loc) {
    out_.vars.push_back(ir::LocalVar{t, loc});
    return int64_t(out_.vars.size() - 1);
  }

  /// Declares `var` and sets it to zero.
  int64_t declare_zero(ir::Block& b, int64_t var, const ir::SourceLoc& loc) {
    b_.add(b, ir::Op::DeclVar, ir::Type::void_type(), {}, var, loc);
    b_.store(b, var, zero(b, out_.vars.at(size_t(var)).type, loc), loc);
    return var;
  }

  /// The zero of `t`: a value built from nothing, T{} in C++ (as the emitter zeroes adjoints
  /// and variables; a half's, an array's too).
  ir::ValueId zero(ir::Block& b, const ir::Type& t, const ir::SourceLoc& loc) {
    return b_.add(b, ir::Op::Construct, t, {}, 0, loc);
  }

  /// The adjoint variable of `id`, zero, unless it has one.
  void declare_adjoint(ir::Block& b, ir::ValueId id, const ir::SourceLoc& loc) {
    if (!differentiable(in_, id) || adj_.count(id)) return;
    adj_[id] = declare_zero(b, new_var(in_.type_of(id), loc), loc);
  }

  int64_t adj_of(ir::ValueId id) const {
    auto it = adj_.find(id);
    KJIT_CHECK(it != adj_.end(), "the reverse transform reached %" + std::to_string(id) + " before its adjoint");
    return it->second;
  }
  int64_t adj_or_none(ir::ValueId id) const { return differentiable(in_, id) ? adj_of(id) : -1; }

  /// For each top-level statement, the values defined there whose adjoints the sweep first
  /// touches when it reverses it: the last statement that defines or reads them (the
  /// emitter's first_touches, for a body without regions). Parameters' are declared first.
  std::vector<std::vector<ir::ValueId>> first_touches() const {
    std::map<ir::ValueId, size_t> last;
    const std::vector<ir::Stmt>& stmts = in_.body.stmts;
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (stmts[i].result != ir::kNoValue) last[stmts[i].result] = i;
      for (ir::ValueId a : stmts[i].args) last[a] = i;
    }
    std::vector<std::vector<ir::ValueId>> at(stmts.size());
    for (const auto& [id, i] : last)
      if (!params_.count(id)) at[i].push_back(id);
    return at;
  }

  /// The forward statement without its effects (the forward launch did those).
  void replay(const ir::Stmt& s, ir::Block& out) {
    switch (s.op) {
      case ir::Op::DeclVar:  // declared above
      case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::Print:
        return;
      case ir::Op::Call:
        if (!s.type.is_void()) out.stmts.push_back(s);  // a void builtin is a side effect
        return;
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
      case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert:
      case ir::Op::LoadVar: case ir::Op::StoreVar: case ir::Op::ArrayLoad: case ir::Op::ArrayShape:
        out.stmts.push_back(s);
        return;
      case ir::Op::If: case ir::Op::For: case ir::Op::While: case ir::Op::Break: case ir::Op::Continue:
      case ir::Op::Return: case ir::Op::CallFunc: case ir::Op::GradFunc: case ir::Op::TangentCall: case ir::Op::AccumVar:
      case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd: case ir::Op::AdjArrayRead:
      case ir::Op::AccumParam:
        break;
    }
    KJIT_CHECK(false, std::string("the reverse transform has no replay of ") + ir::op_name(s.op));
  }

  /// A call of an adjoint rule that adds into `outs` (one per operand of `s`, -1 for none).
  void call_adjoint(const ir::Stmt& s, ir::Block& out, std::vector<int64_t> outs, bool strong_zero) {
    const ir::ValueId adj_ret = b_.load(out, adj_of(s.result), s.loc);
    std::vector<ir::ValueId> args = s.args;
    args.push_back(s.result);
    args.push_back(adj_ret);
    ir::Stmt call = b_.make(ir::Op::CallAdjoint, ir::Type::void_type(), std::move(args), int64_t(s.op), s.loc,
                            s.op == ir::Op::Call ? uint64_t(s.builtin()) : 0);
    call.outs = std::move(outs);
    if (!strong_zero) {
      out.stmts.push_back(std::move(call));
      return;
    }
    ir::Stmt sz = b_.make(ir::Op::StrongZero, ir::Type::void_type(), {adj_ret}, 0, s.loc);
    sz.regions[0].stmts.push_back(std::move(call));
    out.stmts.push_back(std::move(sz));
  }

  ir::ValueId index_constant(ir::Block& out, int i, const ir::SourceLoc& loc) {
    return b_.add(out, ir::Op::Const, ir::Type::scalar_of(ir::Scalar::I32), {}, 0, loc, uint64_t(int64_t(i)));
  }

  /// Component `i` of `adj`, the adjoint of a Construct of type `t`: what its operand `i`'s
  /// adjoint gains.
  ir::ValueId component(ir::Block& out, ir::ValueId adj, const ir::Type& t, size_t i, const ir::SourceLoc& loc) {
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

  /// The statement's reverse rule (the reverse rules' scalar form, as IR).
  void reverse(const ir::Stmt& s, ir::Block& out) {
    const ir::SourceLoc& loc = s.loc;
    switch (s.op) {
      case ir::Op::Call: {
        if (s.type.is_void()) break;
        const BuiltinCodegen& g = builtin_codegen(s.builtin());
        if (!g.adjoint || !ir::builtin_info(s.builtin()).differentiable || !differentiable(in_, s.result)) break;
        std::vector<int64_t> outs;
        for (ir::ValueId a : s.args) outs.push_back(adj_or_none(a));
        // Strong zero: as the reverse rules (user structs come from no builtin; linear rules
        // have no partial that could be inf).
        call_adjoint(s, out, std::move(outs), s.type.shape != ir::Shape::Struct && !g.adjoint_linear);
        break;
      }
      case ir::Op::Cast:
        if (differentiable(in_, s.result) && differentiable(in_, s.args[0])) call_adjoint(s, out, {adj_of(s.args[0])}, false);
        break;
      case ir::Op::Construct: {
        if (s.args.empty() || !differentiable(in_, s.result)) break;
        const ir::ValueId adj = b_.load(out, adj_of(s.result), loc);
        for (size_t i = 0; i < s.args.size(); ++i) {
          if (!differentiable(in_, s.args[i])) continue;
          b_.add(out, ir::Op::AccumVar, ir::Type::void_type(), {component(out, adj, s.type, i, loc)}, adj_of(s.args[i]), loc);
        }
        break;
      }
      case ir::Op::Extract:
        if (differentiable(in_, s.result) && differentiable(in_, s.args[0])) {
          std::vector<int64_t> outs(s.args.size(), -1);
          outs[0] = adj_of(s.args[0]);
          call_adjoint(s, out, std::move(outs), false);
        }
        break;
      case ir::Op::Insert:
        if (differentiable(in_, s.result)) {
          std::vector<int64_t> outs(s.args.size(), -1);
          outs[0] = adj_of(s.args[0]);
          outs[1] = adj_of(s.args[1]);
          call_adjoint(s, out, std::move(outs), false);
        }
        break;
      case ir::Op::LoadVar:
        if (adj_var_of_var_.count(s.var()))
          b_.add(out, ir::Op::AccumVar, ir::Type::void_type(), {b_.load(out, adj_of(s.result), loc)},
                 adj_var_of_var_.at(s.var()), loc);
        break;
      case ir::Op::StoreVar:
        if (adj_var_of_var_.count(s.var())) {
          const int64_t adj_var = adj_var_of_var_.at(s.var());
          b_.add(out, ir::Op::AccumVar, ir::Type::void_type(), {b_.load(out, adj_var, loc)}, adj_of(s.args[0]), loc);
          b_.store(out, adj_var, zero(out, out_.vars.at(size_t(adj_var)).type, loc), loc);
        }
        break;
      case ir::Op::DeclVar:
        if (adj_var_of_var_.count(s.var())) {
          const int64_t adj_var = adj_var_of_var_.at(s.var());
          b_.store(out, adj_var, zero(out, out_.vars.at(size_t(adj_var)).type, loc), loc);
        }
        break;
      case ir::Op::ArrayLoad: {
        if (!differentiable(in_, s.result) || !adj_array_.count(s.args[0])) break;
        std::vector<ir::ValueId> args{adj_array_.at(s.args[0])};
        args.insert(args.end(), s.args.begin() + 1, s.args.end());
        args.push_back(b_.load(out, adj_of(s.result), loc));
        b_.add(out, ir::Op::AdjArrayAdd, ir::Type::void_type(), std::move(args), 0, loc, owned_(s.args[0]) ? 1 : 0);
        break;
      }
      case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: {
        const ir::ValueId value = s.args.back();
        if (!differentiable(in_, value) || !adj_array_.count(s.args[0])) break;
        const bool sub = s.op == ir::Op::ArrayAtomic && s.atomic_op() == ir::AtomicOp::Sub;
        std::vector<ir::ValueId> args(s.args.begin(), s.args.end() - 1);
        args[0] = adj_array_.at(s.args[0]);
        b_.add(out, ir::Op::AdjArrayRead, ir::Type::void_type(), std::move(args), adj_of(value), loc, sub ? 1 : 0);
        break;
      }
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
      case ir::Op::ArrayShape: case ir::Op::Print:  // (print() of values is a gap)
        break;  // no derivative flows through constants, parameters' values, indices, shapes
      case ir::Op::If: case ir::Op::For: case ir::Op::While: case ir::Op::Break: case ir::Op::Continue:
      case ir::Op::Return: case ir::Op::CallFunc: case ir::Op::GradFunc: case ir::Op::TangentCall: case ir::Op::AccumVar:
      case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd: case ir::Op::AdjArrayRead:
      case ir::Op::AccumParam:
        KJIT_CHECK(false, std::string("the reverse transform has no rule for ") + ir::op_name(s.op));
        break;
    }
  }

  const ir::Function& in_;
  ir::Function out_;
  ir::Builder b_;
  const std::map<ir::ValueId, size_t> params_;   ///< Param values and their parameter index
  OwnedArrays owned_;
  std::map<ir::ValueId, ir::ValueId> adj_array_;  ///< array parameter -> its adjoint array
  std::map<ir::ValueId, int64_t> adj_;            ///< value -> its adjoint variable
  std::map<int64_t, int64_t> adj_var_of_var_;     ///< variable -> its adjoint variable
};

}  // namespace

std::string reverse_transform_gap(const ir::Function& fn) {
  if (fn.is_function) return "a device function";
  const std::map<ir::ValueId, size_t> params = param_values(fn);
  std::string gap;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (!gap.empty()) return;
    auto note = [&](const std::string& what) { gap = what + " at " + s.loc.short_str(); };
    const bool array_access = s.op == ir::Op::ArrayLoad || s.op == ir::Op::ArrayStore || s.op == ir::Op::ArrayAtomic;
    if (array_access && fn.type_of(s.args[0]).is_differentiable() && !params.count(s.args[0]))
      return note("an array that is no parameter");
    switch (s.op) {
      case ir::Op::If: case ir::Op::For: case ir::Op::While: return note("control flow");
      case ir::Op::CallFunc: return note("a device function call");
      case ir::Op::GradFunc: return note("a gradient (refused by adjoint_obstacle)");
      case ir::Op::Print: if (s.prints_values()) note("print() of values"); return;
      case ir::Op::Extract: case ir::Op::Insert:
        if (fn.type_of(s.args[0]).shape == ir::Shape::Struct) note("a struct's field");
        return;
      case ir::Op::ArrayAtomic:
        if (s.atomic_op() != ir::AtomicOp::Add && s.atomic_op() != ir::AtomicOp::Sub && differentiable(fn, s.args.back()))
          note(std::string("atomic_") + ir::atomic_op_name(s.atomic_op()));
        return;
      case ir::Op::TangentCall: return note("a tangent");
      case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return: return note("a jump");
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim: case ir::Op::Call:
      case ir::Op::Cast: case ir::Op::Construct: case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar:
      case ir::Op::ArrayLoad: case ir::Op::ArrayStore: case ir::Op::ArrayShape:
        return;
      case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
      case ir::Op::AdjArrayRead: case ir::Op::AccumParam:
        return note("an adjoint already");
    }
  });
  return gap;
}

ir::Function reverse_transform(const ir::Function& fn) {
  const std::string gap = reverse_transform_gap(fn);
  KJIT_CHECK(gap.empty(), "the reverse transform does not cover " + fn.name + " yet: " + gap);
  return ReverseTransform(fn).run();
}

}  // namespace kjit::codegen
