// Forward-mode autodiff: the tangent kernel of a kernel, built as IR beside the kernel's own
// statements (see kjit/codegen/tangent.hpp and docs/AUTODIFF.md).
#include <map>
#include <memory>

#include "builtin_codegen.hpp"
#include "derivative_frame.hpp"
#include "kjit/ir/builder.hpp"
#include "kjit/codegen/tangent.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/dead_code.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/ir/verifier.hpp"
#include "tangent_rules.hpp"

namespace kjit::codegen {

std::string tangent_name(const std::string& kernel_name) { return kernel_name + ".tangent"; }
std::string tangent_module_name(const std::string& module) { return module + ".tangent"; }
bool is_tangent_module(const std::string& module) {
  const std::string suffix = ".tangent";
  return module.size() > suffix.size() && module.compare(module.size() - suffix.size(), suffix.size(), suffix) == 0;
}

namespace {

constexpr ir::ValueId kZero = ir::kNoValue;

/// A value that carries a tangent (arrays carry theirs in a tangent array instead; a struct
/// holding floating arrays carries a struct whose fields hold their tangent arrays).
bool differentiable(const ir::Type& t) { return !t.is_array() && ir::carries_tangent(t); }

/// The tangent functions of the device functions a transform reaches, each derived once.
using FunctionTangents = std::map<const ir::Function*, std::shared_ptr<const ir::Function>>;

class TangentTransform {
 public:
  TangentTransform(const ir::Function& in, FunctionTangents& functions) : in_(in), functions_(functions) {}

  ir::Function run() {
    // Plain calls keep their callee's index; unused callees are pruned below.
    out_ = derivative_frame(in_, in_.is_function ? in_.name + ".tangent" : tangent_name(in_.name),
                            [this](const std::string& p) { return tangent_param_name(p); });
    tan_.assign(in_.values.size(), kZero);
    active_.assign(in_.values.size(), false);
    active_var_.assign(in_.vars.size(), false);
    uses_.assign(in_.values.size(), 0);
    ir::for_each_stmt(in_.body, [&](const ir::Stmt& s) {
      for (ir::ValueId a : s.args) ++uses_[a];
      for (const ir::Block& r : s.regions)
        if (r.yield != kZero) ++uses_[r.yield];
    });
    if (in_.body.yield != kZero) ++uses_[in_.body.yield];
    if (in_.custom_tangent) {
      copy_with_user_tangent();
    } else {
      while (analyze(in_.body)) {
      }
      for (size_t v = 0; v < in_.vars.size(); ++v) {
        tvar_.push_back(-1);
        if (!active_var_[v]) continue;
        out_.vars.push_back(in_.vars[v]);
        tvar_.back() = int64_t(out_.vars.size() - 1);
      }
      block(in_.body, out_.body);
      if (in_.body.yield != kZero) out_.body.yield = yield_with_tangent(out_.body, in_.body.yield, t(in_.body.yield));
    }
    prune_callees();
    ir::eliminate_dead_code(out_);
    ir::verify(out_);
    return std::move(out_);
  }

 private:
  // ----- names and errors -------------------------------------------------------------------
  std::string tangent_param_name(const std::string& name) const {
    std::string t = "d_" + name;
    for (bool taken = true; taken;) {
      taken = false;
      for (const ir::Param& p : in_.params) taken = taken || p.name == t;
      if (taken) t += "_";
    }
    return t;
  }

  [[noreturn]] void refuse(const ir::Stmt& s, const std::string& why) const {
    throw Error(ErrorKind::User, std::string(in_.is_function ? "device function '" : "kernel '") + in_.name +
                                     "' at " + s.loc.str() + ": " + why);
  }

  std::string array_name(ir::ValueId array) const {
    auto p = param_of_.find(array);
    return p == param_of_.end() ? "an array built from an address" : "array '" + in_.params.at(p->second).name + "'";
  }

  // ----- activity: which values and variables carry a nonzero tangent ---------------------------
  bool mark(ir::ValueId v) {
    if (v == kZero || active_[v]) return false;
    active_[v] = true;
    return true;
  }
  bool any_active(const std::vector<ir::ValueId>& args) const {
    for (ir::ValueId a : args)
      if (active_[a]) return true;
    return false;
  }

