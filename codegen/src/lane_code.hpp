// What the cpu's two lane functions (the forward one, lane_emitter.hpp, and the adjoint one,
// adjoint_lanes.hpp) write with: KJ_LANES consecutive threads run together, one short loop over
// the lanes (a "unit") per run of statements that differ per lane, uniform statements and
// control flow as scalar C++, lane masks for branches and loops on per-lane conditions, and
// kj::lanes<T> arrays for the values that cross units.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "expr_emitter.hpp"
#include "lane_analysis.hpp"
#include "lower.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// The lanes per block of `fn`'s lane functions (the prelude's macro): KJ_WIDE_LANES when it
/// has a loop and every value and variable is 32 bits or narrower per scalar (two vectors per
/// value with AVX-512, as doubles take at KJ_LANES), else KJ_LANES. A loop's iterations are
/// chains of dependent operations (a forward's `w = w * c`, its tangent's `dw = dw * c + w * dc`,
/// an adjoint's replays and reverses), and a second block of lanes fills their latency.
/// Straight-line code (springs) gains nothing from it and would compile twice the vector code.
std::string lane_width(const ir::Function& fn);

/// The lane analysis the pass list planned for a lane function (`which`: "forward" or
/// "adjoint"); an Internal error when it planned none.
const LaneAnalysis& planned(const std::optional<LaneAnalysis>& analysis, const char* which);

/// The shared half of a lane function's emitter. The text is written twice: a planning pass
/// into scratch text records in which units each value is defined and used, which decides
/// the values that need a lane array; the second pass writes the real text.
class LaneCode {
 protected:
  /// Forward: the kernel as it runs (effects included, declarations where they occur).
  /// Replay: the adjoint's forward replay (no effects, device functions through their
  /// replays, every value and variable declared at function scope by the subclass).
  enum class Mode { Forward, Replay };
  /// A run of varying statements that one lane loop computes.
  using Run = std::vector<const ir::Stmt*>;
  /// What a unit does after its run's statements, inside the lane loop: the values it reads
  /// (brought in first) and the code, given the lane's activity bit ("" when every lane runs)
  /// and the indent; `after`, when set, writes what follows the lane loop (at its indent).
  struct UnitTail {
    std::vector<ir::ValueId> uses;
    std::function<void(const std::string& active, int indent)> write;
    std::function<void(int indent)> after;
  };

  /// Lane code for `fn` (its jump-lowered form: Break, Continue and Return as flags) under
  /// `analysis`, one of its lane analyses. `width`: the prelude's macro for the lanes per
  /// block, "KJ_LANES" or "KJ_WIDE_LANES".
  LaneCode(SourceWriter& w, const LoweredFunction& fn, const LaneAnalysis& analysis, const FunctionNames* functions,
           Mode mode, std::string width = "KJ_LANES");
  virtual ~LaneCode() = default;

  /// Runs `emit` into scratch text and decides the lane arrays; then the caller writes the
  /// real text (declarations first, then `emit` again).
  void plan(const std::function<void()>& emit);
  bool planning() const { return planning_; }
  SourceWriter& w() { return *w_; }

  // --- forward statements -------------------------------------------------------------
  /// Statements [from, to) of `b` under `mask` (the name of an int32 lane mask; "" when every
  /// lane runs). With `rest`, the last run is not written but handed back in it (the adjoint
  /// writes its replay and its reverse in one loop).
  void emit_stmts(const ir::Block& b, size_t from, size_t to, const std::string& mask, int indent, Run* rest);
  void emit_block(const ir::Block& b, const std::string& mask, int indent) {
    emit_stmts(b, 0, b.stmts.size(), mask, indent, nullptr);
  }
  /// A loop statement under `mask`.
  virtual void emit_loop(const ir::Stmt& s, const std::string& mask, int indent) = 0;
  /// One lane loop over `run` (and `tail`), under `mask`; clears `run`.
  void flush(Run& run, const std::string& mask, int indent, const UnitTail* tail = nullptr);
  /// An If: scalar when its condition is uniform, else one mask per side (each side skipped
  /// when no lane takes it). `side(block, mask, indent)` writes a side.
  void emit_if(const ir::Stmt& s, const std::string& mask, int indent,
               const std::function<void(const ir::Block&, const std::string&, int)>& side);
  /// A value statement computed once for the block.
  void emit_uniform(const ir::Stmt& s, int indent);
  /// Whether the replay leaves `s` out: effects belong to the forward launch.
  bool skipped(const ir::Stmt& s) const;
  /// The varying statements a flattened If's side computes inside its lane loop.
  Run in_loop(const ir::Block& side) const;
  /// Calls fn on each statement a run's lane loop writes, flattened Ifs' inner ones included.
  void for_each_in_loop(const Run& run, const std::function<void(const ir::Stmt&)>& fn) const;

