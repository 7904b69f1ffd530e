// The IR printer.
#include "kjit/ir/printer.hpp"

#include <cstdio>

#include "kjit/ir/structs.hpp"
#include "kjit/ir/visitor.hpp"

namespace kjit::ir {

namespace {

std::string v(ValueId id) { return "%" + std::to_string(id); }

std::string literal(const Stmt& s) {
  if (s.type.is_float()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", s.const_float());
    return buf;
  }
  if (s.type.is_bool()) return s.const_int() ? "true" : "false";
  return std::to_string(s.const_int());
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '"' || c == '\\') out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

class Printer : public StmtVisitor<Printer, std::string> {
 public:
  Printer(const Function& fn, const PrintOptions& o) : fn_(fn), o_(o) {}

  std::string function() {
    out_ = std::string(fn_.is_function ? "func " : "kernel ") + fn_.name + "(";
    for (size_t i = 0; i < fn_.params.size(); ++i)
      out_ += (i ? ", " : "") + fn_.params[i].name + ": " + fn_.params[i].type.str();
    out_ += ")";
    if (fn_.launch_ndim) out_ += " launch " + std::to_string(fn_.launch_ndim) + "d";
    if (fn_.is_function) out_ += " -> " + fn_.result_type().str();
    out_ += " {\n";
    block(fn_.body, 1);
    out_ += "}\n";
    return out_;
  }