  /// One pass over `b`; true when anything became active (run to a fixed point: loops carry
  /// activity around through their variables).
  bool analyze(const ir::Block& b) {
    bool changed = false;
    for (const ir::Stmt& s : b.stmts) {
      const bool result_diff = s.result != kZero && differentiable(s.type);
      switch (s.op) {
        case ir::Op::Param:
          param_of_[s.result] = s.param();
          if (ir::carries_tangent(s.type)) changed |= mark(s.result);  // a value, or an array with a tangent array
          break;
        case ir::Op::Call:
          if (result_diff && ir::builtin_info(s.builtin()).differentiable && any_active(s.args)) changed |= mark(s.result);
          break;
        case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Insert: case ir::Op::TangentCall:
        case ir::Op::CallFunc:
          if (result_diff && any_active(s.args)) changed |= mark(s.result);
          break;
        case ir::Op::Extract:  // an array field's tangent is the same field of the struct's tangent
          if (ir::carries_tangent(s.type) && active_[s.args[0]]) changed |= mark(s.result);
          break;
        case ir::Op::ArrayLoad:
          if (result_diff && active_[s.args[0]]) changed |= mark(s.result);
          break;
        case ir::Op::LoadVar:
          if (active_var_[size_t(s.var())]) changed |= mark(s.result);
          break;
        case ir::Op::StoreVar:
          if (active_[s.args[0]] && !active_var_[size_t(s.var())]) changed = active_var_[size_t(s.var())] = true;
          break;
        case ir::Op::If: case ir::Op::For: case ir::Op::While:
          for (const ir::Block& r : s.regions) changed |= analyze(r);
          break;
        case ir::Op::Const: case ir::Op::ThreadId: case ir::Op::LaunchDim: case ir::Op::ArrayShape:
        case ir::Op::DeclVar: case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::Print:
        case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
        case ir::Op::GradFunc:  // refused below
          break;  // no tangent of their own (an atomic's returned value is refused when used)
        case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
        case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
          KJIT_CHECK(false, std::string("the tangent transform reached the reverse transform's ") + ir::op_name(s.op));
          break;
      }
    }
    return changed;
  }

  // ----- emission --------------------------------------------------------------------------
  ir::ValueId emit(ir::Block& out, ir::Op op, const ir::Type& t, std::vector<ir::ValueId> args, int64_t imm,
                   const ir::SourceLoc& loc) {
    return ir::Builder(out_).add(out, op, t, std::move(args), imm, loc);
  }

  ir::ValueId zero(ir::Block& out, const ir::Type& t, const ir::SourceLoc& loc) {
    return ir::Builder(out_).zero(out, t, loc);
  }
  /// The tangent of `v` as an operand: the zero of its type when it has none.
  ir::ValueId tangent_operand(ir::Block& out, ir::ValueId v, const ir::SourceLoc& loc) {
    return t(v) != kZero ? t(v) : zero(out, in_.type_of(v), loc);
  }
  /// The tangent of `v` as a field of a struct that has a tangent: an array there needs its
  /// tangent array (a zero array would be a null one, read through the struct's tangent). A
  /// guard: the DSL builds no struct from array handles today.
  ir::ValueId field_tangent(const ir::Stmt& s, ir::ValueId v, ir::Block& out) {
    const ir::Type& type = in_.type_of(v);
    if (type.is_array() && ir::carries_tangent(type) && t(v) == kZero)
      refuse(s, "a struct holding " + array_name(v) + " has a tangent, but the array has no tangent array; "
                "hold a kernel parameter's array (or another struct's array field) in it");
    return tangent_operand(out, v, s.loc);
  }
  bool any_tangent(const std::vector<ir::ValueId>& args) const {
    for (ir::ValueId a : args)
      if (t(a) != kZero) return true;
    return false;
  }
  /// The tangent of `v` (kNoValue: zero). An array's is its tangent array (none: kNoValue).
  ir::ValueId t(ir::ValueId v) const { return active_[v] ? tan_[v] : kZero; }
  ir::ValueId tangent_array(ir::ValueId a) const { return t(a); }

  void block(const ir::Block& in, ir::Block& out) {
    for (const ir::Stmt& s : in.stmts) stmt(s, out);
  }

  /// A copy of control flow statement `s` whose regions are transformed.
  void control(const ir::Stmt& s, ir::Block& out) {
    ir::Stmt copy = ir::Builder::shell(s);
    for (size_t r = 0; r < s.regions.size(); ++r) block(s.regions[r], copy.regions[r]);
    out.stmts.push_back(std::move(copy));
  }

