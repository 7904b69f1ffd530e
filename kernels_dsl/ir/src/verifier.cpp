// The IR verifier: scoping, operand types and region structure of every statement.
#include "kjit/ir/verifier.hpp"

#include "kjit/error.hpp"
#include "kjit/ir/printer.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/ir/type.hpp"

namespace kjit::ir {

namespace {

const Type kInt32 = Type::scalar_of(Scalar::I32);
const Type kBool = Type::scalar_of(Scalar::Bool);

class Verifier {
 public:
  explicit Verifier(const Function& fn)
      : fn_(fn), defined_(fn.values.size(), false), var_live_(fn.vars.size(), false) {}

  std::vector<std::string> run() {
    block(fn_.body, 0);
    return std::move(problems_);
  }

 private:
  void problem(const Stmt& s, const std::string& what) {
    problems_.push_back(std::string(op_name(s.op)) + " at " + s.loc.short_str() + ": " + what);
  }

  bool value_ok(const Stmt& s, ValueId v) {
    if (v == kNoValue || v >= fn_.values.size()) {
      problem(s, "operand %" + std::to_string(v) + " does not exist");
      return false;
    }
    if (!defined_[v]) {
      problem(s, "operand %" + std::to_string(v) + " is used outside the region that defines it "
                 "or before its definition");
      return false;
    }
    return true;
  }

  const Type& type(ValueId v) const { return fn_.values[v]; }

  void block(const Block& b, int loop_depth) {
    std::vector<ValueId> defined_here(b.args.begin(), b.args.end());
    std::vector<uint32_t> vars_here;
    for (ValueId a : b.args) defined_[a] = true;
    for (const Stmt& s : b.stmts) {
      stmt(s, loop_depth);
      if (s.result != kNoValue) {
        if (s.result >= fn_.values.size()) {
          problem(s, "result id out of range");
        } else {
          if (defined_[s.result]) problem(s, "value %" + std::to_string(s.result) + " defined twice");
          if (fn_.values[s.result] != s.type) problem(s, "result type differs from the value table");
          defined_[s.result] = true;
          defined_here.push_back(s.result);
        }
      }
      if (s.op == Op::DeclVar && s.imm >= 0 && size_t(s.imm) < var_live_.size()) {
        var_live_[size_t(s.imm)] = true;
        vars_here.push_back(uint32_t(s.imm));
      }
    }
    if (b.yield != kNoValue && (b.yield >= defined_.size() || !defined_[b.yield]))
      problems_.push_back("block yields a value that is not in scope");
    for (ValueId v : defined_here) defined_[v] = false;
    for (uint32_t v : vars_here) var_live_[v] = false;
  }

  /// The statement's builtin accepts arguments of types `ts` and gives the statement's type.
  void expect_builtin_result(const Stmt& s, const std::vector<Type>& ts) {
    std::string err;
    auto r = infer_builtin_type(s.builtin(), ts.data(), int(ts.size()), &err);
    if (!r) problem(s, err);
    else if (*r != s.type) problem(s, "result typed " + s.type.str() + ", the rule gives " + r->str());
  }

  void expect_args(const Stmt& s, size_t n) {
    if (s.args.size() != n)
      problem(s, "expects " + std::to_string(n) + " operands, has " + std::to_string(s.args.size()));
  }

  bool var_ok(const Stmt& s) {
    if (s.imm < 0 || size_t(s.imm) >= fn_.vars.size()) {
      problem(s, "variable " + std::to_string(s.imm) + " does not exist");
      return false;
    }
    if (s.op != Op::DeclVar && !var_live_[size_t(s.imm)]) {
      problem(s, "variable " + std::to_string(s.imm) + " is used outside the block declaring it");
      return false;
    }
    return true;
  }

  bool live_var(int64_t var) const { return var >= 0 && size_t(var) < fn_.vars.size() && var_live_[size_t(var)]; }

  /// A CallAdjoint's adjoint variables: in scope, each typed as its operand.
  void adjoint_outs(const Stmt& s) {
    for (size_t k = 0; k < s.outs.size(); ++k) {
      const int64_t var = s.outs[k];
      if (var < 0) continue;
      if (size_t(var) >= fn_.vars.size() || !var_live_[size_t(var)]) problem(s, "adjoint variable " + std::to_string(var) + " is not in scope");
      else if (fn_.vars[size_t(var)].type != type(s.args[k])) problem(s, "adjoint variable typed unlike its operand");
    }
  }

