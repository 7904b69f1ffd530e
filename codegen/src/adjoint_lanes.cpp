// The adjoint lane function: a block of lanes replays the forward pass (LaneCode in Replay
// mode: no effects, loops checkpointed) and sweeps back through the same units.
//
// Uniform values stay scalars, and so do uniform branches and the counters of every loop: the
// lanes of a divergent loop run its iterations in step under a mask, so one iteration count,
// stride and checkpoint count serve them all, each slot holding all lanes' state; a per-lane
// trip count says which iterations each lane ran, and the reverse runs iterations from the
// largest count down, each under the mask of the lanes that ran it. Adjoints live in the
// lane loops; one that crosses loops is kept in a kj::lanes<T>. Under a lane bit or mask,
// a rule's adjoints go to temporaries that are added where the bit is on (selects, so that
// the loop vectorizes), and a rule that touches memory or calls a device function runs only
// for active lanes. Rules that add atomically (reads at other threads' indices, atomic
// min/max) get lane loops of their own, as the forward's atomics do. The adjoint of a block
// load (own_index.hpp: a top-level read at the thread's own element, the array's only use)
// is collected in an aligned block and added after its lane loop with one test of the adjoint
// array's presence (kj::add_block), as the forward's block stores are written.
//
// Adjoints of uniform values flow only to the kernel's scalar parameters, whose adjoints no
// caller sees: they are not computed, except for values printed in the reverse sweep
// (print()), whose per-thread adjoints are kept per lane with everything that feeds them.
#include "adjoint_lanes.hpp"

#include <map>
#include <memory>
#include <set>

#include "checkpoint_loops.hpp"
#include "kjit/error.hpp"
#include "lane_code.hpp"
#include "lane_emitter.hpp"
#include "own_index.hpp"
#include "reverse_rules.hpp"

namespace kjit::codegen {

namespace {

/// A lane function's loop state is copied as bytes (kj::copy_lanes): a whole-struct assignment
/// made GCC split the lanes into scalars, and the replay's lane loops next to it ran one lane
/// at a time.
std::string copy_lanes(const std::string& dst, const std::string& src) {
  return "kj::copy_lanes(" + dst + ", " + src + ");";
}

/// Bytes of a value of type `t` (an array handle counted generously).
size_t bytes_of(const ir::Type& t) { return t.is_array() ? 80 : size_t(std::max(t.element_bytes(), 4)); }

class AdjointLanes : LaneCode {
 public:
  AdjointLanes(SourceWriter& w, const LoweredFunction& fn, const CodegenOptions& o, int first_loop,
               const FunctionNames* functions)
      : LaneCode(w, fn, planned(fn.adjoint_lanes, "adjoint"), functions, Mode::Replay, lane_width(*fn.traced)), rules_(fn_, n_, ex_),
        work_(rules_, [this](const AdjTarget& t) { return tracked(t); }), o_(o),
        loops_(fn.adjoint_loops.numbered_from(first_loop)), closure_(fn_.values.size(), false), closure_var_(fn_.vars.size(), false) {
    ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
      for (const ir::Block& r : s.regions) block_args_.insert(r.args.begin(), r.args.end());
    });
    close_printed_uniforms();
    for (const ir::Stmt* s : block_accesses(fn_, ir::Op::ArrayLoad)) {
      const ReverseRule r = rules_.rule(*s);
      if (!r.atomic && r.nonzero.empty() && work_.runs(*s, r) && tracked(s->result)) block_adds_.insert(s);
    }
  }

  const std::string& lane_count() const { return width(); }

  /// An upper bound of the bytes the function's frame holds per block.
  size_t frame_bytes() const {
    const size_t L = width() == "KJ_LANES" ? 16 : 32, C = size_t(o_.loop_checkpoints);
    size_t bytes = 0;
    for (size_t v = 0; v < fn_.values.size(); ++v)
      if (a_.varying(ir::ValueId(v))) bytes += L * bytes_of(fn_.type_of(ir::ValueId(v))) * (tracked(ir::ValueId(v)) ? 2 : 1);
    for (size_t var = 0; var < fn_.vars.size(); ++var) bytes += 2 * L * bytes_of(fn_.vars[var].type);
    for (const AdjointLoop& loop : loops_.list) {
      for (int64_t var : loop.state) bytes += 2 * C * lanes_of_var(var) * bytes_of(fn_.vars.at(size_t(var)).type);
      for (int64_t var : loop.readonly) bytes += lanes_of_var(var) * bytes_of(fn_.vars.at(size_t(var)).type);
      bytes += 4 * L;
    }
    for (const ir::Stmt* s : block_adds_) bytes += L * bytes_of(s->type);
    return bytes;
  }

