// Lane loops, lane arrays, masks and the forward form of statements in lane functions.
#include "lane_code.hpp"

#include "kjit/error.hpp"

namespace kjit::codegen {

std::string lane_width(const ir::Function& fn) {
  bool loop = false;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) { loop |= s.op == ir::Op::For || s.op == ir::Op::While; });
  if (!loop) return "KJ_LANES";
  auto narrow = [](const ir::Type& t) { return t.shape != ir::Shape::Struct && ir::scalar_bytes(t.scalar) <= 4; };
  for (const ir::Type& t : fn.values)
    if (!t.is_void() && !narrow(t)) return "KJ_LANES";
  for (const ir::LocalVar& v : fn.vars)
    if (!narrow(v.type)) return "KJ_LANES";
  return "KJ_WIDE_LANES";
}

namespace {
/// An atomic gets a lane loop of its own: its loop stays scalar (a read-modify-write per
/// lane), and the arithmetic around it, in the loops before and after, vectorizes.
bool runs_alone(const ir::Stmt& s) { return s.op == ir::Op::ArrayAtomic; }
}  // namespace

const LaneAnalysis& planned(const std::optional<LaneAnalysis>& analysis, const char* which) {
  KJIT_CHECK(analysis.has_value(), std::string("the pass list planned no ") + which + " lane analysis for this kernel");
  return *analysis;
}

LaneCode::LaneCode(SourceWriter& w, const LoweredFunction& fn, const LaneAnalysis& analysis,
                   const FunctionNames* functions, Mode mode, std::string width)
    : fn_(fn.jumps_lowered), n_(fn_), ex_(n_, functions), a_(analysis), mode_(mode), width_(std::move(width)), w_(&w), scratch_("scratch", false), defined_in_(fn_.values.size()),
      used_in_(fn_.values.size()), control_use_(fn_.values.size(), false), lane_array_(fn_.values.size(), false) {}

void LaneCode::plan(const std::function<void()>& emit) {
  SourceWriter* real = w_;
  w_ = &scratch_;
  planning_ = true;
  emit();
  planning_ = false;
  w_ = real;
  for (size_t v = 0; v < fn_.values.size(); ++v) {
    if (!a_.varying(ir::ValueId(v))) continue;
    bool crosses = control_use_[v];
    if (!a_.remat(ir::ValueId(v)))
      for (int u : used_in_[v]) crosses = crosses || !defined_in_[v].count(u);
    lane_array_[v] = crosses;
  }
  units_ = masks_ = bits_ = 0;
}

void LaneCode::note_use(ir::ValueId v) {
  if (!planning_ || v == ir::kNoValue || !a_.varying(v)) return;
  if (unit_ < 0) control_use_[v] = true;
  else used_in_[v].insert(unit_);
}

std::string LaneCode::control_lane(ir::ValueId v) {
  const int unit = unit_;
  unit_ = -1;
  note_use(v);
  unit_ = unit;
  return at_lane(v);
}

bool LaneCode::skipped(const ir::Stmt& s) const {
  if (mode_ == Mode::Forward) return false;
  switch (s.op) {
    case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::Print:
      return true;
    case ir::Op::Call: case ir::Op::CallFunc: case ir::Op::GradFunc:
      return s.type.is_void();
    case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
    case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert:
    case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar: case ir::Op::ArrayLoad:
    case ir::Op::ArrayShape: case ir::Op::If: case ir::Op::For: case ir::Op::While: case ir::Op::Break:
    case ir::Op::Continue: case ir::Op::Return: case ir::Op::TangentCall:
      return false;
    case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
    case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:  // only in an adjoint kernel the reverse transform built
      KJIT_CHECK(false, std::string("lane codegen reached the reverse transform's ") + ir::op_name(s.op));
      return false;
  }
  return false;
}

LaneCode::Run LaneCode::in_loop(const ir::Block& side) const {
  Run out;
  for (const ir::Stmt& t : side.stmts)
    if (!a_.is_uniform_stmt(t) && t.op != ir::Op::DeclVar && !skipped(t)) out.push_back(&t);
  return out;
}

void LaneCode::for_each_in_loop(const Run& run, const std::function<void(const ir::Stmt&)>& fn) const {
  for (const ir::Stmt* s : run) {
    fn(*s);
    if (a_.flat(*s))
      for (const ir::Block& r : s->regions) for_each_in_loop(in_loop(r), fn);
  }
}

