// Expressions of value-producing statements in generated code.
#include "expr_emitter.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "builtin_codegen.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/structs.hpp"
#include "private_adds.hpp"
#include "text_escape.hpp"

namespace kjit::codegen {

Names::Names(const ir::Function& f) : fn(f), values(f.values.size()) {
  for (size_t v = 0; v < values.size(); ++v) values[v] = "v" + std::to_string(v);
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param) values.at(s.result) = param(s.param());
  });
}

std::string Names::param(size_t index) const { return "p_" + fn.params.at(index).name; }

std::string for_condition(const std::string& i, const std::string& end, const std::string& step) {
  return step + " > 0 ? " + i + " < " + end + " : (" + step + " < 0 && " + i + " > " + end + ")";
}

std::string const_literal(const ir::Stmt& s) {
  const ir::Type& t = s.type;
  char buf[64];
  switch (t.scalar) {
    case ir::Scalar::Bool: return s.const_int() ? "true" : "false";
    case ir::Scalar::F32:
    case ir::Scalar::F16:
    case ir::Scalar::BF16: {
      float f = float(s.const_float());
      if (std::isnan(f)) return "(0.0f / 0.0f)";
      if (std::isinf(f)) return f > 0 ? "(1.0f / 0.0f)" : "(-1.0f / 0.0f)";
      std::snprintf(buf, sizeof buf, "%.9g", double(f));
      std::string text = buf;
      if (std::strtof(buf, nullptr) != f) {  // not exact in decimal: use a hex float
        std::snprintf(buf, sizeof buf, "%a", double(f));
        text = buf;
      }
      if (text.find_first_of(".epx") == std::string::npos) text += ".0";
      text += "f";
      if (t.scalar == ir::Scalar::F32) return text;
      return std::string(ir::scalar_cpp(t.scalar)) + "(" + text + ")";
    }
    case ir::Scalar::F64: {
      double d = s.const_float();
      if (std::isnan(d)) return "(0.0 / 0.0)";
      if (std::isinf(d)) return d > 0 ? "(1.0 / 0.0)" : "(-1.0 / 0.0)";
      std::snprintf(buf, sizeof buf, "%.17g", d);
      std::string text = buf;
      if (text.find_first_of(".e") == std::string::npos) text += ".0";
      return text;
    }
    case ir::Scalar::I32: {
      int64_t v = s.const_int();
      // INT32_MIN has no literal form: write it as an expression.
      if (v == INT32_MIN) return "(-2147483647 - 1)";
      return std::to_string(v);
    }
    case ir::Scalar::U32: return std::to_string(uint32_t(s.const_int())) + "u";
    case ir::Scalar::I64: {
      int64_t v = s.const_int();
      if (v == INT64_MIN) return "(kj_int64)(-9223372036854775807LL - 1)";
      return "(kj_int64)" + std::to_string(v) + "LL";
    }
    case ir::Scalar::U64: return "(kj_uint64)" + std::to_string(uint64_t(s.const_int())) + "ULL";
    case ir::Scalar::I8:
    case ir::Scalar::U8:
    case ir::Scalar::I16:
    case ir::Scalar::U16: break;  // narrow integers: an int literal converted
  }
  return "(" + std::string(ir::scalar_cpp(t.scalar)) + ")" + std::to_string(s.const_int());
}

const std::string& field_name(const ir::Type& t, int64_t field) {
  return ir::struct_info(t.struct_id).fields.at(size_t(field)).name;
}

std::string field_setter(const ir::Type& t, int64_t field) {
  return ir::struct_info(t.struct_id).cpp_name + "__set_" + field_name(t, field);
}

bool ExprEmitter::is_expression(const ir::Stmt& s) {
  // Parameters are bound on entry; void builtins (expect_near, breakpoint) are statements.
  return ir::op_info(s.op).kind != ir::OpKind::Input && ir::is_effect_free(s);
}