  /// A CallAdjoint of a device function call (callee bits): the call's operands, its result,
  /// the adjoint arrays of its differentiable arrays, its result's adjoint (ops.def).
  void function_adjoint(const Stmt& s) {
    if (s.bits >= fn_.callees.size()) return problem(s, "no such device function");
    const Function& callee = *fn_.callees[size_t(s.bits)];
    const Type result = callee.result_type();
    const bool adj_result = !result.is_array() && result.is_differentiable();
    size_t expected = callee.params.size() + !result.is_void() + adj_result;
    for (const Param& p : callee.params) expected += p.type.is_array() && p.type.is_differentiable();
    if (s.outs.size() != callee.params.size() || s.args.size() != expected) {
      return problem(s, "expects the call's operands, its result, its arrays' adjoint arrays and its result's adjoint, "
                        "and one adjoint variable per operand of " + callee.name);
    }
    size_t next = callee.params.size();
    for (size_t k = 0; k < callee.params.size(); ++k)
      if (type(s.args[k]) != callee.params[k].type) problem(s, "argument " + std::to_string(k) + " of " + callee.name + " typed differently");
    if (!result.is_void() && type(s.args[next++]) != result) problem(s, "result of " + callee.name + " typed differently");
    for (const Param& p : callee.params)
      if (p.type.is_array() && p.type.is_differentiable() && type(s.args[next++]) != p.type)
        problem(s, "an adjoint array typed unlike its array");
    if (adj_result && type(s.args[next]) != result) problem(s, "the result's adjoint is typed differently");
    adjoint_outs(s);
  }

  void array_access(const Stmt& s, size_t extra) {
    if (s.args.empty() || !type(s.args[0]).is_array()) {
      problem(s, "first operand is not an array");
      return;
    }
    const Type& a = type(s.args[0]);
    size_t nidx = s.args.size() - 1 - extra;
    if (nidx != a.ndim)
      problem(s, "a " + std::to_string(a.ndim) + "-D array indexed with " + std::to_string(nidx) +
                     " indices");
    for (size_t i = 1; i <= nidx && i < s.args.size(); ++i)
      if (!type(s.args[i]).is_integer() || !type(s.args[i]).is_scalar())
        problem(s, "index " + std::to_string(i - 1) + " is not an integer");
    for (size_t i = 1 + nidx; i < s.args.size(); ++i)
      if (type(s.args[i]) != a.element())
        problem(s, "value of type " + type(s.args[i]).str() + " for an array of " + a.element().str());
  }