void LaneCode::emit_stmts(const ir::Block& b, size_t from, size_t to, const std::string& mask, int indent, Run* rest) {
  Run run;
  for (size_t i = from; i < to; ++i) {
    const ir::Stmt& s = b.stmts[i];
    if (skipped(s)) continue;
    if (a_.flat(s)) {
      hoist(s, indent);
      run.push_back(&s);
    } else if (LaneAnalysis::is_control(s)) {
      flush(run, mask, indent);
      emit_control(s, mask, indent);
    } else if (a_.is_uniform_stmt(s)) {
      emit_uniform(s, indent);
    } else if (s.op == ir::Op::DeclVar) {
      declare_lanes(s, indent);
    } else if (runs_alone(s) || batched(s)) {
      flush(run, mask, indent);
      run.push_back(&s);
      flush(run, mask, indent);
    } else if (s.op != ir::Op::Param) {
      run.push_back(&s);
    }
  }
  if (rest) *rest = std::move(run);
  else flush(run, mask, indent);
}

/// What a flattened If writes before its run's loop: its uniform statements and its
/// variables' lane arrays.
void LaneCode::hoist(const ir::Stmt& s, int indent) {
  for (const ir::Block& r : s.regions)
    for (const ir::Stmt& t : r.stmts) {
      if (skipped(t)) continue;
      if (a_.flat(t)) hoist(t, indent);
      else if (a_.is_uniform_stmt(t)) emit_uniform(t, indent);
      else if (t.op == ir::Op::DeclVar) declare_lanes(t, indent);
    }
}

void LaneCode::declare_lanes(const ir::Stmt& decl, int indent) {
  if (mode_ == Mode::Replay) return;  // declared at function scope
  // Zeroed so that a lane no store reached still holds a valid value of its type.
  w_->user_line(lanes_of(fn_.vars.at(size_t(decl.var())).type) + var_lanes(decl.var()) + " = {};", indent, decl.loc);
}

void LaneCode::emit_uniform(const ir::Stmt& s, int indent) {
  if (s.op == ir::Op::Param) return;
  const bool declared = mode_ == Mode::Replay;  // at function scope
  if (s.op == ir::Op::DeclVar) {
    if (!declared) w_->user_line(fn_.vars.at(size_t(s.var())).type.cpp() + " " + n_.var(s.var()) + ";", indent, s.loc);
  } else if (s.op == ir::Op::StoreVar) {
    w_->user_line(n_.var(s.var()) + " = " + n_.value(s.args[0]) + ";", indent, s.loc);
  } else {
    w_->user_line((declared ? "" : "const " + s.type.cpp() + " ") + n_.value(s.result) + " = " + ex_.expr(s) + ";",
                  indent, s.loc);
  }
}

/// Recomputes rematerializable value `v` (and what it is made of) in the current unit.
void LaneCode::rematerialize(ir::ValueId v, std::set<ir::ValueId>& have, int indent) {
  if (!a_.varying(v) || have.count(v)) return;
  const ir::Stmt& s = *a_.def(v);
  for (ir::ValueId a : s.args) rematerialize(a, have, indent);
  w_->user_line("const " + s.type.cpp() + " " + n_.value(v) + " = " + ex_.expr(s) + ";", indent, s.loc);
  have.insert(v);
}

void LaneCode::flush(Run& run, const std::string& mask, int indent, const UnitTail* tail) {
  if (run.empty() && !tail) return;
  unit_ = units_++;
  std::set<ir::ValueId> have;  // values this unit computes
  for_each_in_loop(run, [&](const ir::Stmt& s) {
    if (s.result == ir::kNoValue) return;
    have.insert(s.result);
    if (planning_) defined_in_[s.result].insert(unit_);
    if (mode_ == Mode::Forward && lane_array_[s.result]) w_->line(lanes_of(s.type) + lane_name(s.result) + ";", indent);
  });
  Run blocks;  // this unit's block stores, each into its kj_s_<array>
  for (const ir::Stmt* s : run)
    if (blocks_.count(s)) {
      blocks.push_back(s);
      w_->line("alignas(64) " + fn_.type_of(s->args.back()).cpp() + " " + block_name(*s) + "[" + width_ + "];", indent);
    }
  const ir::Stmt* batch = batch_ = run.size() == 1 && batched(*run[0]) ? run[0] : nullptr;
  if (batch) {  // the loop gathers each lane's operands; the batched call runs after it
    const std::string b = batch_name(*batch);
    w_->line(fn_.type_of(batch->args[5]).cpp() + " " + b + "_o[" + width_ + "], " + b + "_d[" + width_ + "];", indent);
    w_->line(fn_.type_of(batch->args[7]).cpp() + " " + b + "_t[" + width_ + "];", indent);
    w_->line("kj_int32 " + b + "_on[" + width_ + "], " + b + "_face[" + width_ + "];", indent);
  }
  w_->line(loop() + " {", indent);
  const int in = indent + 1;
  w_->line("const kj_int32 kj_index = kj_base + kj_l; (void)kj_index;", in);
  // Operands from outside the unit: recomputed, or read from their lane arrays.
  const std::set<ir::ValueId> defined = have;
  auto bring_in = [&](ir::ValueId a) {
    note_use(a);
    if (!a_.varying(a) || defined.count(a) || have.count(a)) return;
    if (a_.remat(a)) {
      rematerialize(a, have, in);
    } else {
      w_->line("const " + fn_.type_of(a).cpp() + " " + n_.value(a) + " = " + at_lane(a) + ";", in);
      have.insert(a);
    }
  };
  for_each_in_loop(run, [&](const ir::Stmt& s) {
    for (ir::ValueId a : s.args) bring_in(a);
  });
  if (tail)
    for (ir::ValueId a : tail->uses) bring_in(a);
  const std::string active = mask.empty() ? "" : mask + "[kj_l]";
  emit_in_loop(run, active, in);
  if (tail) tail->write(active, in);
  w_->line("}", indent);
  if (batch) emit_batch_call(*batch, indent);
  batch_ = nullptr;
  if (tail && tail->after) tail->after(indent);
  for (const ir::Stmt* s : blocks) {
    const std::string a = n_.value(s->args[0]);
    w_->user_line("kj::store_block(&kj::elem(" + a + ", kj_base), " + block_name(*s) + ", kj::streams(" + a + "));",
                  indent, s->loc);
  }
  unit_ = -1;
  run.clear();
}