  void stmt(const ir::Stmt& s, ir::Block& out) {
    const ir::SourceLoc& loc = s.loc;
    const bool active = s.result != kZero && active_[s.result];
    switch (s.op) {
      case ir::Op::Param:
        out.stmts.push_back(s);
        if (active) tan_[s.result] = emit(out, ir::Op::Param, s.type, {}, s.param() + int64_t(in_.params.size()), loc);
        break;
      case ir::Op::Call:
        out.stmts.push_back(s);
        if (active) call(s, out);
        break;
      case ir::Op::TangentCall:
        out.stmts.push_back(s);
        if (active)
          refuse(s, std::string("the tangent of the tangent of ") + ir::builtin_info(s.builtin()).name +
                        " is not supported (its tangent is a dual-number evaluation: forward over forward "
                        "mode stops there); differentiate this kernel's tangent in reverse mode instead");
        break;
      case ir::Op::Cast:
        out.stmts.push_back(s);
        if (t(s.args[0]) != kZero) tan_[s.result] = emit(out, ir::Op::Cast, s.type, {t(s.args[0])}, 0, loc);
        break;
      case ir::Op::Construct: {
        out.stmts.push_back(s);
        if (!active || !any_tangent(s.args)) break;
        std::vector<ir::ValueId> parts;
        for (ir::ValueId a : s.args) parts.push_back(field_tangent(s, a, out));
        tan_[s.result] = emit(out, ir::Op::Construct, s.type, parts, s.imm, loc);
        break;
      }
      case ir::Op::Extract: {
        out.stmts.push_back(s);
        if (!active || t(s.args[0]) == kZero) break;
        std::vector<ir::ValueId> args = s.args;
        args[0] = t(s.args[0]);
        tan_[s.result] = emit(out, ir::Op::Extract, s.type, args, s.imm, loc);
        break;
      }
      case ir::Op::Insert: {
        out.stmts.push_back(s);
        if (!active || (t(s.args[0]) == kZero && t(s.args[1]) == kZero)) break;
        std::vector<ir::ValueId> args = s.args;
        args[0] = tangent_operand(out, s.args[0], loc);
        args[1] = field_tangent(s, s.args[1], out);
        tan_[s.result] = emit(out, ir::Op::Insert, s.type, args, s.imm, loc);
        break;
      }
      case ir::Op::DeclVar:
        out.stmts.push_back(s);
        if (tvar_[size_t(s.var())] >= 0) emit(out, ir::Op::DeclVar, ir::Type::void_type(), {}, tvar_[size_t(s.var())], loc);
        break;
      case ir::Op::StoreVar:
        out.stmts.push_back(s);
        if (tvar_[size_t(s.var())] >= 0)
          emit(out, ir::Op::StoreVar, ir::Type::void_type(), {tangent_operand(out, s.args[0], loc)}, tvar_[size_t(s.var())], loc);
        break;
      case ir::Op::LoadVar:
        out.stmts.push_back(s);
        if (active) tan_[s.result] = emit(out, ir::Op::LoadVar, s.type, {}, tvar_[size_t(s.var())], loc);
        break;
      case ir::Op::ArrayLoad: {
        out.stmts.push_back(s);
        if (!active) break;
        std::vector<ir::ValueId> args = s.args;
        args[0] = tan_[s.args[0]];
        tan_[s.result] = emit(out, ir::Op::ArrayLoad, s.type, args, 0, loc);
        break;
      }
      case ir::Op::ArrayStore: {
        out.stmts.push_back(s);
        ir::ValueId t = tangent_array(s.args[0]);
        if (t == kZero || !differentiable(in_.type_of(s.args.back()))) break;
        std::vector<ir::ValueId> args = s.args;
        args[0] = t;
        args.back() = tangent_operand(out, s.args.back(), loc);  // a zero tangent is stored too
        emit(out, ir::Op::ArrayStore, ir::Type::void_type(), args, 0, loc);
        break;
      }
      case ir::Op::ArrayAtomic:
        atomic(s, out);
        break;
      case ir::Op::If: case ir::Op::For: case ir::Op::While:
        control(s, out);
        break;
      case ir::Op::Print:
        out.stmts.push_back(s);
        if (s.prints_values() && any_active(s.args)) {  // print(): the tangents too
          out_.strings.push_back("tan " + in_.strings.at(s.format()));
          std::vector<ir::ValueId> args;
          for (ir::ValueId a : s.args) args.push_back(tangent_operand(out, a, loc));
          emit(out, ir::Op::Print, ir::Type::void_type(), args, int64_t(out_.strings.size() - 1), loc);
        }
        break;
      case ir::Op::CallFunc:
        call_function(s, out);
        break;
      case ir::Op::GradFunc:
        refuse(s, "grad(" + in_.callees.at(s.callee())->name + ") is forward code; its tangent would need second "
                  "derivatives through " + in_.callees.at(s.callee())->name + "'s adjoint, which are not supported");
        break;
      case ir::Op::Const: case ir::Op::ThreadId: case ir::Op::LaunchDim: case ir::Op::ArrayShape:
      case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
        out.stmts.push_back(s);  // forward mode needs nothing at jumps: tangents flow with values
        break;
      case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
      case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:  // traced kernels have none
        KJIT_CHECK(false, std::string("the tangent transform reached the reverse transform's ") + ir::op_name(s.op));
        break;
    }
  }