const std::string& ExprEmitter::function_name(const ir::Function& f) const {
  KJIT_CHECK(functions_ && functions_->count(&f), "device function " + f.name + " has no name in this module");
  return functions_->at(&f);
}

std::string ExprEmitter::call_function(const ir::Stmt& s, bool replay) {
  const ir::Function& f = *n_.fn.callees.at(s.callee());
  const std::string name = s.op == ir::Op::GradFunc ? "grad_" + function_name(f) : function_name(f) + (replay ? "_replay" : "");
  std::string out = name + "(dim, kj_index";
  for (ir::ValueId a : s.args) out += ", " + n_.value(a);
  return out + ")";
}

namespace {
/// The printf conversion of a scalar of type `t`, and the cast its argument gets.
std::pair<const char*, const char*> print_spec(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::Bool: case ir::Scalar::I8: case ir::Scalar::I16: case ir::Scalar::I32: return {"%d", "(int)"};
    case ir::Scalar::U8: case ir::Scalar::U16: case ir::Scalar::U32: return {"%u", "(unsigned)"};
    case ir::Scalar::I64: return {"%lld", "(long long)"};
    case ir::Scalar::U64: return {"%llu", "(unsigned long long)"};
    default: return {"%g", "(double)"};
  }
}
}  // namespace

std::string ExprEmitter::print(const ir::Stmt& s, bool adjoint) const {
  const bool transformed = s.op == ir::Op::CallAdjoint;  // its operands: the adjoints, zeros
  const size_t format = transformed ? s.adjoint_format() : s.format();
  std::string text = "printf(\"" + std::string(adjoint ? "adj " : "") + literal_text(n_.fn.strings.at(format)) + "\"";
  for (ir::ValueId a : s.args) {
    const ir::Type& t = n_.fn.type_of(a);
    text += ", " + std::string(print_spec(t.scalar).second);
    text += adjoint && !transformed ? (t.is_float() ? n_.adj_value(a) : std::string("0")) : n_.value(a);
  }
  return text + ")";
}

std::pair<std::string, std::string> atomic_select_adjoint(const std::string& array, const std::string& indices,
                                                          const std::string& value, const std::string& adj_array) {
  return {"kj::adj_atomic_select(kj::elem(" + array + indices + "), " + value + ", ",
          ", &kj::elem(" + adj_array + indices + "))"};
}

std::string field_adjoint_add(const ir::Type& whole, int64_t field, const std::string& adj) {
  return "." + field_name(whole, field) + " += " + adj;
}

std::string ExprEmitter::element(const ir::Stmt& s, size_t count) const {
  std::string out = "kj::elem(" + n_.value(s.args[0]);
  for (size_t i = 1; i <= count; ++i) out += ", " + n_.value(s.args[i]);
  return out + ")";
}

std::string ExprEmitter::atomic(const ir::Stmt& s) {
  const ir::AtomicOp op = s.atomic_op();
  size_t operands = op == ir::AtomicOp::Cas ? 2 : 1;
  if (op == ir::AtomicOp::Add || op == ir::AtomicOp::Sub)
    return add_into(n_.value(s.args[0]), element(s, s.args.size() - 2), n_.value(s.args.back()),
                    n_.fn.type_of(s.args[0]).element(), op == ir::AtomicOp::Sub);
  const std::string name = op == ir::AtomicOp::Exch && !result_read(s) ? "exch_unread" : ir::atomic_op_name(op);
  std::string out = "kj::atomic_" + name + "(&" + element(s, s.args.size() - 1 - operands);
  for (size_t i = s.args.size() - operands; i < s.args.size(); ++i) out += ", " + n_.value(s.args[i]);
  return out + ")";
}

bool ExprEmitter::result_read(const ir::Stmt& s) {
  if (!def_use_) def_use_ = std::make_shared<const ir::DefUse>(n_.fn);
  // Only a statement of the function the names are of is known unread; anything else counts
  // as read.
  if (size_t(s.result) >= n_.fn.values.size() || def_use_->def(s.result) != &s) return true;
  return def_use_->used(s.result);
}