/// The statements of a lane loop, under lane bit `active` (empty: every lane runs).
void LaneCode::emit_in_loop(const Run& stmts, const std::string& active, int in) {
  for (const ir::Stmt* s : stmts) {
    if (a_.flat(*s)) {
      emit_flattened_if(*s, active, in);
      continue;
    }
    emit_lane_stmt(*s, active, in);
    if (s->result != ir::kNoValue && lane_array_[s->result] && s != batch_)
      w_->line(lane_name(s->result) + ".set(kj_l, " + n_.value(s->result) + ");", in);
  }
}

/// Whether `s` is a call that a forward lane function makes for all its lanes at once, after
/// the lane loop that gathers their operands: mesh_first_hit (as mesh_first_hit_lanes, which
/// interleaves the rays' walks: a walk waits on memory at each level of the tree, and the
/// cpu overlaps the waits of independent walks; 10-15 % off the 1 M-ray bench's cpu time),
/// where the mesh's arrays are the same for every lane.
bool LaneCode::batched(const ir::Stmt& s) const {
  if (mode_ != Mode::Forward || s.op != ir::Op::Call || s.builtin() != ir::Builtin::MeshFirstHit) return false;
  for (size_t i = 0; i < 5; ++i)
    if (a_.varying(s.args[i])) return false;
  return true;
}

/// The batched call of `s` (batched) over the operands its unit's loop gathered, then its
/// result into its lane array.
void LaneCode::emit_batch_call(const ir::Stmt& s, int indent) {
  const std::string b = batch_name(s);
  std::string call = "kj::mesh_first_hit_lanes<" + width_ + ">(";
  for (size_t i = 0; i < 5; ++i) call += n_.value(s.args[i]) + ", ";
  w_->user_line(call + b + "_o, " + b + "_d, " + b + "_t, " + b + "_on, " + b + "_face);", indent, s.loc);
  if (lane_array_[s.result]) w_->line(loop() + " " + lane_name(s.result) + ".set(kj_l, " + b + "_face[kj_l]);", indent);
}

/// Both sides of a flattened If, each under the lane's bit for it.
void LaneCode::emit_flattened_if(const ir::Stmt& s, const std::string& active, int in) {
  for (int side = 0; side < 2; ++side) {
    const Run inner = in_loop(s.regions[side]);
    if (inner.empty()) continue;
    const std::string bit = new_bit();
    w_->user_line("const bool " + bit + " = " + (active.empty() ? "" : active + " && ") + (side ? "!" : "") +
                      n_.value(s.args[0]) + ";",
                  in, s.loc);
    emit_in_loop(inner, bit, in);
  }
}

