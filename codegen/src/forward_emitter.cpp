// Forward code: one C++ statement per IR statement, control flow as C++ control flow.
#include "forward_emitter.hpp"

#include "kjit/error.hpp"

namespace kjit::codegen {

void emit_forward_block(SourceWriter& w, ExprEmitter& ex, const Names& n, const ir::Block& block,
                        int indent) {
  for (const ir::Stmt& s : block.stmts) {
    const ir::SourceLoc& loc = s.loc;
    if (s.op == ir::Op::Param) continue;  // parameters are named directly
    if (ExprEmitter::is_expression(s)) {
      w.user_line("const " + s.type.cpp() + " " + n.value(s.result) + " = " + ex.expr(s) + ";", indent, loc);
      continue;
    }
    switch (s.op) {
      case ir::Op::DeclVar: {
        const ir::Type& t = n.fn.vars.at(size_t(s.imm)).type;
        w.user_line(t.cpp() + " " + n.var(s.imm) + ";", indent, loc);
        break;
      }
      case ir::Op::StoreVar:
        w.user_line(n.var(s.imm) + " = " + n.value(s.args[0]) + ";", indent, loc);
        break;
      case ir::Op::ArrayStore:
        w.user_line(ex.element(s, s.args.size() - 2) + " = " + n.value(s.args.back()) + ";", indent, loc);
        break;
      case ir::Op::ArrayAtomic:
        w.user_line("const " + s.type.cpp() + " " + n.value(s.result) + " = " + ex.atomic(s) + ";", indent, loc);
        break;
      case ir::Op::If:
        w.user_line("if (" + n.value(s.args[0]) + ") {", indent, loc);
        emit_forward_block(w, ex, n, s.regions[0], indent + 1);
        if (!s.regions[1].stmts.empty()) {
          w.user_line("} else {", indent, loc);
          emit_forward_block(w, ex, n, s.regions[1], indent + 1);
        }
        w.user_line("}", indent, loc);
        break;
      case ir::Op::For: {
        const std::string i = n.value(s.regions[0].args.at(0));
        const std::string begin = n.value(s.args[0]), end = n.value(s.args[1]), step = n.value(s.args[2]);
        w.user_line("for (kj_int32 " + i + " = " + begin + "; " + step + " > 0 ? " + i + " < " + end +
                        " : (" + step + " < 0 && " + i + " > " + end + "); " + i + " += " + step + ") {",
                    indent, loc);
        emit_forward_block(w, ex, n, s.regions[0], indent + 1);
        w.user_line("}", indent, loc);
        break;
      }
      case ir::Op::While:
        w.user_line("for (;;) {", indent, loc);
        emit_forward_block(w, ex, n, s.regions[0], indent + 1);
        w.user_line("if (!" + n.value(s.regions[0].yield) + ") break;", indent + 1, loc);
        emit_forward_block(w, ex, n, s.regions[1], indent + 1);
        w.user_line("}", indent, loc);
        break;
      case ir::Op::Break: w.user_line("break;", indent, loc); break;
      case ir::Op::Continue: w.user_line("continue;", indent, loc); break;
      case ir::Op::Return: w.user_line("return;", indent, loc); break;
      case ir::Op::Print: {
        std::string text = "printf(\"";
        for (char c : n.fn.strings.at(size_t(s.imm))) {
          if (c == '\n') text += "\\n";
          else if (c == '"' || c == '\\') text += std::string("\\") + c;
          else text += c;
        }
        text += "\"";
        for (ir::ValueId a : s.args) text += ", " + n.value(a);
        w.user_line(text + ");", indent, loc);
        break;
      }
      default:
        KJIT_CHECK(false, std::string("forward codegen does not handle ") + ir::op_name(s.op));
    }
  }
}

}  // namespace kjit::codegen
