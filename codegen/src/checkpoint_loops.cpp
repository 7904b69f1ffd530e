// Two-level checkpointing of the adjoint's dynamic loops: the analysis of what each loop
// carries, and the bookkeeping code around its replay and its reverse.
#include "checkpoint_loops.hpp"

#include <set>

#include "kjit/error.hpp"

namespace kjit::codegen {

// Every loop of the adjoint's machinery is KJ_NO_UNROLL: NVVM unrolling the checkpoint copies
// and segment replays multiplies compile time (damp: ~1 s -> ~0.15 s) for nothing.

void check_loop_checkpoints(int checkpoints) {
  KJIT_CHECK(checkpoints >= 2 && checkpoints % 2 == 0, "loop_checkpoints must be an even number >= 2");
}

void emit_loop_declarations(SourceWriter& w, const AdjointLoop& L, const Names& n, int checkpoints, int indent) {
  w.line("kj_int32 " + L.name("n") + " = 0, " + L.name("stride") + " = 1, " + L.name("count") + " = 0; bool " +
             L.name("ovf") + " = false;", indent);
  const std::string C = std::to_string(checkpoints);
  for (int64_t var : L.state) {
    const std::string type = n.fn.vars.at(size_t(var)).type.cpp();
    w.line(type + " " + L.ckpt(n, var) + "[" + C + "];", indent);
    w.line(type + " " + L.seg(n, var) + "[" + C + "];", indent);
  }
}

std::string loop_start(const AdjointLoop& L) {
  return L.name("n") + " = 0; " + L.name("stride") + " = 1; " + L.name("count") + " = 0; " + L.name("ovf") + " = false;";
}

std::vector<std::string> loop_overflow(const AdjointLoop& L, const std::string& thread_flag) {
  return {L.name("ovf") + " = true; " + thread_flag + " = true;", "kj::report_status(dim, " + std::to_string(L.id + 1) + ");"};
}

void emit_checkpoint_step(SourceWriter& w, const AdjointLoop& L, const Names& n, int checkpoints, const LiveName& live,
                          const std::vector<std::string>& on_overflow, int indent, const ir::SourceLoc& loc,
                          const StateCopy& copy) {
  const std::string C = std::to_string(checkpoints);
  const std::string cnt = L.name("n"), stride = L.name("stride"), count = L.name("count"), ovf = L.name("ovf");
  const int in = indent;
  // The stride is a power of two: a mask, not a division (GCC kept an idiv per lane of the
  // lane function's replay, ~30 % of damp's adjoint).
  const std::string due = "(" + cnt + " & (" + stride + " - 1)) == 0";
  w.user_line("if (!" + ovf + " && " + due + ") {", in, loc);
  w.user_line("if (" + count + " == " + C + ") {", in + 1, loc);
  w.user_line("if (" + stride + " * 2 > " + C + ") {", in + 2, loc);
  for (const std::string& line : on_overflow) w.user_line(line, in + 3, loc);
  w.user_line("} else {", in + 2, loc);
  if (!L.state.empty()) {
    w.user_line("KJ_NO_UNROLL", in + 3, loc);
    w.user_line("for (int kj_q = 0; kj_q < " + C + " / 2; ++kj_q) {", in + 3, loc);
    for (int64_t var : L.state) w.user_line(copy(L.ckpt(n, var) + "[kj_q]", L.ckpt(n, var) + "[2 * kj_q]"), in + 4, loc);
    w.user_line("}", in + 3, loc);
  }
  w.user_line(count + " = " + C + " / 2;", in + 3, loc);
  w.user_line(stride + " *= 2;", in + 3, loc);
  w.user_line("}", in + 2, loc);
  w.user_line("}", in + 1, loc);
  w.user_line("if (!" + ovf + " && " + due + ") {", in + 1, loc);
  for (int64_t var : L.state) w.user_line(copy(L.ckpt(n, var) + "[" + count + "]", live(var)), in + 2, loc);
  w.user_line("++" + count + ";", in + 2, loc);
  w.user_line("}", in + 1, loc);
  w.user_line("}", in, loc);
}

void emit_reverse_segments(SourceWriter& w, const AdjointLoop& L, const Names& n, const LiveName& live, int indent,
                           const ir::SourceLoc& loc, const std::function<void(int)>& record,
                           const std::function<void(int)>& reverse, bool single_direct, const StateCopy& copy) {
  const std::string cnt = L.name("n"), stride = L.name("stride"), count = L.name("count");
  const std::string sg = L.name("seg"), k0 = L.name("k0"), k1 = L.name("k1"), k = L.name("k");
  const int in = indent;
  w.user_line("KJ_NO_UNROLL", in, loc);
  w.user_line("for (kj_int32 " + sg + " = " + count + " - 1; " + sg + " >= 0; --" + sg + ") {", in, loc);
  w.user_line("const kj_int32 " + k0 + " = " + sg + " * " + stride + ";", in + 1, loc);
  w.user_line("const kj_int32 " + k1 + " = " + k0 + " + " + stride + " < " + cnt + " ? " + k0 + " + " + stride +
                  " : " + cnt + ";", in + 1, loc);
  for (int64_t var : L.state) w.user_line(copy(live(var), L.ckpt(n, var) + "[" + sg + "]"), in + 1, loc);
  // A segment of one iteration (every segment while a loop has at most C iterations) may be
  // reversed straight from its checkpoint.
  const std::string several = "if (" + k0 + " + 1 < " + k1 + ")";
  if (!L.state.empty()) {
    const int r = in + 1 + single_direct;
    if (single_direct) w.user_line(several + " {", in + 1, loc);
    w.user_line("KJ_NO_UNROLL", r, loc);
    w.user_line("for (kj_int32 " + k + " = " + k0 + "; " + k + " < " + k1 + "; ++" + k + ") {", r, loc);
    for (int64_t var : L.state) w.user_line(copy(L.seg(n, var) + "[" + k + " - " + k0 + "]", live(var)), r + 1, loc);
    w.user_line("if (" + k + " + 1 == " + k1 + ") break;", r + 1, loc);
    record(r + 1);
    w.user_line("}", r, loc);
    if (single_direct) w.user_line("}", in + 1, loc);
  }
  w.user_line("KJ_NO_UNROLL", in + 1, loc);
  w.user_line("for (kj_int32 " + k + " = " + k1 + " - 1; " + k + " >= " + k0 + "; --" + k + ") {", in + 1, loc);
  for (int64_t var : L.state)
    w.user_line((single_direct ? several + " " : "") + copy(live(var), L.seg(n, var) + "[" + k + " - " + k0 + "]"),
                in + 2, loc);
  reverse(in + 2);
  w.user_line("}", in + 1, loc);
  w.user_line("}", in, loc);
}

}  // namespace kjit::codegen