  void call(const ir::Stmt& s, ir::Block& out) {
    const BuiltinCodegen& g = builtin_codegen(s.builtin());
    KJIT_CHECK(g.tangent.set, std::string("no tangent rule for ") + ir::builtin_info(s.builtin()).name);
    std::vector<ir::ValueId> tangents;
    for (ir::ValueId a : s.args) tangents.push_back(t(a));
    TangentContext ctx(out_, out, s, tangents);
    tan_[s.result] = g.tangent.fn(ctx);
  }

  void atomic(const ir::Stmt& s, ir::Block& out) {
    out.stmts.push_back(s);
    const ir::ValueId value = s.args.back();
    if (!differentiable(in_.type_of(value))) return;  // integers: a plain effect
    const std::string op = std::string("atomic_") + ir::atomic_op_name(s.atomic_op());
    const ir::ValueId tangents = tangent_array(s.args[0]);
    if (tangents == kZero) return;  // an array built from an address: no tangent to keep
    if (uses_[s.result] > 0)
      refuse(s, "the value returned by " + op + " is used; its tangent (the tangent of the element before the "
                "update) cannot be read atomically with it. Use the returned value only in kernels that are "
                "not differentiated forward");
    switch (s.atomic_op()) {
      case ir::AtomicOp::Add:
      case ir::AtomicOp::Sub: {
        if (t(value) == kZero) break;  // adds nothing to the element's tangent
        std::vector<ir::ValueId> args = s.args;
        args[0] = tangents;
        args.back() = t(value);
        emit(out, ir::Op::ArrayAtomic, s.type, args, s.imm, s.loc);
        break;
      }
      case ir::AtomicOp::Min: case ir::AtomicOp::Max:
        refuse(s, op + " on " + array_name(s.args[0]) + " has no tangent in forward mode: the element's "
                  "tangent is the tangent of whichever operand wins, which no thread knows while threads race. "
                  "Differentiate this kernel in reverse mode (launch_adjoint), or compute the extreme in one "
                  "thread and store it");
      case ir::AtomicOp::Exch: case ir::AtomicOp::Cas: case ir::AtomicOp::And: case ir::AtomicOp::Or:
      case ir::AtomicOp::Xor:
        refuse(s, op + " on " + array_name(s.args[0]) + " of floating values has no tangent (the element "
                  "keeps one thread's value, and which one is decided by a race); differentiate kernels that "
                  "use atomic_add, atomic_sub or stores");
    }
  }

  /// A device function call: through its tangent function when an argument carries a
  /// tangent, which returns the result and its tangent as one struct.
  void call_function(const ir::Stmt& s, ir::Block& out) {
    const ir::Function& f = *in_.callees.at(s.callee());
    bool any = false;
    for (ir::ValueId a : s.args) any = any || t(a) != kZero;
    if (!any) {
      out.stmts.push_back(s);
      return;
    }
    std::vector<ir::ValueId> args = s.args;
    for (size_t k = 0; k < s.args.size(); ++k) {
      const ir::ValueId a = s.args[k];
      const ir::Type& t = in_.type_of(a);
      if (t.is_array()) {
        if (tangent_array(a) != kZero) args.push_back(tangent_array(a));
        else if (!ir::carries_tangent(t)) args.push_back(a);  // never read: integers have no tangent
        else
          refuse(s, "device function '" + f.name + "' receives " + array_name(a) + " as argument " + std::to_string(k + 1) +
                        ", which has no tangent array; pass a kernel parameter's array");
      } else {
        args.push_back(differentiable(t) ? tangent_operand(out, a, s.loc) : a);
      }
    }
    auto ft = tangent_function(f);
    out_.callees.push_back(ft);
    const int64_t index = int64_t(out_.callees.size() - 1);
    const ir::Type result = f.result_type();
    ir::Stmt c;
    c.op = ir::Op::CallFunc;
    c.imm = index;
    c.args = std::move(args);
    c.loc = s.loc;
    if (result.is_void() || !differentiable(result)) {  // no tangent to return
      c.type = result;
      c.result = s.result;
      out.stmts.push_back(std::move(c));
      return;
    }
    c.type = ft->result_type();
    c.result = out_.new_value(c.type);
    const ir::ValueId pair = c.result;
    out.stmts.push_back(std::move(c));
    ir::Stmt value;
    value.op = ir::Op::Extract;
    value.type = result;
    value.args = {pair};
    value.imm = 0;
    value.loc = s.loc;
    value.result = s.result;
    out.stmts.push_back(std::move(value));
    tan_[s.result] = emit(out, ir::Op::Extract, result, {pair}, 1, s.loc);
  }

