// Forward code: one C++ statement per IR statement, control flow as C++ control flow.
#include "forward_emitter.hpp"

#include "adjoint_emitter.hpp"
#include "checkpoint_loops.hpp"
#include "kjit/error.hpp"

namespace kjit::codegen {

namespace {
/// The adjoint loop a Checkpoint or ReverseSegments statement names, numbered as the module's.
AdjointLoop loop_of(const ir::Stmt& s, const LoopCheckpoints* loops) {
  KJIT_CHECK(loops != nullptr, std::string("forward codegen reached an adjoint loop's ") + ir::op_name(s.op));
  AdjointLoop L;
  L.id = loops->first_loop + int(s.loop());
  L.state.assign(s.outs.begin() + (s.op == ir::Op::Checkpoint ? 1 : 0), s.outs.end());
  return L;
}
}  // namespace

void emit_forward_block(SourceWriter& w, ExprEmitter& ex, const Names& n, const ir::Block& block,
                        int indent, ForwardMode mode, const LoopCheckpoints* loops) {
  const bool without_effects = mode == ForwardMode::Replay;
  // In a user adjoint, accesses to an array go through this guard (see ForwardMode).
  auto guarded = [&](const ir::Stmt& s) {
    return mode == ForwardMode::UserAdjoint ? if_present(n.value(s.args[0])) : std::string();
  };
  for (const ir::Stmt& s : block.stmts) {
    const ir::SourceLoc& loc = s.loc;
    if (s.op == ir::Op::Param) continue;  // parameters are named directly
    if (s.op == ir::Op::ArrayLoad && mode == ForwardMode::UserAdjoint) {
      w.user_line("const " + s.type.cpp() + " " + n.value(s.result) + " = " + array_present(n.value(s.args[0])) + " ? " +
                      ex.expr(s) + " : " + s.type.cpp() + "{};", indent, loc);
      continue;
    }
    if (ExprEmitter::is_expression(s)) {
      w.user_line("const " + s.type.cpp() + " " + n.value(s.result) + " = " + ex.expr(s) + ";", indent, loc);
      continue;
    }
    switch (s.op) {
      case ir::Op::DeclVar: {
        const ir::Type& t = n.fn.vars.at(size_t(s.var())).type;
        w.user_line(t.cpp() + " " + n.var(s.var()) + ";", indent, loc);
        break;
      }
      case ir::Op::StoreVar:
        w.user_line(n.var(s.var()) + " = " + n.value(s.args[0]) + ";", indent, loc);
        break;
      case ir::Op::ArrayStore:
        if (!without_effects)
          w.user_line(guarded(s) + (copies_by_component(n.fn.type_of(s.args.back()))
                                        ? "kj::store_to(" + ex.element(s, s.args.size() - 2) + ", " + n.value(s.args.back()) + ")"
                                        : ex.element(s, s.args.size() - 2) + " = " + n.value(s.args.back())) +
                      ";", indent, loc);
        break;
      case ir::Op::ArrayAtomic:
        if (without_effects)  // the value is the element's current one (a replay without effects)
          w.user_line("const " + s.type.cpp() + " " + n.value(s.result) + " = " + ex.element(s, s.args.size() - 1 - (s.atomic_op() == ir::AtomicOp::Cas ? 2 : 1)) + ";", indent, loc);
        else if (mode == ForwardMode::UserAdjoint)
          w.user_line("const " + s.type.cpp() + " " + n.value(s.result) + " = " + array_present(n.value(s.args[0])) + " ? " +
                          ex.atomic(s) + " : " + s.type.cpp() + "{};", indent, loc);
        else
          w.user_line("const " + s.type.cpp() + " " + n.value(s.result) + " = " + ex.atomic(s) + ";", indent, loc);
        break;
      case ir::Op::Call:  // a builtin with no result: a side effect (expect_near, breakpoint)
        if (!without_effects) w.user_line(ex.expr(s) + ";", indent, loc);
        break;
      case ir::Op::CallFunc:
        if (s.type.is_void()) {
          if (!without_effects) w.user_line(ex.call_function(s, false) + ";", indent, loc);
        } else {
          w.user_line("const " + s.type.cpp() + " " + n.value(s.result) + " = " + ex.call_function(s, without_effects) + ";", indent, loc);
        }
        break;
      case ir::Op::GradFunc:  // grad_<f>: the function's adjoint from adj_ret = 1, no effects
        w.user_line("const " + s.type.cpp() + " " + n.value(s.result) + " = " + ex.call_function(s, false) + ";", indent, loc);
        break;
      case ir::Op::If:
        w.user_line("if (" + n.value(s.args[0]) + ") {", indent, loc);
        emit_forward_block(w, ex, n, s.regions[0], indent + 1, mode, loops);
        if (!s.regions[1].stmts.empty()) {
          w.user_line("} else {", indent, loc);
          emit_forward_block(w, ex, n, s.regions[1], indent + 1, mode, loops);
        }
        w.user_line("}", indent, loc);
        break;
      case ir::Op::For: {
        const std::string i = n.value(s.regions[0].args.at(0));
        const std::string begin = n.value(s.args[0]), end = n.value(s.args[1]), step = n.value(s.args[2]);
        w.user_line("for (kj_int32 " + i + " = " + begin + "; " + for_condition(i, end, step) + "; " + i + " += " + step + ") {",
                    indent, loc);
        emit_forward_block(w, ex, n, s.regions[0], indent + 1, mode, loops);
        w.user_line("}", indent, loc);
        break;
      }
      case ir::Op::While:
        w.user_line("for (;;) {", indent, loc);
        emit_forward_block(w, ex, n, s.regions[0], indent + 1, mode, loops);
        w.user_line("if (!" + n.value(s.regions[0].yield) + ") break;", indent + 1, loc);
        emit_forward_block(w, ex, n, s.regions[1], indent + 1, mode, loops);
        w.user_line("}", indent, loc);
        break;
      case ir::Op::Break: w.user_line("break;", indent, loc); break;
      case ir::Op::Continue: w.user_line("continue;", indent, loc); break;
      case ir::Op::Return: w.user_line("return;", indent, loc); break;
      case ir::Op::Print:
        if (!without_effects) w.user_line(ex.print(s, false) + ";", indent, loc);
        break;
      // The reverse transform's statements (an adjoint kernel's sweep).
      case ir::Op::AccumVar:
        w.user_line(n.var(s.var()) + (s.subtracts() ? " -= " : " += ") + n.value(s.args[0]) + ";", indent, loc);
        break;
      case ir::Op::CallAdjoint:
        w.user_line(ex.call_adjoint(s) + ";", indent, loc);
        break;
      case ir::Op::StrongZero: {
        std::vector<std::string> accumulators;  // what the region adds into, for CUDA's selects
        ir::for_each_stmt(s.regions[0], [&](const ir::Stmt& r) {
          if (r.op == ir::Op::AccumVar || r.op == ir::Op::AdjArrayRead) accumulators.push_back(n.var(r.var()));
          for (int64_t var : r.outs)
            if (var >= 0) accumulators.push_back(n.var(var));
        });
        const StrongZeroText text = strong_zero_parts(n.value(s.args[0]), accumulators);
        w.user_line(text.open.substr(0, text.open.find_last_not_of(' ') + 1), indent, loc);
        emit_forward_block(w, ex, n, s.regions[0], indent + 1, mode, loops);
        w.user_line(text.close.substr(text.close.find_first_not_of(' ')), indent, loc);
        break;
      }
      case ir::Op::AdjArrayAdd: {  // only where the caller asked for the array's adjoint
        const std::string a = n.value(s.args[0]), element = ex.element(s, s.args.size() - 2);
        const std::string& value = n.value(s.args.back());
        w.user_line(if_present(a) + ex.adjoint_add(a, element, value, n.fn.type_of(s.args.back()), s.own_element()) +
                        ";" + (s.own_element() ? ExprEmitter::kOwnAddComment : ""),
                    indent, loc);
        break;
      }
      case ir::Op::AdjArrayRead:
        w.user_line(if_present(n.value(s.args[0])) + n.var(s.var()) + (s.subtracts() ? " -= " : " += ") +
                        ex.element(s, s.args.size() - 1) + ";", indent, loc);
        break;
      case ir::Op::AccumParam:
        w.user_line(n.adj_param(s.param()) + " += " + n.value(s.args[0]) + ";", indent, loc);
        break;
      case ir::Op::Checkpoint: {
        const AdjointLoop L = loop_of(s, loops);
        switch (s.checkpoint_part()) {
          case ir::CheckpointPart::Declare:
            emit_loop_declarations(w, L, n, loops->checkpoints, indent);
            break;
          case ir::CheckpointPart::Start:  // the loop follows
            w.user_line(loop_start(L), indent, loc);
            w.user_line("KJ_NO_UNROLL", indent, loc);
            break;
          case ir::CheckpointPart::Step:
            emit_checkpoint_step(w, L, n, loops->checkpoints, [&](int64_t var) { return n.var(var); },
                                 loop_overflow(L, n.var(s.outs.at(0))), indent, loc);
            w.user_line("++" + L.name("n") + ";", indent, loc);
            break;
        }
        break;
      }
      case ir::Op::ReverseSegments: {
        const AdjointLoop L = loop_of(s, loops);
        auto region = [&](size_t r) {
          return [&, r](int in) { emit_forward_block(w, ex, n, s.regions[r], in, mode, loops); };
        };
        emit_reverse_segments(w, L, n, [&](int64_t var) { return n.var(var); }, indent, loc, region(0), region(1));
        break;
      }
      case ir::Op::Const: case ir::Op::ThreadId: case ir::Op::LaunchDim: case ir::Op::Cast:
      case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert: case ir::Op::LoadVar:
      case ir::Op::ArrayLoad: case ir::Op::ArrayShape: case ir::Op::Param:
      case ir::Op::TangentCall: case ir::Op::GradView:  // handled above
        KJIT_CHECK(false, std::string("forward codegen reached the expression ") + ir::op_name(s.op));
        break;
    }
  }
}

void emit_adjoint_ir(SourceWriter& w, const ir::Function& adjoint, size_t forward_params, const FunctionNames* functions,
                     const LoopCheckpoints& loops) {
  Names names(adjoint);
  ir::for_each_stmt(adjoint.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param && s.param() >= forward_params) {
      const size_t k = s.param() - forward_params;  // the adjoints, then a function's kj_adj_ret
      names.values.at(s.result) = k < forward_params ? names.adj_param(k) : adjoint.params.at(s.param()).name;
    }
    if (s.op != ir::Op::ReverseSegments) return;
    AdjointLoop loop;  // the iteration, as the segments' loops name it
    loop.id = loops.first_loop + int(s.loop());
    for (const ir::Block& r : s.regions) names.values.at(r.args.at(0)) = loop.name("k");
  });
  check_loop_checkpoints(loops.checkpoints);
  ExprEmitter ex(names, functions);
  w.line("// the reverse transform's adjoint: forward replay (no stores, atomics or prints), then the reverse sweep", 1);
  emit_forward_block(w, ex, names, adjoint.body, 1, ForwardMode::Replay, &loops);
}

}  // namespace kjit::codegen
