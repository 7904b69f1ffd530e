// The forward lane function: a kernel's forward body over blocks of lane_width threads (the
// shared machinery is LaneCode's), with loops on per-lane conditions under masks.
//
// A value that every lane computes the same way stays one scalar, so that uniform loops and
// branches stay ordinary C++ control flow. Everything else lives in lane loops; a small branch
// on a varying condition runs inside its lane loop, both sides under a lane-local bit (as a
// vectorizer if-converts); a larger one, or a loop, on a varying condition runs under a mask
// (int32 per lane) and is skipped when no lane is active. Under a bit or a mask, stores to
// variables select, and anything that may fault or has an effect (array accesses, atomics,
// device functions, prints, dynamic component indices, random draws) runs only for active
// lanes. Atomics get lane loops of their own. Early exits are lowered to flags first
// (lower_jumps), so Break, Continue and Return become masks like any branch. A block store (an
// array a kernel only writes, each thread its own element) collects its 16 values and writes
// them as one block, non-temporally when the array is large (kj::store_block).
#include "lane_emitter.hpp"

#include "kjit/error.hpp"
#include "lane_code.hpp"
#include "own_index.hpp"

namespace kjit::codegen {

namespace {

class LaneEmitter : LaneCode {
 public:
  LaneEmitter(SourceWriter& w, const LoweredFunction& fn, const FunctionNames* functions)
      : LaneCode(w, fn, planned(fn.forward_lanes, "forward"), functions, Mode::Forward, lane_width(*fn.traced)) {
    blocks_ = block_accesses(fn_, ir::Op::ArrayStore);
  }

  LaneFunction emit(const std::string& name, const std::vector<EntryParam>& params) {
    plan([&] { emit_block(fn_.body, "", 1); });
    w().line(lane_signature(name, params) + " {");
    emit_block(fn_.body, "", 1);
    w().line("}");
    return {width(), !blocks_.empty()};
  }

 private:
  void emit_loop(const ir::Stmt& s, const std::string& mask, int indent) override {
    const ir::SourceLoc& loc = s.loc;
    if (s.op == ir::Op::For) {
      const ir::ValueId iv = s.regions[0].args.at(0);
      if (!a_.varying(iv)) {
        const std::string i = n_.value(iv), begin = n_.value(s.args[0]), end = n_.value(s.args[1]),
                          step = n_.value(s.args[2]);
        w().user_line("for (kj_int32 " + i + " = " + begin + "; " + for_condition(i, end, step) + "; " + i + " += " + step + ") {",
                      indent, loc);
        emit_block(s.regions[0], mask, indent + 1);
        w().user_line("}", indent, loc);
        return;
      }
      control_lane(iv);
      const std::string i = lane_name(iv) + ".v[kj_l]", end = control_lane(s.args[1]), step = control_lane(s.args[2]);
      w().user_line(lanes_of("kj_int32") + lane_name(iv) + ";", indent, loc);
      w().user_line(loop() + " " + i + " = " + control_lane(s.args[0]) + ";", indent, loc);
      const std::string m = narrowed(mask, "true", indent, loc);
      w().user_line("for (;;) {", indent, loc);
      w().user_line(loop() + " " + m + "[kj_l] = " + m + "[kj_l] && (" + for_condition(i, end, step) + ");",
                    indent + 1, loc);
      w().user_line("if (!" + any_lane(m) + ") break;", indent + 1, loc);
      emit_block(s.regions[0], m, indent + 1);
      w().user_line(loop() + " " + i + " += " + step + ";", indent + 1, loc);
      w().user_line("}", indent, loc);
      return;
    }
    const ir::ValueId y = s.regions[0].yield;
    if (!a_.varying(y)) {
      w().user_line("for (;;) {", indent, loc);
      emit_block(s.regions[0], mask, indent + 1);
      w().user_line("if (!" + n_.value(y) + ") break;", indent + 1, loc);
      emit_block(s.regions[1], mask, indent + 1);
      w().user_line("}", indent, loc);
      return;
    }
    const std::string m = narrowed(mask, "true", indent, loc);
    w().user_line("for (;;) {", indent, loc);
    emit_block(s.regions[0], m, indent + 1);
    w().user_line(loop() + " " + m + "[kj_l] = " + m + "[kj_l] && " + control_lane(y) + ";",
                  indent + 1, loc);
    w().user_line("if (!" + any_lane(m) + ") break;", indent + 1, loc);
    emit_block(s.regions[1], m, indent + 1);
    w().user_line("}", indent, loc);
  }
};

}  // namespace

bool wants_lane_function(const ir::Function& fn, const CodegenOptions& options) {
  if (options.bounds_check || !options.lane_functions) return false;
  bool control = false;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    control |= LaneAnalysis::is_control(s) || s.op == ir::Op::ArrayAtomic;
  });
  return control;
}

bool wants_forward_lane_function(const ir::Function& fn, const CodegenOptions& options) {
  return wants_lane_function(fn, options) || (!options.bounds_check && options.lane_functions && !block_accesses(fn, ir::Op::ArrayStore).empty());
}

std::string lane_signature(const std::string& name, const std::vector<EntryParam>& params) {
  std::string sig = "static void " + name + "(const kj::launch_bounds_t& dim, kj_int32 kj_base";
  for (const EntryParam& p : params)
    switch (p.kind) {
      case EntryParam::Kind::Array: sig += ", const kj::dense_array_t<" + p.element + ">& " + p.name; break;
      case EntryParam::Kind::Value: sig += ", " + p.type + " " + p.name; break;
      case EntryParam::Kind::Sum:   // lane functions run where no sum is wanted (entry_points.hpp)
      case EntryParam::Kind::None: break;
    }
  return sig + ")";
}

LaneFunction emit_lane_function(SourceWriter& w, const LoweredFunction& fn, const std::string& name,
                                const std::vector<EntryParam>& params,
                                const FunctionNames* functions) {
  return LaneEmitter(w, fn, functions).emit(name, params);
}

}  // namespace kjit::codegen