  void emit(const std::string& name, const std::string& body, const std::string& threads,
            const std::vector<EntryParam>& params) {
    threads_ = threads;
    params_ = &params;
    // The scalar body over a range of threads, not inlined (bodies are KJ_FUNC, always
    // inlined): the block's tail and a block whose loop passed its bound run it, and its one
    // copy leaves the lane function's loops as GCC vectorizes them alone. The strided instance:
    // dense arrays are strided arrays too.
    std::string sig = lane_signature(threads, params);
    sig.replace(sig.find("kj_int32 kj_base"), 16, "kj_int32 kj_begin, kj_int32 kj_end");
    w().line("__attribute__((noinline)) " + sig + " {");
    // Each thread's value-parameter sums are dropped: lane functions run where none is wanted.
    std::string sums, args;
    for (const EntryParam& p : params) {
      if (p.kind == EntryParam::Kind::Sum) sums += p.sum + " kj_t_" + p.name + " = {}; ";
      if (p.kind != EntryParam::Kind::None) args += std::string(", ") + (p.kind == EntryParam::Kind::Sum ? "kj_t_" : "") + p.name;
    }
    w().line("KJ_THREADS_INDEPENDENT for (kj_int32 kj_i = kj_begin; kj_i < kj_end; ++kj_i)", 1);
    w().line(sums.empty() ? body + "<false>(dim, kj_i" + args + ");"
                          : "{ " + sums + body + "<false>(dim, kj_i" + args + "); }", 2);
    w().line("}");
    auto all = [&] { replay_and_reverse(fn_.body, "", 1, true); };
    plan(all);
    for (const auto& [target, units] : adj_units_)
      if (units.size() > 1 || units.count(-1)) adj_array_.insert(target);
    w().line("KJ_ADJOINT_LANES_OPT " + lane_signature(name, params) + " {");
    // The adjoints of stored arrays are read (a launch's cotangents): without one, a block runs
    // one thread at a time, so that the lane loops read them unconditionally (GCC does not
    // vectorize a gather under a condition).
    std::string absent;
    for (const std::string& a : read_adjoints())
      absent += (absent.empty() ? "" : " || ") + ("!" + array_present(a));
    if (!absent.empty()) {
      w().line("if (" + absent + ") {", 1);
      w().line(threads_ + "(dim, kj_base, kj_base + " + width() + param_names() + ");", 2);
      w().line("return;", 2);
      w().line("}", 1);
    }
    declare();
    all();
    w().line("}");
  }

 private:
  // --- what is tracked ----------------------------------------------------------------

  bool tracked(ir::ValueId v) const { return rules_.differentiable(v) && (a_.varying(v) || closure_[v]); }
  bool tracked_var(int64_t var) const {
    return rules_.var_differentiable(var) && (a_.varying_var(var) || closure_var_[size_t(var)]);
  }
  bool tracked(const AdjTarget& t) const { return t.var ? tracked_var(t.id) : tracked(ir::ValueId(t.id)); }
  size_t lanes_of_var(int64_t var) const { return a_.varying_var(var) ? (width() == "KJ_LANES" ? 16 : 32) : 1; }