std::string ExprEmitter::add_into(const std::string& array, const std::string& element, const std::string& value,
                                  const ir::Type& element_type, bool sub) {
  if (privatizable_element(element_type))
    return std::string(sub ? "kj::array_sub(" : "kj::array_add(") + array + ", &" + element + ", " + value + ")";
  return std::string(sub ? "kj::atomic_sub(&" : "kj::atomic_add(&") + element + ", " + value + ")";
}

std::string ExprEmitter::adjoint_add(const std::string& array, const std::string& element, const std::string& value,
                                     const ir::Type& element_type, bool own) {
  if (own) return "kj::own_add(" + array + ", " + element + ", " + value + ")";
  return add_into(array, element, value, element_type);
}

std::string ExprEmitter::call(const ir::Stmt& s) {
  const BuiltinCodegen& g = builtin_codegen(s.builtin());
  // Integer / and % are defined for every operand (kj::quot and kj::rem in core.h): the
  // operators trap on the cpu and give unspecified values on CUDA for x / 0 and MIN / -1.
  const bool integer_scalar = !s.args.empty() && n_.fn.type_of(s.args[0]).shape == ir::Shape::Scalar &&
                              n_.fn.type_of(s.args[0]).is_integer();
  if (integer_scalar && (s.builtin() == ir::Builtin::Div || s.builtin() == ir::Builtin::Mod))
    return std::string(s.builtin() == ir::Builtin::Div ? "kj::quot(" : "kj::rem(") + n_.value(s.args[0]) + ", " +
           n_.value(s.args[1]) + ")";
  bool use_op = g.op && !s.args.empty() && !(g.op_integers_only && !n_.fn.type_of(s.args[0]).is_integer());
  if (use_op) {
    const std::string op = g.op;
    if (op == "?:")
      return n_.value(s.args[0]) + " ? " + n_.value(s.args[1]) + " : " + n_.value(s.args[2]);
    if (s.args.size() == 1) return op + n_.value(s.args[0]);
    KJIT_CHECK(s.args.size() == 2, "operator builtin with " + std::to_string(s.args.size()) + " operands");
    return n_.value(s.args[0]) + " " + op + " " + n_.value(s.args[1]);
  }
  KJIT_CHECK(g.function, std::string("builtin without a function: ") + ir::builtin_info(s.builtin()).name);
  std::string out = std::string(g.function) + "(";
  for (size_t i = 0; i < s.args.size(); ++i) out += (i ? ", " : "") + n_.value(s.args[i]);
  if (g.takes_site) out += ", dim, kj_index, \"" + literal_text(s.loc.short_str()) + "\"";
  return out + ")";
}

std::string ExprEmitter::tangent_call(const ir::Stmt& s) {
  const BuiltinCodegen& g = builtin_codegen(s.builtin());
  const size_t n = s.primal_args();
  if (g.tangent_function) {  // f(args..., tangents...)
    std::string out = std::string(g.tangent_function) + "(";
    for (size_t i = 0; i < s.args.size(); ++i) out += (i ? ", " : "") + n_.value(s.args[i]);
    return out + ")";
  }
  // One evaluation of the forward function on dual numbers seeded with the tangents.
  KJIT_CHECK(g.function, std::string("no function to evaluate on duals for ") + ir::builtin_info(s.builtin()).name);
  std::string out = "kj::tangent_part<" + s.type.cpp() + ">(" + g.function + "(";
  size_t next = n;
  for (size_t i = 0; i < n; ++i) {
    out += i ? ", " : "";
    if (n_.fn.type_of(s.args[i]).is_float()) out += "kj::make_dual(" + n_.value(s.args[i]) + ", " + n_.value(s.args.at(next++)) + ")";
    else out += n_.value(s.args[i]);
  }
  return out + "))";
}