  void stmt(const Stmt& s, int loop_depth) {
    for (ValueId a : s.args)
      if (!value_ok(s, a)) return;
    switch (s.op) {
      case Op::Const:
        expect_args(s, 0);
        if (!s.type.is_scalar()) problem(s, "constants are scalars");
        break;
      case Op::Param:
        if (s.imm < 0 || size_t(s.imm) >= fn_.params.size()) problem(s, "no such parameter");
        else if (fn_.params[size_t(s.imm)].type != s.type) problem(s, "parameter type differs");
        break;
      case Op::ThreadId:
        if (s.type != kInt32 || s.imm < -1 || s.imm > 3) problem(s, "malformed thread index");
        if (s.imm >= 0 && s.imm >= fn_.launch_ndim) problem(s, "component beyond the launch dimensionality");
        break;
      case Op::LaunchDim:
        if (s.type != kInt32 || s.imm < 0 || s.imm > 3) problem(s, "malformed launch dimension");
        break;
      case Op::Call: {
        if (s.imm < 0 || s.imm >= kBuiltinCount) { problem(s, "no such builtin"); break; }
        std::vector<Type> ts;
        for (ValueId a : s.args) ts.push_back(type(a));
        expect_builtin_result(s, ts);
        break;
      }
      case Op::Cast: {
        expect_args(s, 1);
        if (s.args.size() != 1) break;
        const Type& from = type(s.args[0]);
        bool same_shape = from.shape == s.type.shape && from.rows == s.type.rows && from.cols == s.type.cols;
        if (!same_shape || from.is_array() || s.type.is_array() || s.type.shape == Shape::Struct || s.type.is_void())
          problem(s, "casts convert scalars, or the components of a vector, matrix, quaternion or transform");
        break;
      }
      case Op::Construct: {
        if (s.args.empty()) break;  // zero value
        if (s.type.is_array()) {  // an array over a device pointer: ptr, then extents
          if (type(s.args[0]) != Type::scalar_of(Scalar::U64) || s.args.size() != size_t(1 + s.type.ndim))
            problem(s, "an array is built from a uint64 address and one extent per dimension");
          break;
        }
        if (s.type.shape == Shape::Struct) {
          const StructInfo& info = struct_info(s.type.struct_id);
          if (s.args.size() != info.fields.size()) { problem(s, "wrong number of fields"); break; }
          for (size_t k = 0; k < s.args.size(); ++k)
            if (type(s.args[k]) != info.fields[k].type) problem(s, "field " + info.fields[k].name + " typed differently");
          break;
        }
        int lanes = s.type.lanes();
        if (int(s.args.size()) != lanes) problem(s, "wrong number of components");
        for (ValueId a : s.args)
          if (!type(a).is_scalar() || type(a).scalar != s.type.scalar) problem(s, "component type differs");
        break;
      }
      case Op::Extract:
      case Op::Insert: {
        size_t first_index = s.op == Op::Extract ? 1 : 2;
        if (s.args.size() < first_index) { problem(s, "missing operands"); break; }
        for (size_t i = first_index; i < s.args.size(); ++i)
          if (!type(s.args[i]).is_integer()) problem(s, "component index is not an integer");
        const Type& whole = type(s.args[0]);
        size_t nidx = s.args.size() - first_index;
        Type part;
        if (whole.shape == Shape::Struct) {
          const StructInfo& info = struct_info(whole.struct_id);
          if (nidx != 0 || s.imm < 0 || size_t(s.imm) >= info.fields.size()) { problem(s, "no such field"); break; }
          part = info.fields[size_t(s.imm)].type;
        } else if (whole.is_array() || whole.is_scalar() || whole.is_void() || nidx < 1 || nidx > 2 ||
                   (nidx == 2 && whole.shape != Shape::Matrix)) {
          problem(s, "components of a " + whole.str() + " with " + std::to_string(nidx) + " indices");
          break;
        } else if (whole.shape == Shape::Matrix && nidx == 1) {
          part = Type::vector(whole.cols, whole.scalar);
        } else {
          part = Type::scalar_of(whole.scalar);
        }
        if (s.op == Op::Extract && s.type != part) problem(s, "extracts a " + part.str() + " typed " + s.type.str());
        if (s.op == Op::Insert && (s.type != whole || type(s.args[1]) != part))
          problem(s, "inserts a " + type(s.args[1]).str() + " where a " + part.str() + " belongs");
        break;
      }
      case Op::DeclVar:
        var_ok(s);
        break;
      case Op::LoadVar:
        if (var_ok(s) && fn_.vars[size_t(s.imm)].type != s.type) problem(s, "load type differs from the variable");
        break;
      case Op::StoreVar:
        expect_args(s, 1);
        if (var_ok(s) && !s.args.empty() && fn_.vars[size_t(s.imm)].type != type(s.args[0]))
          problem(s, "stored value's type differs from the variable");
        break;
      case Op::ArrayLoad:
        array_access(s, 0);
        if (!s.args.empty() && type(s.args[0]).is_array() && s.type != type(s.args[0]).element())
          problem(s, "load type differs from the element type");
        break;
      case Op::ArrayStore:
        array_access(s, 1);
        break;
      case Op::ArrayAtomic:
        array_access(s, s.atomic_op() == AtomicOp::Cas ? 2 : 1);
        break;
      case Op::ArrayShape:
        expect_args(s, 1);
        if (!s.args.empty() && (!type(s.args[0]).is_array() || s.imm < 0 || s.imm >= type(s.args[0]).ndim))
          problem(s, "shape of a dimension the array does not have");
        break;
      case Op::If:
        expect_args(s, 1);
        if (!s.args.empty() && type(s.args[0]) != kBool) problem(s, "condition is not a bool");
        if (s.regions.size() != 2) { problem(s, "needs then and else regions"); break; }
        block(s.regions[0], loop_depth);
        block(s.regions[1], loop_depth);
        break;
      case Op::For:
        expect_args(s, 3);
        for (ValueId a : s.args)
          if (type(a) != kInt32) problem(s, "bounds and step must be int32");
        if (s.regions.size() != 1 || s.regions[0].args.size() != 1) {
          problem(s, "needs one body region with the induction value");
          break;
        }
        block(s.regions[0], loop_depth + 1);
        break;
      case Op::While:
        if (s.regions.size() != 2) { problem(s, "needs condition and body regions"); break; }
        block(s.regions[0], loop_depth);
        if (s.regions[0].yield == kNoValue || type(s.regions[0].yield) != kBool)
          problem(s, "condition region must yield a bool");
        block(s.regions[1], loop_depth + 1);
        break;
      case Op::Break:
      case Op::Continue:
        if (loop_depth == 0) problem(s, "outside a loop");
        break;
      case Op::Return:
        // A kernel's ends the thread; a device function's returns its value (lower_jumps
        // makes it a store), of the function's result type.
        if (!fn_.is_function || fn_.result_type().is_void()) {
          if (!s.args.empty()) problem(s, "returns a value from a function without one");
        } else if (s.args.size() != 1 || type(s.args[0]) != fn_.result_type()) {
          problem(s, "must return one value of the function's result type");
        }
        break;
      case Op::Print:
        if (s.imm < 0 || size_t(s.imm) >= fn_.strings.size()) problem(s, "no such format string");
        break;
      case Op::TangentCall: {
        if (s.imm < 0 || s.imm >= kBuiltinCount) { problem(s, "no such builtin"); break; }
        if (s.bits > s.args.size()) { problem(s, "more builtin arguments than operands"); break; }
        std::vector<Type> ts;
        std::vector<Type> tangents;
        for (size_t k = 0; k < s.args.size(); ++k) (k < s.bits ? ts : tangents).push_back(type(s.args[k]));
        std::vector<Type> expected;
        for (const Type& t : ts)
          if (t.is_float()) expected.push_back(t);
        if (tangents != expected) problem(s, "expects one tangent of each floating argument's type");
        expect_builtin_result(s, ts);
        break;
      }
      case Op::AccumVar:
        expect_args(s, 1);
        if (var_ok(s) && !s.args.empty() && fn_.vars[size_t(s.imm)].type != type(s.args[0]))
          problem(s, "accumulated value's type differs from the variable");
        break;
      case Op::CallAdjoint: {
        const Op of = Op(s.imm);
        if (of == Op::CallFunc) {
          function_adjoint(s);
          break;
        }
        if (of == Op::Print) {  // reads the adjoints it prints, adds into none
          if (!s.outs.empty()) problem(s, "a print's adjoint adds into no adjoint variable");
          if (s.bits >= fn_.strings.size()) problem(s, "no such format string");
          break;
        }
        if (of == Op::ArrayAtomic) {
          if (s.args.size() < 3 || s.outs.size() != s.args.size() - 1 || type(s.args.back()) != type(s.args[0])) {
            problem(s, "expects the atomic's operands and its array's adjoint array, and one adjoint variable per operand");
            break;
          }
          adjoint_outs(s);
          break;
        }
        if (s.args.size() < 2 || s.outs.size() != s.args.size() - 2) {
          problem(s, "expects the operands, the result and its adjoint, and one adjoint variable per operand");
          break;
        }
        if (of != Op::Call && of != Op::Cast && of != Op::Extract && of != Op::Insert) problem(s, "no rule of that kind");
        if (of == Op::Call && s.bits >= uint64_t(kBuiltinCount)) problem(s, "no such builtin");
        if (type(s.args[s.args.size() - 2]) != type(s.args.back())) problem(s, "the result's adjoint is typed differently");
        if (of == Op::Extract && type(s.args[0]).shape == Shape::Struct &&
            s.bits >= struct_info(type(s.args[0]).struct_id).fields.size())
          problem(s, "no such struct field");
        adjoint_outs(s);
        break;
      }
      case Op::StrongZero:
        expect_args(s, 1);
        if (s.regions.size() != 1) { problem(s, "needs one region"); break; }
        block(s.regions[0], loop_depth);
        break;
      case Op::AdjArrayAdd:
        array_access(s, 1);
        break;
      case Op::AdjArrayRead:
        array_access(s, 0);
        if (var_ok(s) && !s.args.empty() && type(s.args[0]).is_array() && fn_.vars[size_t(s.imm)].type != type(s.args[0]).element())
          problem(s, "the variable is typed unlike the array's elements");
        break;
      case Op::AccumParam:
        expect_args(s, 1);
        if (s.imm < 0 || size_t(s.imm) >= fn_.params.size()) problem(s, "no such parameter");
        else if (fn_.params[size_t(s.imm)].type.is_array()) problem(s, "an array parameter's adjoint is an array");
        else if (const Type sum = fn_.is_function ? fn_.params[size_t(s.imm)].type : adjoint_sum_type(fn_.params[size_t(s.imm)].type);
                 !s.args.empty() && type(s.args[0]) != sum)
          problem(s, "adds a " + type(s.args[0]).str() + " where the parameter's adjoint sum is a " + sum.str());
        break;
      case Op::GradView:
        expect_args(s, 1);
        if (!s.args.empty() && (!type(s.args[0]).is_array() || !type(s.args[0]).is_differentiable()))
          problem(s, "the gradient buffer of what is no differentiable array");
        else if (!s.args.empty() && s.type != type(s.args[0]))
          problem(s, "an adjoint array typed unlike its array");
        break;
      case Op::Checkpoint:
        expect_args(s, 0);
        if (s.bits > uint64_t(CheckpointPart::Step)) problem(s, "no such part");
        if (s.outs.empty() || !live_var(s.outs[0]) || fn_.vars[size_t(s.outs[0])].type != kBool)
          problem(s, "its overflow flag is no bool variable in scope");
        for (size_t k = 1; k < s.outs.size(); ++k)
          if (!live_var(s.outs[k])) problem(s, "state variable " + std::to_string(s.outs[k]) + " is not in scope");
        break;
      case Op::ReverseSegments:
        expect_args(s, 0);
        for (int64_t var : s.outs)
          if (!live_var(var)) problem(s, "state variable " + std::to_string(var) + " is not in scope");
        if (s.regions.size() != 2) { problem(s, "needs record and reverse regions"); break; }
        for (const Block& r : s.regions) {
          if (r.args.size() != 1 || type(r.args[0]) != kInt32) problem(s, "each region takes the iteration, an int32");
          block(r, loop_depth);
        }
        break;
      case Op::CallFunc: {
        if (s.imm < 0 || size_t(s.imm) >= fn_.callees.size()) { problem(s, "no such device function"); break; }
        const Function& callee = *fn_.callees[size_t(s.imm)];
        if (callee.params.size() != s.args.size()) { problem(s, "wrong number of arguments for " + callee.name); break; }
        for (size_t k = 0; k < s.args.size(); ++k)
          if (type(s.args[k]) != callee.params[k].type) problem(s, "argument " + std::to_string(k) + " of " + callee.name + " typed differently");
        if (callee.result_type() != s.type) problem(s, "result of " + callee.name + " typed differently");
        break;
      }
      case Op::GradFunc: {
        if (s.imm < 0 || size_t(s.imm) >= fn_.callees.size()) { problem(s, "no such device function"); break; }
        const Function& callee = *fn_.callees[size_t(s.imm)];
        if (callee.params.size() != s.args.size()) { problem(s, "wrong number of arguments for " + callee.name); break; }
        for (size_t k = 0; k < s.args.size(); ++k)
          if (type(s.args[k]) != callee.params[k].type || type(s.args[k]).is_array())
            problem(s, "argument " + std::to_string(k) + " of " + callee.name + " typed differently, or an array");
        if (!callee.result_type().is_float() || !callee.result_type().is_scalar())
          problem(s, "the gradient of " + callee.name + ", which does not return one float");
        if (gradient_type(callee) != s.type) problem(s, "gradient of " + callee.name + " typed differently");
        break;
      }
    }
  }

  const Function& fn_;
  std::vector<bool> defined_;
  std::vector<bool> var_live_;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> check(const Function& fn) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].type.is_void()) problems.push_back("parameter " + fn.params[i].name + " is void");
  auto more = Verifier(fn).run();
  problems.insert(problems.end(), more.begin(), more.end());
  return problems;
}

void verify(const Function& fn) {
  auto problems = check(fn);
  if (problems.empty()) return;
  std::string msg = "internal error: malformed IR for kernel '" + fn.name + "':";
  for (const std::string& p : problems) msg += "\n  " + p;
  msg += "\n" + print(fn);
  throw Error(ErrorKind::Internal, msg);
}

}  // namespace kjit::ir