  std::string visit_Const(const Stmt& s) { return "const " + literal(s); }
  std::string visit_Param(const Stmt& s) { return "param " + fn_.params.at(s.param()).name; }
  std::string visit_ThreadId(const Stmt& s) {
    return s.axis() < 0 ? "tid" : "tid." + std::to_string(s.axis());
  }
  std::string visit_LaunchDim(const Stmt& s) { return "launch_dim." + std::to_string(s.axis()); }
  std::string visit_Call(const Stmt& s) { return std::string(builtin_info(s.builtin()).name) + " " + args(s, 0); }
  std::string visit_Cast(const Stmt& s) { return "cast " + args(s, 0); }
  std::string visit_Construct(const Stmt& s) {
    return s.args.empty() ? "zero" : "construct " + args(s, 0);
  }
  std::string visit_Extract(const Stmt& s) {
    return "extract " + v(s.args[0]) + part(s, 1);
  }
  std::string visit_Insert(const Stmt& s) {
    return "insert " + v(s.args[0]) + part(s, 2) + " = " + v(s.args[1]);
  }
  std::string visit_CallFunc(const Stmt& s) {
    return "call_func " + fn_.callees.at(s.callee())->name + " " + args(s, 0);
  }
  std::string visit_GradFunc(const Stmt& s) {
    return "grad_func " + fn_.callees.at(s.callee())->name + " " + args(s, 0);
  }
  std::string visit_TangentCall(const Stmt& s) {
    std::string out = std::string("tangent ") + builtin_info(s.builtin()).name;
    for (size_t k = 0; k < s.args.size(); ++k) out += (k == s.primal_args() ? " dir " : " ") + v(s.args[k]);
    return out;
  }
  std::string visit_DeclVar(const Stmt& s) {
    return "var $" + std::to_string(s.var()) + " : " + fn_.vars.at(size_t(s.var())).type.str();
  }
  std::string visit_LoadVar(const Stmt& s) { return "load $" + std::to_string(s.var()); }
  std::string visit_StoreVar(const Stmt& s) {
    return "store $" + std::to_string(s.var()) + " = " + v(s.args[0]);
  }
  std::string visit_ArrayLoad(const Stmt& s) {
    return "array_load " + v(s.args[0]) + index(s, 1, s.args.size());
  }
  std::string visit_ArrayStore(const Stmt& s) {
    return "array_store " + v(s.args[0]) + index(s, 1, s.args.size() - 1) + " = " + v(s.args.back());
  }
  std::string visit_ArrayAtomic(const Stmt& s) {
    size_t operands = s.atomic_op() == AtomicOp::Cas ? 2 : 1;
    std::string text = std::string("atomic_") + atomic_op_name(s.atomic_op()) + " " +
                       v(s.args[0]) + index(s, 1, s.args.size() - operands);
    for (size_t i = s.args.size() - operands; i < s.args.size(); ++i) text += " " + v(s.args[i]);
    return text;
  }
  std::string visit_ArrayShape(const Stmt& s) {
    return "array_shape " + v(s.args[0]) + "." + std::to_string(s.dimension());
  }
  std::string visit_If(const Stmt&) { return ""; }
  std::string visit_For(const Stmt&) { return ""; }
  std::string visit_While(const Stmt&) { return ""; }
  std::string visit_Break(const Stmt&) { return "break"; }
  std::string visit_Continue(const Stmt&) { return "continue"; }
  std::string visit_Return(const Stmt&) { return "return"; }
  std::string visit_AccumVar(const Stmt& s) {
    return "accum $" + std::to_string(s.var()) + (s.subtracts() ? " -= " : " += ") + v(s.args[0]);
  }
  std::string visit_CallAdjoint(const Stmt& s) {
    const Op of = s.adjoint_of();
    std::string rule = of == Op::Call       ? builtin_info(s.adjoint_builtin()).name
                       : of == Op::CallFunc ? "adj_" + fn_.callees.at(size_t(s.bits))->name  // (ops.def)
                                            : op_name(of);
    if (of == Op::Extract && fn_.type_of(s.args[0]).shape == Shape::Struct)  // the field
      rule += "." + struct_info(fn_.type_of(s.args[0]).struct_id).fields.at(size_t(s.adjoint_field())).name;
    std::string out = "call_adjoint " + rule + " " + args(s, 0);
    if (of == Op::Print) return out + " \"" + escape(fn_.strings.at(s.adjoint_format())) + "\"";
    out += " into";
    for (int64_t var : s.outs) out += var < 0 ? " -" : " $" + std::to_string(var);
    return out;
  }
  std::string visit_StrongZero(const Stmt&) { return ""; }
  std::string visit_AdjArrayAdd(const Stmt& s) {
    return std::string(s.own_element() ? "adj_array_add own " : "adj_array_add atomic ") + v(s.args[0]) +
           index(s, 1, s.args.size() - 1) + " += " + v(s.args.back());
  }
  std::string visit_AdjArrayRead(const Stmt& s) {
    return "adj_array_read $" + std::to_string(s.var()) + (s.subtracts() ? " -= " : " += ") + v(s.args[0]) +
           index(s, 1, s.args.size());
  }
  std::string visit_AccumParam(const Stmt& s) {
    return "accum_param " + fn_.params.at(s.param()).name + " += " + v(s.args[0]);
  }
  std::string visit_Checkpoint(const Stmt& s) {
    static const char* const kParts[] = {"declare", "start", "step"};
    std::string out = std::string("checkpoint ") + kParts[size_t(s.checkpoint_part())] + " loop " +
                      std::to_string(s.loop()) + " overflow $" + std::to_string(s.outs.at(0)) + " state";
    for (size_t k = 1; k < s.outs.size(); ++k) out += " $" + std::to_string(s.outs[k]);
    return out;
  }
  std::string visit_ReverseSegments(const Stmt&) { return ""; }
  std::string visit_GradView(const Stmt& s) { return "grad_view " + v(s.args[0]); }
  std::string visit_Print(const Stmt& s) {
    return "print \"" + escape(fn_.strings.at(s.format())) + "\"" + (s.args.empty() ? "" : " ") + args(s, 0);
  }