std::vector<std::string> function_adjoint_call(const std::string& name, const std::vector<std::string>& operands,
                                               const std::string& result, const std::vector<std::string>& adjoints,
                                               const std::string& adj_ret) {
  std::vector<std::string> pieces{"adj_" + name + "(dim, kj_index"};
  for (const std::string& o : operands) pieces.back() += ", " + o;
  if (!result.empty()) pieces.back() += ", " + result;
  for (const std::string& a : adjoints) {
    pieces.back() += ", " + a;
    if (a.empty()) pieces.push_back("");  // the adjoint variable goes here
  }
  if (!adj_ret.empty()) pieces.back() += ", " + adj_ret;
  pieces.back() += ")";
  return pieces;
}

std::string ExprEmitter::function_adjoint(const ir::Stmt& s) const {
  const ir::Function& f = *n_.fn.callees.at(size_t(s.bits));  // the callee (ops.def)
  const size_t operands = s.outs.size();
  size_t next = operands;  // the result, the adjoint arrays, the result's adjoint follow
  std::vector<std::string> texts, adjoints, vars;
  for (size_t k = 0; k < operands; ++k) texts.push_back(n_.value(s.args[k]));
  const std::string result = f.result_type().is_void() ? "" : n_.value(s.args[next++]);
  for (size_t k = 0; k < operands; ++k) {
    const ir::Type& t = n_.fn.type_of(s.args[k]);
    if (!t.is_differentiable()) continue;
    adjoints.push_back(t.is_array() ? n_.value(s.args[next++]) : "");
    if (!t.is_array()) vars.push_back(n_.var(s.outs[k]));
  }
  const std::vector<std::string> pieces =
      function_adjoint_call(function_name(f), texts, result, adjoints, next < s.args.size() ? n_.value(s.args[next]) : "");
  std::string out = pieces[0];
  for (size_t i = 0; i < vars.size(); ++i) out += vars[i] + pieces[i + 1];
  return out;
}

std::string ExprEmitter::call_adjoint(const ir::Stmt& s) const {
  const ir::Op of = s.adjoint_of();
  if (of == ir::Op::CallFunc) return function_adjoint(s);
  if (of == ir::Op::Print) return print(s, true);
  if (of == ir::Op::ArrayAtomic) {  // the atomic's operands, then the adjoint array (ops.def)
    const size_t value = s.args.size() - 2;
    std::string indices;
    for (size_t k = 1; k < value; ++k) indices += ", " + n_.value(s.args[k]);
    const std::string& adj_array = n_.value(s.args.back());
    const auto [before, after] = atomic_select_adjoint(n_.value(s.args[0]), indices, n_.value(s.args[value]), adj_array);
    return if_present(adj_array) + before + n_.var(s.outs.at(value)) + after;
  }
  const ir::Type& whole = n_.fn.type_of(s.args[0]);
  if (of == ir::Op::Extract && whole.shape == ir::Shape::Struct)
    return n_.var(s.outs.at(0)) + field_adjoint_add(whole, s.adjoint_field(), n_.value(s.args.back()));
  const size_t operands = s.args.size() - 2;  // then the result and its adjoint
  std::vector<size_t> order(operands);
  for (size_t k = 0; k < operands; ++k) order[k] = k;
  std::string out;
  if (of == ir::Op::Call) {
    out = rule_by_reference(builtin_codegen(s.adjoint_builtin()).adjoint);
  } else if (of == ir::Op::Cast) {
    out = "kj::adj_cast";
  } else if (of == ir::Op::Extract) {
    out = "kj::adj_extract";
  } else {
    KJIT_CHECK(of == ir::Op::Insert, std::string("no adjoint rule to call for ") + ir::op_name(of));
    out = "kj::adj_insert";  // the vector, its indices, then the value (as kj::insert)
    order.erase(order.begin() + 1);
    order.push_back(1);
  }
  out += "(";
  for (size_t k : order) out += n_.value(s.args[k]) + ", ";
  out += n_.value(s.args[operands]);
  for (int64_t var : s.outs)
    if (var >= 0) out += ", " + n_.var(var);
  return out + ", " + n_.value(s.args.back()) + ")";
}