  /// The function's yield and its tangent as one results struct; a result without a tangent
  /// is yielded as it is.
  ir::ValueId yield_with_tangent(ir::Block& out, ir::ValueId value, ir::ValueId tangent) {
    const ir::Type& t = in_.type_of(value);
    if (!differentiable(t)) return value;
    const ir::Type types[] = {t, t};
    const ir::Type pair = ir::results_struct(types, 2);
    if (tangent == kZero) tangent = zero(out, t, in_.loc);
    return emit(out, ir::Op::Construct, pair, {value, tangent}, 0, in_.loc);
  }

  /// A function with a user `.jvp`: its body as it is, then the jvp's call on the parameters
  /// and their tangents.
  void copy_with_user_tangent() {
    tvar_.assign(in_.vars.size(), -1);
    block(in_.body, out_.body);  // nothing is active: a plain copy
    const size_t n = in_.params.size();
    std::vector<ir::ValueId> args;
    for (size_t k = 0; k < 2 * n; ++k) args.push_back(emit(out_.body, ir::Op::Param, out_.params[k].type, {}, int64_t(k), in_.loc));
    out_.callees.push_back(in_.custom_tangent);
    const ir::Type rt = in_.custom_tangent->result_type();
    ir::ValueId tangent = emit(out_.body, ir::Op::CallFunc, rt, args, int64_t(out_.callees.size() - 1), in_.loc);
    if (in_.body.yield != kZero) out_.body.yield = yield_with_tangent(out_.body, in_.body.yield, tangent);
  }

  /// The tangent function of device function `f`: its parameters, then one tangent per
  /// parameter; it returns results(R, R) (the value and its tangent) for a floating R.
  std::shared_ptr<const ir::Function> tangent_function(const ir::Function& f) {
    auto it = functions_.find(&f);
    if (it != functions_.end()) return it->second;
    auto ft = std::make_shared<ir::Function>(TangentTransform(f, functions_).run());
    functions_[&f] = ft;
    return ft;
  }

  /// Keeps the callees the body calls (the tangent functions replaced some), in order.
  void prune_callees() {
    std::vector<int64_t> remap(out_.callees.size(), -1);
    std::vector<std::shared_ptr<const ir::Function>> kept;
    auto visit = [&](ir::Block& b, auto& self) -> void {
      for (ir::Stmt& s : b.stmts) {
        if (s.op == ir::Op::CallFunc || s.op == ir::Op::GradFunc) {
          int64_t& to = remap.at(s.callee());
          if (to < 0) {
            to = int64_t(kept.size());
            kept.push_back(out_.callees[s.callee()]);
          }
          s.imm = to;
        }
        for (ir::Block& r : s.regions) self(r, self);
      }
    };
    visit(out_.body, visit);
    out_.callees = std::move(kept);
  }

  const ir::Function& in_;
  FunctionTangents& functions_;
  ir::Function out_;
  std::vector<ir::ValueId> tan_;   ///< per value of in_: its tangent in out_ (kNoValue: zero)
  std::vector<bool> active_;       ///< per value: carries a tangent (arrays: has a tangent array)
  std::vector<bool> active_var_;   ///< per variable: some store gives it a tangent
  std::vector<int64_t> tvar_;      ///< per variable: its tangent variable (-1: none)
  std::vector<int> uses_;          ///< per value: its uses in in_
  std::map<ir::ValueId, size_t> param_of_;
};

}  // namespace

ir::Function tangent_kernel(const ir::Function& kernel) {
  FunctionTangents functions;
  return TangentTransform(kernel, functions).run();
}

}  // namespace kjit::codegen