  // --- masks and lane arrays ----------------------------------------------------------
  /// A new mask = `outer` && `bit` (a lane expression), declared and computed at `indent`.
  std::string narrowed(const std::string& outer, const std::string& bit, int indent, const ir::SourceLoc& loc);
  std::string new_bit() { return "kj_b" + std::to_string(bits_++); }
  /// The value of varying `v` in lane kj_l, read by control flow (from its lane array).
  std::string control_lane(ir::ValueId v);
  std::string lane_name(ir::ValueId v) const { return n_.value(v) + "_l"; }
  std::string var_lanes(int64_t var) const { return n_.var(var) + "_l"; }
  /// The value of `v` in lane kj_l, in a lane loop outside `v`'s unit.
  std::string at_lane(ir::ValueId v) const { return a_.varying(v) ? lane_name(v) + ".get(kj_l)" : n_.value(v); }
  /// The type of a value of type `t` per lane ("kj::lanes<float> ").
  std::string lanes_of(const ir::Type& t) const { return lanes_of(t.cpp()); }
  std::string lanes_of(const std::string& cpp) const {
    return "kj::lanes<" + cpp + (narrow() ? "" : ", " + width_) + "> ";
  }
  /// The loop over the block's lanes (kj_l).
  std::string loop() const { return narrow() ? "KJ_LANE_LOOP" : "KJ_LANE_LOOP_N(" + width_ + ")"; }
  /// Whether any lane of mask `m` is on.
  std::string any_lane(const std::string& m) const {
    return "kj::lanes_any" + (narrow() ? "" : "<" + width_ + ">") + "(" + m + ")";
  }
  /// The lanes per block (a prelude macro).
  const std::string& width() const { return width_; }
  bool has_array(ir::ValueId v) const { return lane_array_.at(v); }
  /// The unit being written (-1: none).
  int unit() const { return unit_; }

  const ir::Function& fn_;  // jumps lowered to flags
  Names n_;
  ExprEmitter ex_;
  const LaneAnalysis& a_;  // the pass list's (LoweredFunction)
  const Mode mode_;
  /// The forward's block stores (top-level stores of fn_, lane_emitter.cpp): each unit
  /// collects their lanes' values in an aligned block and writes it with kj::store_block
  /// after its loop. Empty in the replay.
  std::set<const ir::Stmt*> blocks_;

 private:
  void emit_control(const ir::Stmt& s, const std::string& mask, int indent);
  void hoist(const ir::Stmt& s, int indent);
  void declare_lanes(const ir::Stmt& decl, int indent);
  void note_use(ir::ValueId v);
  void rematerialize(ir::ValueId v, std::set<ir::ValueId>& have, int indent);
  void emit_in_loop(const Run& stmts, const std::string& active, int in);
  void emit_flattened_if(const ir::Stmt& s, const std::string& active, int in);
  void emit_lane_stmt(const ir::Stmt& s, const std::string& active, int in);
  bool batched(const ir::Stmt& s) const;
  void emit_batch_call(const ir::Stmt& s, int indent);
  /// The batched call (batched) of the unit being written, whose loop gathers its operands.
  const ir::Stmt* batch_ = nullptr;
  /// The prefix of the arrays a batched call's loop gathers its lanes' operands in.
  std::string batch_name(const ir::Stmt& call) const { return "kj_" + n_.value(call.result); }
  bool narrow() const { return width_ == "KJ_LANES"; }
  /// The block a block store collects its lanes' values in (one per array: named after it).
  std::string block_name(const ir::Stmt& store) const { return "kj_s_" + n_.value(store.args[0]); }

  const std::string width_;
  SourceWriter* w_;
  SourceWriter scratch_;
  bool planning_ = false;
  int unit_ = -1;
  int units_ = 0;
  int masks_ = 0;
  int bits_ = 0;
  std::vector<std::set<int>> defined_in_;  // by value: the units computing it
  std::vector<std::set<int>> used_in_;     // by value: the units reading it
  std::vector<bool> control_use_;          // by value: read by control flow
  std::vector<bool> lane_array_;           // by value: kept per lane beyond its unit
};

}  // namespace kjit::codegen