  /// Uniform values printed in the reverse sweep, and everything their adjoints come from (the
  /// results of statements using them, variables storing them, loads of those variables).
  void close_printed_uniforms() {
    ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
      if (s.op == ir::Op::Print && s.prints_values())
        for (ir::ValueId a : s.args) closure_[a] = !a_.varying(a) && rules_.differentiable(a);
    });
    for (bool changed = true; changed;) {
      changed = false;
      ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
        auto mark = [&](std::vector<bool>& flags, size_t i) {
          if (!flags[i]) changed = flags[i] = true;
        };
        if (s.op == ir::Op::StoreVar && closure_[s.args[0]] && !a_.varying_var(s.var())) mark(closure_var_, size_t(s.var()));
        if (s.result == ir::kNoValue || a_.varying(s.result) || !rules_.differentiable(s.result)) return;
        if (s.op == ir::Op::LoadVar && closure_var_[size_t(s.var())]) mark(closure_, s.result);
        for (ir::ValueId a : s.args)
          if (closure_[a]) mark(closure_, s.result);
      });
    }
  }

  /// The adjoint arrays the sweep reads: those of array parameters stored to or updated by
  /// add/sub atomics (a struct field's array is defined later, per lane: its reads keep theirs).
  std::set<std::string> read_adjoints() {
    std::set<std::string> out;
    ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
      if (reads_adjoint(s)) out.insert(rules_.adj_array(s.args[0]));
    });
    return out;
  }
  bool reads_adjoint(const ir::Stmt& s) {
    if (s.op != ir::Op::ArrayStore && s.op != ir::Op::ArrayAtomic) return false;
    if (!rules_.param_of().count(s.args[0])) return false;
    const ReverseRule r = rules_.rule(s);
    return !r.atomic && work_.runs(s, r);
  }

  // --- declarations -------------------------------------------------------------------

  std::string live(int64_t var) const { return a_.varying_var(var) ? var_lanes(var) : n_.var(var); }
  std::string var_type(int64_t var) const { return fn_.vars.at(size_t(var)).type.cpp(); }
  std::string slot_type(int64_t var) const {
    return a_.varying_var(var) ? lanes_of(var_type(var)) : var_type(var);
  }
  std::string target_type(const AdjTarget& t) const {
    return t.var ? var_type(t.id) : fn_.type_of(ir::ValueId(t.id)).cpp();
  }

  /// Everything the replay and the sweep share lives at function scope: uniform values,
  /// variables, lane arrays, adjoints that cross lane loops, and the loops' checkpoints.
  void declare() {
    for (ir::ValueId v = 0; v < fn_.values.size(); ++v) {
      const ir::Stmt* d = a_.def(v);
      if ((!d && !block_args_.count(v)) || (d && d->op == ir::Op::Param)) continue;
      if (!a_.varying(v)) w().line(fn_.type_of(v).cpp() + " " + n_.value(v) + ";", 1);
      else if (has_array(v)) w().line(lanes_of(fn_.type_of(v)) + lane_name(v) + ";", 1);
    }
    for (size_t var = 0; var < fn_.vars.size(); ++var) {
      const int64_t x = int64_t(var);
      w().line((a_.varying_var(x) ? lanes_of(fn_.vars[var].type) + var_lanes(x) : var_type(x) + " " + n_.var(x)) + " = {};", 1);
    }
    for (const AdjTarget& t : adj_array_) w().line(lanes_of_target(t) + adj_name(n_, t) + "_l = {};", 1);
    for (const ir::Stmt* s : block_adds_)
      w().line("alignas(64) " + s->type.cpp() + " " + block_add_name(*s) + "[" + width() + "];", 1);
    if (loops_.list.empty()) return;
    w().line("bool kj_overflow = false;", 1);
    const std::string C = std::to_string(o_.loop_checkpoints);
    for (const AdjointLoop& L : loops_.list) {
      w().line("kj_int32 " + L.name("n") + " = 0, " + L.name("stride") + " = 1, " + L.name("count") + " = 0; bool " +
                   L.name("ovf") + " = false;", 1);
      if (divergent(*loop_stmt(L))) w().line(lanes_of("kj_int32") + L.name("trip") + ";", 1);
      for (int64_t var : L.state) {
        w().line(slot_type(var) + " " + L.ckpt(n_, var) + "[" + C + "];", 1);
        w().line(slot_type(var) + " " + L.seg(n_, var) + "[" + C + "];", 1);
      }
      for (int64_t var : L.readonly) w().line(slot_type(var) + " " + L.ro(n_, var) + ";", 1);
    }
  }
  std::string lanes_of_target(const AdjTarget& t) const { return lanes_of(target_type(t)); }
  /// The block a block add (an own-index load's adjoint, own_index.hpp) collects its lanes' adjoints in.
  std::string block_add_name(const ir::Stmt& load) const { return "kj_o_" + rules_.adj_array(load.args[0]); }

  // --- replay then reverse ------------------------------------------------------------

  /// The replay of `b` and its reverse, its last run's replay and the start of its reverse in
  /// one lane loop (no lane arrays between them). At the top, a block whose loop passed its
  /// checkpoint bound in any lane leaves the rest to the scalar body.
  void replay_and_reverse(const ir::Block& b, const std::string& mask, int indent, bool top = false) {
    Run rest;
    emit_stmts(b, 0, b.stmts.size(), mask, indent, &rest);
    if (top && !loops_.list.empty()) {
      w().line("if (kj_overflow) {  // a loop passed its checkpoint bound: each thread alone reports it", indent);
      w().line(threads_ + "(dim, kj_base, kj_base + " + width() + param_names() + ");", indent + 1);
      w().line("return;", indent + 1);
      w().line("}", indent);
    }
    reverse_block(b, mask, indent, &rest);
  }

  /// The reverse of `b`, last statement first; `fused`: the replay's last run, written in the
  /// first lane loop of the reverse. The atomic adds of reads at other threads' indices only
  /// read their value's adjoint (final once its uses are reversed) and write memory no other
  /// rule reads: they all go in one lane loop at the end.
  void reverse_block(const ir::Block& b, const std::string& mask, int indent, Run* fused) {
    std::vector<const ir::Stmt*> items, deferred;
    bool alone = false;  // the items add atomically or call a device function
    auto flush_items = [&] {
      Run* fwd = fused && !fused->empty() ? fused : nullptr;
      fused = nullptr;
      if (fwd && (items.empty() || alone)) {
        flush(*fwd, mask, indent);
        fwd = nullptr;
      }
      if (!items.empty()) reverse_unit(items, mask, indent, fwd);
      items.clear();
    };
    for (size_t i = b.stmts.size(); i-- > 0;) {
      const ir::Stmt& s = b.stmts[i];
      bool own = false;
      if (a_.flat(s)) {
        if (!work_.has_work(s)) continue;
      } else if (LaneAnalysis::is_control(s)) {
        flush_items();
        reverse_control(s, mask, indent);
        continue;
      } else {
        const ReverseRule r = rules_.rule(s);
        if (!work_.runs(s, r)) continue;
        if (r.atomic && s.op == ir::Op::ArrayLoad) {
          deferred.push_back(&s);
          continue;
        }
        own = r.atomic || s.op == ir::Op::CallFunc;
      }
      if (own != alone && !items.empty()) flush_items();
      alone = own;
      items.push_back(&s);
    }
    flush_items();
    items = std::move(deferred);
    alone = true;
    flush_items();
  }

  void reverse_control(const ir::Stmt& s, const std::string& mask, int indent) {
    if (!work_.has_work(s)) return;
    if (s.op == ir::Op::If)
      emit_if(s, mask, indent, [&](const ir::Block& b, const std::string& m, int in) { reverse_block(b, m, in, nullptr); });
    else
      reverse_loop(s, mask, indent);
  }

  /// The statements of a flattened If's side with reverse work, last first.
  std::vector<const ir::Stmt*> reverse_items(const ir::Block& side) {
    std::vector<const ir::Stmt*> out;
    for (auto it = side.stmts.rbegin(); it != side.stmts.rend(); ++it)
      if (a_.flat(*it) ? work_.has_work(*it) : work_.runs(*it, rules_.rule(*it))) out.push_back(&*it);
    return out;
  }

  /// The primal values the rule of `s` reads (for a flattened If: its condition and its sides').
  void rule_uses(const ir::Stmt& s, std::vector<ir::ValueId>& uses) {
    auto all_args = [&](size_t drop_last) { uses.insert(uses.end(), s.args.begin(), s.args.end() - drop_last); };
    auto result = [&] {
      if (s.result != ir::kNoValue) uses.push_back(s.result);
    };
    const bool whole_struct = (s.op == ir::Op::Extract && fn_.type_of(s.args[0]).shape == ir::Shape::Struct) ||
                              (s.op == ir::Op::Insert && s.type.shape == ir::Shape::Struct);
    if (s.op == ir::Op::If) {
      uses.push_back(s.args[0]);
      for (const ir::Block& side : s.regions)
        for (const ir::Stmt* inner : reverse_items(side)) rule_uses(*inner, uses);
    } else if (s.op == ir::Op::Call || s.op == ir::Op::Cast || s.op == ir::Op::CallFunc ||
               ((s.op == ir::Op::Extract || s.op == ir::Op::Insert) && !whole_struct)) {
      all_args(0);
      result();
    } else if (s.op == ir::Op::ArrayLoad) {
      all_args(0);
    } else if (s.op == ir::Op::ArrayStore) {
      all_args(1);
    } else if (s.op == ir::Op::ArrayAtomic) {
      const bool select = s.atomic_op() == ir::AtomicOp::Min || s.atomic_op() == ir::AtomicOp::Max;
      all_args(select ? 0 : 1);
    }
  }

  /// One lane loop of the sweep over `items` (last statement first), after `fwd`'s replay.
  void reverse_unit(const std::vector<const ir::Stmt*>& items, const std::string& mask, int indent, Run* fwd) {
    UnitTail tail;
    for (const ir::Stmt* s : items) rule_uses(*s, tail.uses);
    tail.write = [&](const std::string& active, int in) { write_reverse(items, active, in); };
    tail.after = [&](int in) {
      for (const ir::Stmt* s : items) {
        if (!block_adds_.count(s)) continue;
        const std::string a = rules_.adj_array(s->args[0]);
        w().user_line(if_present(a) + "kj::add_block(&kj::elem(" + a + ", kj_base), " + block_add_name(*s) + ");", in, s->loc);
      }
    };
    Run run;
    if (fwd) run = std::move(*fwd);
    flush(run, mask, indent, &tail);
  }

  /// The adjoints `items` touch (`changed`: those they write).
  void targets(const std::vector<const ir::Stmt*>& items, std::set<AdjTarget>& touched, std::set<AdjTarget>& changed) {
    for (const ir::Stmt* s : items) {
      if (a_.flat(*s)) {
        for (const ir::Block& side : s->regions) targets(reverse_items(side), touched, changed);
        continue;
      }
      const ReverseRule r = rules_.rule(*s);
      for (const RuleStep& st : r.steps)
        for (const AdjTarget& t : st.outs)
          if (tracked(t)) touched.insert(t), changed.insert(t);
      touched.insert(r.reads.begin(), r.reads.end());
    }
  }

  void write_reverse(const std::vector<const ir::Stmt*>& items, const std::string& active, int in) {
    std::set<AdjTarget> touched, changed;
    targets(items, touched, changed);
    for (const AdjTarget& t : touched) {
      if (planning()) adj_units_[t].insert(unit());
      const std::string name = adj_name(n_, t);
      w().line(target_type(t) + " " + name + (adj_array_.count(t) ? " = " + name + "_l.get(kj_l);" : " = {};"), in);
      if (!adj_array_.count(t)) zeroed_.insert(t);
    }
    for (const ir::Stmt* s : items) write_item(*s, active, in);
    zeroed_.clear();
    for (const AdjTarget& t : changed)
      if (adj_array_.count(t)) w().line(adj_name(n_, t) + "_l.set(kj_l, " + adj_name(n_, t) + ");", in);
  }

  void write_item(const ir::Stmt& s, const std::string& active, int in) {
    if (!a_.flat(s)) {
      write_rule(s, rules_.rule(s), active, in);
      return;
    }
    for (int side = 0; side < 2; ++side) {
      const std::vector<const ir::Stmt*> inner = reverse_items(s.regions[side]);
      if (inner.empty()) continue;
      const std::string bit = new_bit();
      w().user_line("const bool " + bit + " = " + (active.empty() ? "" : active + " & ") + (side ? "!" : "") +
                        n_.value(s.args[0]) + ";", in, s.loc);
      for (const ir::Stmt* t : inner) write_item(*t, bit, in);
    }
  }

  /// Whether `text` is the name of an adjoint rule `r` reads. An adjoint starts at +0 and only
  /// ever has values added to it (or is zeroed), so it never holds -0: adding it to an adjoint
  /// known to hold +0 gives it unchanged, bit for bit, and the sweep copies it instead (two of
  /// three additions of a loop-carried value's reverse step: its store's and its load's).
  bool reads_adjoint_named(const ReverseRule& r, const std::string& text) const {
    for (const AdjTarget& t : r.reads)
      if (adj_name(n_, t) == text) return true;
    return false;
  }

  /// Rule `r` of `s` for lane kj_l under bit `active` ("": every lane runs it). A rule that
  /// touches memory, calls a device function or indexes by lane data runs under an `if`
  /// (adding directly); any other under a bit or a strong-zero test adds its adjoints through
  /// temporaries and selects; adjoints nobody reads (uniform values') go to temporaries.
  void write_rule(const ir::Stmt& s, ReverseRule r, const std::string& active, int in) {
    if (block_adds_.count(&s)) {  // at the top level: every lane runs it
      KJIT_CHECK(active.empty(), "a block add under a lane bit");
      w().user_line(block_add_name(s) + "[kj_l] = " + adj_name(n_, AdjTarget{false, int64_t(s.result)}) + ";", in, s.loc);
      return;
    }
    const bool guarded = a_.needs_guard(s) || !r.when.empty() || r.atomic;
    if (reads_adjoint(s)) r.when.clear();  // present: the function's start checked it
    const std::string nonzero = r.nonzero.empty() ? "" : "kj::lane_nonzero(" + r.nonzero + ")";
    // Bits combine with & (no short circuit): a bit that is a branch's result (`a && b` is
    // `a ? b : false`) stops GCC 12 vectorizing the loop.
    auto join = [](std::vector<std::string> parts, const char* op) {
      std::string out;
      for (const std::string& p : parts)
        if (!p.empty()) out += (out.empty() ? "" : op) + p;
      return out;
    };
    const bool direct = guarded || (active.empty() && nonzero.empty());
    std::string on;
    if (!direct) {
      on = active;
      if (!nonzero.empty()) {
        on = new_bit();
        w().user_line("const bool " + on + " = " + join({active, nonzero}, " & ") + ";", in, s.loc);
      }
    }
    const std::string cond = direct ? join({active, r.when, nonzero}, " && ") : "";
    const std::string prefix = cond.empty() ? "" : "if (" + cond + ") ";
    for (const RuleStep& st : r.steps) {
      switch (st.kind) {
        case RuleStep::Kind::Add: case RuleStep::Kind::Sub: case RuleStep::Kind::Zero: {
          const AdjTarget& t = st.outs[0];
          if (!tracked(t)) break;
          const std::string a = adj_name(n_, t);
          const bool add = st.kind == RuleStep::Kind::Add, zero = st.kind == RuleStep::Kind::Zero;
          const bool was_zero = zeroed_.count(t) != 0;
          if (!(zero && (was_zero || prefix.empty()))) zeroed_.erase(t);
          if (direct && zero && prefix.empty()) zeroed_.insert(t);
          if (direct && add && prefix.empty() && was_zero && reads_adjoint_named(r, st.text[0]))
            w().user_line(a + " = " + st.text[0] + ";", in, s.loc);  // +0 + x is x: x is an adjoint, never -0
          else if (direct)
            w().user_line(prefix + a + (zero ? " = {};" : (add ? " += " : " -= ") + st.text[0] + ";"), in, s.loc);
          else if (zero)
            w().user_line("kj::zero_if(" + a + ", " + on + ");", in, s.loc);
          else
            w().user_line(std::string(add ? "kj::add_if(" : "kj::sub_if(") + a + ", " + on + ", " + st.text[0] + ");", in, s.loc);
          break;
        }
        case RuleStep::Kind::Call: {
          for (const AdjTarget& t : st.outs) zeroed_.erase(t);
          std::string temps, call, adds;
          for (size_t i = 0; i < st.text.size(); ++i) {
            call += st.text[i];
            if (i >= st.outs.size()) continue;
            const AdjTarget& t = st.outs[i];
            if (direct && tracked(t)) {
              call += adj_name(n_, t);
              continue;
            }
            const std::string tmp = "kj_a" + std::to_string(i);
            temps += target_type(t) + " " + tmp + "{}; ";
            call += tmp;
            if (tracked(t)) adds += " kj::add_if(" + adj_name(n_, t) + ", " + on + ", " + tmp + ");";
          }
          const std::string body = call + ";" + adds;
          w().user_line(prefix + (temps.empty() && adds.empty() ? body : "{ " + temps + body + " }"), in, s.loc);
          break;
        }
        case RuleStep::Kind::Effect:
          KJIT_CHECK(direct, "a reverse rule with an effect outside a guard");
          w().user_line(prefix + st.text[0] + ";", in, s.loc);
          break;
      }
    }
  }

  // --- loops --------------------------------------------------------------------------

  const ir::Stmt* loop_stmt(const AdjointLoop& L) const {
    for (const auto& [stmt, index] : loops_.index)
      if (&loops_.list[index] == &L) return stmt;
    return nullptr;
  }
  bool divergent(const ir::Stmt& s) const {
    return a_.varying(s.op == ir::Op::For ? s.regions[0].args.at(0) : s.regions[0].yield);
  }

  /// The replay of a loop, its checkpoints kept for the block: one counter for all lanes
  /// (those of a divergent loop run its iterations in step under a mask), each slot holding
  /// every lane's state, and each lane's trip count.
  void emit_loop(const ir::Stmt& s, const std::string& mask, int indent) override {
    const AdjointLoop& L = loops_.of(s);
    const ir::SourceLoc& loc = s.loc;
    const std::string n = L.name("n"), trip = L.name("trip"), ovf = L.name("ovf");
    const bool lanes = divergent(s);
    w().user_line(n + " = 0; " + L.name("stride") + " = 1; " + L.name("count") + " = 0; " + ovf + " = false;", indent, loc);
    if (lanes) w().user_line(trip + " = {};", indent, loc);
    for (int64_t var : L.readonly) w().user_line(L.ro(n_, var) + " = " + live(var) + ";", indent, loc);
    const int in = indent + 1;
    std::string m = mask, i, step;
    auto iteration = [&](const ir::Block& body) {
      emit_checkpoint_step(w(), L, n_, o_.loop_checkpoints, [&](int64_t var) { return live(var); },
                           {ovf + " = true; kj_overflow = true;"}, in, loc, copy_lanes);
      if (lanes) w().user_line(loop() + " " + trip + ".v[kj_l] += " + m + "[kj_l];", in, loc);
      emit_block(body, m, in);
      if (s.op == ir::Op::For && lanes) w().user_line(loop() + " " + i + " += " + step + ";", in, loc);
      w().user_line("++" + n + ";", in, loc);
      w().user_line("}", indent, loc);
    };
    if (s.op == ir::Op::For) {
      const ir::ValueId iv = s.regions[0].args.at(0);
      if (!lanes) {
        i = n_.value(iv);
        const std::string end = n_.value(s.args[1]);
        step = n_.value(s.args[2]);
        w().user_line("KJ_NO_UNROLL", indent, loc);
        w().user_line("for (" + i + " = " + n_.value(s.args[0]) + "; " + for_condition(i, end, step) + "; " + i + " += " +
                          step + ") {", indent, loc);
        iteration(s.regions[0]);
        return;
      }
      control_lane(iv);
      i = lane_name(iv) + ".v[kj_l]";
      const std::string end = control_lane(s.args[1]);
      step = control_lane(s.args[2]);
      w().user_line(loop() + " " + i + " = " + control_lane(s.args[0]) + ";", indent, loc);
      m = narrowed(mask, "true", indent, loc);
      w().user_line("KJ_NO_UNROLL", indent, loc);
      w().user_line("for (;;) {", indent, loc);
      w().user_line(loop() + " " + m + "[kj_l] = " + m + "[kj_l] && (" + for_condition(i, end, step) + ");",
                    in, loc);
      w().user_line("if (!" + any_lane(m) + ") break;", in, loc);
      iteration(s.regions[0]);
      return;
    }
    const ir::ValueId y = s.regions[0].yield;
    if (lanes) m = narrowed(mask, "true", indent, loc);
    w().user_line("KJ_NO_UNROLL", indent, loc);
    w().user_line("for (;;) {", indent, loc);
    emit_block(s.regions[0], m, in);
    if (lanes) {
      w().user_line(loop() + " " + m + "[kj_l] = " + m + "[kj_l] && " + control_lane(y) + ";", in, loc);
      w().user_line("if (!" + any_lane(m) + ") break;", in, loc);
    } else {
      w().user_line("if (!" + n_.value(y) + ") break;", in, loc);
    }
    iteration(s.regions[1]);
  }

  /// The reverse of a loop: segments and iterations last first (checkpoint_loops.hpp), each
  /// iteration under the mask of the lanes that ran it.
  void reverse_loop(const ir::Stmt& s, const std::string& mask, int indent) {
    const AdjointLoop& L = loops_.of(s);
    const ir::SourceLoc& loc = s.loc;
    const bool is_for = s.op == ir::Op::For, lanes = divergent(s);
    const ir::Block& body = s.regions[is_for ? 0 : 1];
    const std::string k = L.name("k");
    auto iteration = [&](int in) {
      std::string m = mask;
      if (lanes) m = narrowed(mask, k + " < " + L.name("trip") + ".v[kj_l]", in, loc);
      if (!is_for) return m;
      const ir::ValueId iv = s.regions[0].args.at(0);
      if (lanes)
        w().user_line(loop() + " " + lane_name(iv) + ".v[kj_l] = " + control_lane(s.args[0]) + " + " + k +
                          " * " + control_lane(s.args[2]) + ";", in, loc);
      else
        w().user_line(n_.value(iv) + " = " + n_.value(s.args[0]) + " + " + k + " * " + n_.value(s.args[2]) + ";", in, loc);
      return m;
    };
    for (int64_t var : L.readonly) w().user_line(live(var) + " = " + L.ro(n_, var) + ";", indent, loc);
    emit_reverse_segments(
        w(), L, n_, [&](int64_t var) { return live(var); }, indent, loc,
        [&](int in) { emit_block(body, iteration(in), in); },
        [&](int in) {
          const std::string m = iteration(in);
          for (ir::ValueId v : L.body_values)
            if (adj_array_.count(AdjTarget{false, int64_t(v)})) w().user_line(n_.adj_value(v) + "_l = {};", in, loc);
          replay_and_reverse(body, m, in);
        },
        true, copy_lanes);
  }

  ReverseRules rules_;
  ReverseWork work_;  ///< the adjoints of values that differ per lane (and of printed ones) are tracked
  const CodegenOptions& o_;
  AdjointLoops loops_;
  std::vector<bool> closure_;      // by value: a uniform value whose adjoint is kept per lane
  std::vector<bool> closure_var_;  // by variable: likewise
  std::set<ir::ValueId> block_args_;
  std::map<AdjTarget, std::set<int>> adj_units_;  // planning: the lane loops touching each adjoint
  std::set<AdjTarget> adj_array_;                 // adjoints kept in kj::lanes<T> across loops
  std::set<const ir::Stmt*> block_adds_;          // own-index loads whose adjoints are added as blocks
  std::set<AdjTarget> zeroed_;                    // writing a unit: adjoints known to hold +0
  std::string param_names() const {
    std::string out;
    for (const EntryParam& p : *params_)
      if (p.kind == EntryParam::Kind::Array || p.kind == EntryParam::Kind::Value) out += ", " + p.name;
    return out;
  }

  std::string threads_;
  const std::vector<EntryParam>* params_ = nullptr;
};

}  // namespace

std::string emit_adjoint_lane_function(SourceWriter& w, const LoweredFunction& fn, const std::string& name,
                                       const std::string& threads, const std::string& body,
                                       const std::vector<EntryParam>& params,
                                       const CodegenOptions& options, int first_loop, const FunctionNames* functions) {
  AdjointLanes lanes(w, fn, options, first_loop, functions);
  if (lanes.frame_bytes() > kMaxAdjointLaneFrame) return "";
  w.line("#if !KJ_CUDA");
  lanes.emit(name, body, threads, params);
  w.line("#endif");
  return lanes.lane_count();
}

}  // namespace kjit::codegen