std::string ExprEmitter::expr(const ir::Stmt& s) {
  switch (s.op) {
    case ir::Op::Const: return const_literal(s);
    case ir::Op::ThreadId:
      return s.axis() < 0 ? "(kj_int32)kj_index" : "kj::launch_coord(dim, kj_index, " + std::to_string(s.axis()) + ")";
    case ir::Op::LaunchDim: return "dim.shape[" + std::to_string(s.axis()) + "]";
    case ir::Op::Call: return call(s);
    case ir::Op::Cast: return "kj::cast<" + s.type.cpp() + ">(" + n_.value(s.args[0]) + ")";
    case ir::Op::Construct: {
      if (s.args.empty()) return s.type.cpp() + "{}";
      if (s.type.is_array()) {  // an array over a device address
        std::string out = "kj::make_array<" + s.type.element().cpp() + ">(";
        for (size_t i = 0; i < s.args.size(); ++i) out += (i ? ", " : "") + n_.value(s.args[i]);
        return out + ")";
      }
      // Vectors and matrices hold an array member (double braces); quaternions,
      // transforms and structs list their members (brace elision fills nested ones).
      bool array_member = s.type.shape == ir::Shape::Vector || s.type.shape == ir::Shape::Matrix;
      std::string out = s.type.cpp() + (array_member ? "{{" : "{");
      for (size_t i = 0; i < s.args.size(); ++i) out += (i ? ", " : "") + n_.value(s.args[i]);
      return out + (array_member ? "}}" : "}");
    }
    case ir::Op::Extract: {
      const ir::Type& whole = n_.fn.type_of(s.args[0]);
      if (whole.shape == ir::Shape::Struct) return n_.value(s.args[0]) + "." + field_name(whole, s.field());
      std::string out = "kj::extract(" + n_.value(s.args[0]);
      for (size_t i = 1; i < s.args.size(); ++i) out += ", " + n_.value(s.args[i]);
      return out + ")";
    }
    case ir::Op::Insert: {
      const ir::Type& whole = n_.fn.type_of(s.args[0]);
      if (whole.shape == ir::Shape::Struct)
        return field_setter(whole, s.field()) + "(" + n_.value(s.args[0]) + ", " + n_.value(s.args[1]) + ")";
      std::string out = "kj::insert(" + n_.value(s.args[0]);
      for (size_t i = 2; i < s.args.size(); ++i) out += ", " + n_.value(s.args[i]);
      return out + ", " + n_.value(s.args[1]) + ")";
    }
    case ir::Op::LoadVar: return n_.var(s.var());
    case ir::Op::ArrayLoad:  // component by component (kj::load_of): see copies_by_component
      return copies_by_component(s.type) ? "kj::load_of(" + element(s, s.args.size() - 1) + ")"
                                         : element(s, s.args.size() - 1);
    case ir::Op::ArrayShape: return n_.value(s.args[0]) + ".shape[" + std::to_string(s.dimension()) + "]";
    case ir::Op::TangentCall: return tangent_call(s);
    case ir::Op::GradView: return grad_view(n_.value(s.args[0]));
    case ir::Op::Param: case ir::Op::DeclVar: case ir::Op::StoreVar: case ir::Op::ArrayStore:
    case ir::Op::ArrayAtomic: case ir::Op::If: case ir::Op::For: case ir::Op::While:
    case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return: case ir::Op::Print:
    case ir::Op::CallFunc: case ir::Op::GradFunc:
    case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
    case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments:
      break;
  }
  KJIT_CHECK(false, std::string("not an expression: ") + ir::op_name(s.op));
  return "";
}

}  // namespace kjit::codegen