/// `s` for lane kj_l; `active` is the lane's mask bit (empty: every lane runs).
void LaneCode::emit_lane_stmt(const ir::Stmt& s, const std::string& active, int in) {
  const bool guard = !active.empty() && a_.needs_guard(s);
  const std::string when = guard ? "if (" + active + ") " : "";
  auto value = [&](const std::string& expr) {
    const std::string v = n_.value(s.result), t = s.type.cpp();
    if (guard) w_->user_line(t + " " + v + "{}; if (" + active + ") " + v + " = " + expr + ";", in, s.loc);
    else w_->user_line("const " + t + " " + v + " = " + expr + ";", in, s.loc);
  };
  switch (s.op) {
    case ir::Op::LoadVar:
      value(var_lanes(s.var()) + ".get(kj_l)");
      break;
    case ir::Op::StoreVar: {
      const std::string v = n_.value(s.args[0]);
      w_->user_line(var_lanes(s.var()) + (active.empty() ? ".set(kj_l, " : ".select(kj_l, " + active + ", ") + v + ");",
                    in, s.loc);
      break;
    }
    case ir::Op::ArrayStore:
      if (blocks_.count(&s))  // every lane stores (top level): into the block, written after the loop
        w_->user_line("kj::store_to(" + block_name(s) + "[kj_l], " + n_.value(s.args.back()) + ");", in, s.loc);
      else
        w_->user_line(when + "kj::store_to(" + ex_.element(s, s.args.size() - 2) + ", " + n_.value(s.args.back()) + ");",
                      in, s.loc);
      break;
    case ir::Op::ArrayAtomic:
      value(ex_.atomic(s));
      break;
    case ir::Op::Print:
      w_->user_line(when + ex_.print(s, false) + ";", in, s.loc);
      break;
    case ir::Op::CallFunc: case ir::Op::GradFunc:
      if (s.type.is_void()) w_->user_line(when + ex_.call_function(s, false) + ";", in, s.loc);
      else value(ex_.call_function(s, mode_ == Mode::Replay));
      break;
    case ir::Op::Call:
      if (&s == batch_) {
        const std::string b = batch_name(s);
        w_->user_line(b + "_o[kj_l] = " + n_.value(s.args[5]) + "; " + b + "_d[kj_l] = " + n_.value(s.args[6]) + "; " + b +
                          "_t[kj_l] = " + n_.value(s.args[7]) + "; " + b + "_on[kj_l] = " + (active.empty() ? "1" : active) + ";",
                      in, s.loc);
      } else if (s.type.is_void()) w_->user_line(when + ex_.expr(s) + ";", in, s.loc);
      else value(ex_.expr(s));
      break;
    case ir::Op::ArrayLoad:
      value(ex_.expr(s));  // vectors and matrices component by component (ExprEmitter)
      break;
    case ir::Op::Const: case ir::Op::ThreadId: case ir::Op::LaunchDim: case ir::Op::Cast:
    case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert: case ir::Op::ArrayShape:
    case ir::Op::TangentCall:
      value(ex_.expr(s));
      break;
    case ir::Op::Param: case ir::Op::DeclVar: case ir::Op::If: case ir::Op::For: case ir::Op::While:
    case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
    case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
    case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
      KJIT_CHECK(false, std::string("lane codegen put ") + ir::op_name(s.op) + " in a run");
      break;
  }
}

std::string LaneCode::narrowed(const std::string& outer, const std::string& bit, int indent, const ir::SourceLoc& loc) {
  const std::string m = "kj_m" + std::to_string(masks_++);
  w_->user_line("kj_int32 " + m + "[" + width_ + "];", indent, loc);
  w_->user_line(loop() + " " + m + "[kj_l] = " + (outer.empty() ? "" : outer + "[kj_l] && ") + bit + ";",
                indent, loc);
  return m;
}

void LaneCode::emit_if(const ir::Stmt& s, const std::string& mask, int indent,
                       const std::function<void(const ir::Block&, const std::string&, int)>& side) {
  const ir::SourceLoc& loc = s.loc;
  const ir::ValueId c = s.args[0];
  if (!a_.varying(c)) {
    w_->user_line("if (" + n_.value(c) + ") {", indent, loc);
    side(s.regions[0], mask, indent + 1);
    if (!s.regions[1].stmts.empty()) {
      w_->user_line("} else {", indent, loc);
      side(s.regions[1], mask, indent + 1);
    }
    w_->user_line("}", indent, loc);
    return;
  }
  for (int k = 0; k < 2; ++k) {
    if (s.regions[k].stmts.empty()) continue;
    const std::string m = narrowed(mask, (k ? "!" : "") + control_lane(c), indent, loc);
    w_->user_line("if (" + any_lane(m) + ") {", indent, loc);
    side(s.regions[k], m, indent + 1);
    w_->user_line("}", indent, loc);
  }
}

void LaneCode::emit_control(const ir::Stmt& s, const std::string& mask, int indent) {
  switch (s.op) {
    case ir::Op::If:
      emit_if(s, mask, indent, [&](const ir::Block& b, const std::string& m, int in) { emit_block(b, m, in); });
      break;
    case ir::Op::For: case ir::Op::While:
      emit_loop(s, mask, indent);
      break;
    case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
    case ir::Op::Call: case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract:
    case ir::Op::Insert: case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar:
    case ir::Op::ArrayLoad: case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::ArrayShape:
    case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return: case ir::Op::Print:
    case ir::Op::CallFunc: case ir::Op::GradFunc: case ir::Op::TangentCall:
    case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
    case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
      KJIT_CHECK(false, std::string("lane codegen: ") + ir::op_name(s.op) + " is not control flow");
      break;
  }
}

}  // namespace kjit::codegen