 private:
  std::string args(const Stmt& s, size_t from) const {
    std::string out;
    for (size_t i = from; i < s.args.size(); ++i) out += (i > from ? ", " : "") + v(s.args[i]);
    return out;
  }
  std::string part(const Stmt& s, size_t from) const {
    const Type& t = fn_.type_of(s.args[0]);
    if (t.shape == Shape::Struct) return "." + struct_info(t.struct_id).fields.at(size_t(s.field())).name;
    return index(s, from, s.args.size());
  }
  std::string index(const Stmt& s, size_t from, size_t to) const {
    std::string out = "[";
    for (size_t i = from; i < to; ++i) out += (i > from ? ", " : "") + v(s.args[i]);
    return out + "]";
  }
  void line(int depth, const std::string& text, const Stmt* s) {
    std::string l(size_t(depth) * 2, ' ');
    l += text;
    if (o_.locations && s && s->loc.known()) {
      if (l.size() < 48) l.resize(48, ' ');
      l += "  # " + s->loc.short_str();
    }
    out_ += l + "\n";
  }
  void block(const Block& b, int depth) {
    for (const Stmt& s : b.stmts) stmt(s, depth);
    if (b.yield != kNoValue) line(depth, "yield " + v(b.yield), nullptr);
  }
  void stmt(const Stmt& s, int depth) {
    switch (s.op) {
      case Op::If:
        line(depth, "if " + v(s.args[0]) + " {", &s);
        block(s.regions[0], depth + 1);
        if (!s.regions[1].stmts.empty()) {
          line(depth, "} else {", nullptr);
          block(s.regions[1], depth + 1);
        }
        line(depth, "}", nullptr);
        return;
      case Op::For:
        line(depth, "for " + v(s.regions[0].args.at(0)) + " = " + v(s.args[0]) + " to " +
                        v(s.args[1]) + " step " + v(s.args[2]) + " {", &s);
        block(s.regions[0], depth + 1);
        line(depth, "}", nullptr);
        return;
      case Op::While:
        line(depth, "while {", &s);
        block(s.regions[0], depth + 1);
        line(depth, "} do {", nullptr);
        block(s.regions[1], depth + 1);
        line(depth, "}", nullptr);
        return;
      case Op::StrongZero:
        line(depth, "strong_zero " + v(s.args[0]) + " {", &s);
        block(s.regions[0], depth + 1);
        line(depth, "}", nullptr);
        return;
      case Op::ReverseSegments: {
        std::string state;
        for (int64_t var : s.outs) state += " $" + std::to_string(var);
        line(depth, "reverse_segments loop " + std::to_string(s.loop()) + " state" + state + " record " +
                        v(s.regions[0].args.at(0)) + " {", &s);
        block(s.regions[0], depth + 1);
        line(depth, "} reverse " + v(s.regions[1].args.at(0)) + " {", nullptr);
        block(s.regions[1], depth + 1);
        line(depth, "}", nullptr);
        return;
      }
      case Op::AccumVar: case Op::CallAdjoint: case Op::AdjArrayAdd: case Op::AdjArrayRead:
      case Op::AccumParam: case Op::Checkpoint: case Op::GradView:
      case Op::Const: case Op::Param: case Op::ThreadId: case Op::LaunchDim: case Op::Call:
      case Op::Cast: case Op::Construct: case Op::Extract: case Op::Insert: case Op::DeclVar:
      case Op::LoadVar: case Op::StoreVar: case Op::ArrayLoad: case Op::ArrayStore:
      case Op::ArrayAtomic: case Op::ArrayShape: case Op::Break: case Op::Continue:
      case Op::Return: case Op::Print: case Op::CallFunc: case Op::GradFunc: case Op::TangentCall:
        break;  // one line, below
    }
    std::string text = visit(s);
    if (s.result != kNoValue) text = v(s.result) + " = " + text + " : " + s.type.str();
    line(depth, text, &s);
  }

  const Function& fn_;
  const PrintOptions& o_;
  std::string out_;
};

}  // namespace

std::string print(const Function& fn, const PrintOptions& options) {
  return Printer(fn, options).function();
}

}  // namespace kjit::ir
