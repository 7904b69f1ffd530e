// SIMD lane blocks of a forward body: uniformity analysis, runs of statements, lane masks.
//
// A value is uniform when every lane computes the same one (constants, parameters and pure
// operations of them, variables only ever stored uniform values under uniform control): it
// stays one scalar, emitted outside the lane loops, so that uniform loops and branches stay
// ordinary C++ control flow. Everything else is varying: it lives in a lane loop
// `for (kj_l ...)`; a varying value needed outside the run that computes it, or by control
// flow, is kept in a kj::lanes<T> (one slot per lane). A small branch on a varying condition
// runs inside its lane loop, both sides under a lane-local bit (as a vectorizer if-converts);
// a larger one, or a loop, on a varying condition runs under a mask (int32 per lane) and is
// skipped when no lane is active. Under a bit or a mask, stores to variables select, and
// anything that may fault or has an effect (array accesses, atomics, device functions,
// prints, dynamic component indices, random draws) runs only for active lanes. Atomics get
// lane loops of their own. Early exits are lowered to flags first (lower_jumps), so Break,
// Continue and Return become masks like any branch. A block store (an array a kernel only
// writes, each thread its own element) collects its 16 values and writes them as one block,
// non-temporally when the array is large (kj::store_block).
#include "lane_emitter.hpp"

#include <map>
#include <set>

#include "builtin_codegen.hpp"
#include "kjit/error.hpp"
#include "lower_jumps.hpp"

namespace kjit::codegen {

namespace {

const char* const kLaneLoop = "KJ_LANE_LOOP";
/// The most statements a divergent If may hold to run inside its lane loop (both sides for
/// every lane) rather than as masked loops skipped when no lane takes a side.
constexpr int kFlattenLimit = 24;

bool is_control(const ir::Stmt& s) {
  return ir::op_info(s.op).kind == ir::OpKind::Control;
}

/// An atomic gets a lane loop of its own: its loop stays scalar (a read-modify-write per
/// lane), and the arithmetic around it, in the loops before and after, vectorizes.
bool runs_alone(const ir::Stmt& s) { return s.op == ir::Op::ArrayAtomic; }

/// A builtin call that must not run for an inactive lane: an effect (expect_near,
/// breakpoint), a call that reports its site, or a random draw (poisson loops on its input).
bool call_needs_guard(const ir::Stmt& call) {
  return call.type.is_void() || builtin_codegen(call.builtin()).takes_site ||
         ir::builtin_info(call.builtin()).category == ir::BuiltinCategory::Random;
}

/// Whether an element of `t` is whole 4-byte words (16 of them fill whole cache lines).
bool whole_words(const ir::Type& t) {
  return t.shape != ir::Shape::Struct && t.shape != ir::Shape::Void && ir::scalar_bytes(t.scalar) >= 4;
}

/// The block stores of `fn`: stores at its top level (every lane runs them) into a 1-D array
/// parameter at the thread's index, of elements of whole words, where that store is all the
/// kernel does with the array (its shape aside).
std::set<const ir::Stmt*> block_stores(const ir::Function& fn) {
  std::map<ir::ValueId, const ir::Stmt*> def;
  std::map<ir::ValueId, int> param_of;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.result != ir::kNoValue) def[s.result] = &s;
    if (s.op == ir::Op::Param && fn.params[size_t(s.imm)].type.is_array()) param_of[s.result] = int(s.imm);
  });
  auto own_index = [&](ir::ValueId i) {
    auto d = def.find(i);
    return d != def.end() && d->second->op == ir::Op::ThreadId &&
           (d->second->imm == -1 || (d->second->imm == 0 && fn.launch_ndim == 1));
  };
  std::map<int, const ir::Stmt*> store;  // by parameter: its one block store, or null
  for (const ir::Stmt& s : fn.body.stmts) {
    auto p = s.op == ir::Op::ArrayStore ? param_of.find(s.args[0]) : param_of.end();
    if (p == param_of.end()) continue;
    const ir::Type& t = fn.params[size_t(p->second)].type;
    const bool fits = t.ndim == 1 && s.args.size() == 3 && own_index(s.args[1]) && whole_words(t.element());
    auto [at, fresh] = store.emplace(p->second, fits ? &s : nullptr);
    if (!fresh) at->second = nullptr;  // two stores: the later one must win, lane by lane
  }
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::ArrayShape) return;
    for (ir::ValueId a : s.args) {
      auto p = param_of.find(a);
      if (p == param_of.end()) continue;
      auto at = store.find(p->second);
      if (at != store.end() && at->second != &s) at->second = nullptr;
    }
  });
  std::set<const ir::Stmt*> out;
  for (const auto& [param, s] : store)
    if (s) out.insert(s);
  return out;
}

class LaneEmitter {
 public:
  LaneEmitter(SourceWriter& w, const ir::Function& fn, PreludeUse& prelude, const FunctionNames* functions)
      : fn_(lower_jumps(fn)), n_(fn_), ex_(n_, prelude, functions), w_(w),
        varying_(fn_.values.size(), false), varying_var_(fn_.vars.size(), false),
        lane_array_(fn_.values.size(), false), remat_(fn_.values.size(), false),
        def_(fn_.values.size(), nullptr), run_of_(fn_.values.size(), -1) {
    ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
      if (s.result != ir::kNoValue) def_.at(s.result) = &s;
    });
    while (analyze(fn_.body, false)) {
    }
    mark_rematerializable();
    ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
      int budget = kFlattenLimit;
      if (s.op == ir::Op::If && varying(s.args[0]) && flattenable(s, budget)) flat_.insert(&s);
    });
    int run = 0;
    assign_runs(fn_.body, run);
    blocks_ = block_stores(fn_);
  }

  /// Returns whether the function writes block stores (its entry then fences them).
  bool emit(const std::string& name, const std::vector<EntryParam>& params) {
    std::string sig = "static void " + name + "(const kj::launch_bounds_t& dim, kj_int32 kj_base";
    for (const EntryParam& p : params)
      sig += p.element.empty() ? ", " + p.type + " " + p.name
                               : ", const kj::dense_array_t<" + p.element + ">& " + p.name;
    w_.line(sig + ") {");
    emit_block(fn_.body, "", 1);
    w_.line("}");
    return !blocks_.empty();
  }

 private:
  // --- analysis -------------------------------------------------------------------------

  bool set(std::vector<bool>& flags, size_t i) {
    if (flags.at(i)) return false;
    flags[i] = true;
    return true;
  }
  bool varying(ir::ValueId v) const { return varying_.at(v); }
  bool any_varying(const std::vector<ir::ValueId>& args) const {
    for (ir::ValueId a : args)
      if (varying(a)) return true;
    return false;
  }

  /// One pass of the uniformity analysis over `b` (`masked`: some lanes may be inactive
  /// here). Returns whether anything became varying; run until it returns false.
  bool analyze(const ir::Block& b, bool masked) {
    bool changed = false;
    for (const ir::Stmt& s : b.stmts) {
      switch (s.op) {
        case ir::Op::ThreadId: case ir::Op::ArrayLoad: case ir::Op::ArrayAtomic: case ir::Op::CallFunc:
          if (s.result != ir::kNoValue) changed |= set(varying_, s.result);
          break;
        case ir::Op::Const: case ir::Op::Param: case ir::Op::LaunchDim: case ir::Op::DeclVar:
        case ir::Op::ArrayStore: case ir::Op::Print:
          break;
        case ir::Op::Call: case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract:
        case ir::Op::Insert: case ir::Op::ArrayShape:
          if (s.result != ir::kNoValue && any_varying(s.args)) changed |= set(varying_, s.result);
          break;
        case ir::Op::LoadVar:
          if (varying_var_.at(size_t(s.imm))) changed |= set(varying_, s.result);
          break;
        case ir::Op::StoreVar:
          if (masked || varying(s.args[0])) changed |= set(varying_var_, size_t(s.imm));
          break;
        case ir::Op::If: {
          bool inner = masked || varying(s.args[0]);
          changed |= analyze(s.regions[0], inner);
          changed |= analyze(s.regions[1], inner);
          break;
        }
        case ir::Op::For: {
          bool divergent = any_varying(s.args);
          if (divergent) changed |= set(varying_, s.regions[0].args.at(0));
          changed |= analyze(s.regions[0], masked || divergent);
          break;
        }
        case ir::Op::While: {
          // The condition's uniformity is what this pass is computing: read last pass's.
          bool divergent = varying(s.regions[0].yield);
          changed |= analyze(s.regions[0], masked || divergent);
          changed |= analyze(s.regions[1], masked || divergent);
          break;
        }
        case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
          KJIT_CHECK(false, "lane codegen reached a jump that lower_jumps should have removed");
          break;
      }
    }
    return changed;
  }

  /// Cheap pure integer values derived from the thread index (tid, tid * 3 + 1): a run that
  /// uses one recomputes it rather than reading it from a lane array, which keeps array
  /// accesses at it affine (contiguous vector loads instead of gathers).
  void mark_rematerializable() {
    for (size_t v = 0; v < fn_.values.size(); ++v) {
      const ir::Stmt* s = def_[v];
      if (!s || !varying(ir::ValueId(v))) continue;
      bool ok = false;
      if (s->op == ir::Op::ThreadId) ok = true;
      if (s->op == ir::Op::Cast && s->type.shape == ir::Shape::Scalar && s->type.is_integer()) ok = true;
      if (s->op == ir::Op::Call && s->type.shape == ir::Shape::Scalar && s->type.is_integer()) {
        ir::Builtin b = s->builtin();
        ok = b == ir::Builtin::Add || b == ir::Builtin::Sub || b == ir::Builtin::Mul;
      }
      for (ir::ValueId a : s->args)  // values are defined before use: args are decided
        ok = ok && (!varying(a) || remat_[a]);
      remat_[v] = ok;
    }
  }

  bool is_uniform_stmt(const ir::Stmt& s) const {
    switch (s.op) {
      case ir::Op::DeclVar: case ir::Op::StoreVar: return !varying_var_.at(size_t(s.imm));
      case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::Print: case ir::Op::CallFunc:
        return false;  // effects run once per lane
      case ir::Op::Call:
        return !s.type.is_void() && !varying(s.result);
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
      case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert:
      case ir::Op::LoadVar: case ir::Op::ArrayLoad: case ir::Op::ArrayShape:
        return !varying(s.result);
      case ir::Op::If: case ir::Op::For: case ir::Op::While: case ir::Op::Break:
      case ir::Op::Continue: case ir::Op::Return:
        return false;
    }
    return false;
  }

  /// A use of `v` outside the run that defines it: it needs a lane array unless it is
  /// uniform or recomputed (`control`: used by a branch or loop, which reads the array).
  void use_outside(ir::ValueId v, bool control) {
    if (v == ir::kNoValue || !varying(v)) return;
    if (control || !remat_[v]) lane_array_[v] = true;
  }

  /// Numbers the runs of `b`: the statements between two control statements share one.
  void assign_runs(const ir::Block& b, int& next) {
    int run = next++;
    for (const ir::Stmt& s : b.stmts) {
      if (flat_.count(&s)) {
        assign_in_run(s, run);
        continue;
      }
      if (is_control(s)) {
        for (ir::ValueId a : s.args) use_outside(a, true);
        for (const ir::Block& r : s.regions) assign_runs(r, next);
        if (s.op == ir::Op::While) use_outside(s.regions[0].yield, true);
        if (s.op == ir::Op::For && varying(s.regions[0].args.at(0))) lane_array_[s.regions[0].args[0]] = true;
        run = next++;
        continue;
      }
      if (is_uniform_stmt(s)) continue;
      if (runs_alone(s)) run = next++;
      assign_in_run(s, run);
      if (runs_alone(s)) run = next++;
    }
  }

  /// Puts varying statement `s` (a flattened If with everything in it) in run `run`.
  void assign_in_run(const ir::Stmt& s, int run) {
    if (is_uniform_stmt(s)) return;
    for (ir::ValueId a : s.args)
      if (run_of_.at(a) != run) use_outside(a, false);
    if (s.result != ir::kNoValue) run_of_[s.result] = run;
    for (const ir::Block& r : s.regions)
      for (const ir::Stmt& inner : r.stmts) assign_in_run(inner, run);
  }

  /// Whether If `s` can run inside its lane loop, both sides for every lane under a lane-local
  /// condition (as a vectorizer if-converts): small, and nothing in it that would stop the
  /// loop vectorizing or must be skipped when no lane takes a side (loops, atomics, device
  /// functions, prints, checks, random draws). `budget` counts its statements down.
  bool flattenable(const ir::Stmt& s, int& budget) const {
    for (const ir::Block& r : s.regions)
      for (const ir::Stmt& inner : r.stmts) {
        if (--budget < 0) return false;
        switch (inner.op) {
          case ir::Op::If:
            if (!varying(inner.args[0]) || !flattenable(inner, budget)) return false;
            break;
          case ir::Op::Call:
            if (call_needs_guard(inner)) return false;
            break;
          case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
          case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert:
          case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar: case ir::Op::ArrayLoad:
          case ir::Op::ArrayStore: case ir::Op::ArrayShape:
            break;
          case ir::Op::ArrayAtomic: case ir::Op::For: case ir::Op::While: case ir::Op::Break:
          case ir::Op::Continue: case ir::Op::Return: case ir::Op::Print: case ir::Op::CallFunc:
            return false;
        }
      }
    return true;
  }

  /// Calls fn on each statement a run's lane loop writes: the run's, and those inside its
  /// flattened Ifs (not the uniform ones and declarations, written before the loop).
  template <class Fn>
  void for_each_in_loop(const std::vector<const ir::Stmt*>& run, Fn&& fn) const {
    for (const ir::Stmt* s : run) {
      fn(*s);
      if (flat_.count(s))
        for (const ir::Block& r : s->regions) for_each_in_loop(in_loop(r), fn);
    }
  }

  /// The statements of a flattened If's side that its lane loop writes (hoist() writes the
  /// uniform ones and the declarations before the loop).
  std::vector<const ir::Stmt*> in_loop(const ir::Block& side) const {
    std::vector<const ir::Stmt*> out;
    for (const ir::Stmt& t : side.stmts)
      if (!is_uniform_stmt(t) && t.op != ir::Op::DeclVar) out.push_back(&t);
    return out;
  }

  // --- emission -------------------------------------------------------------------------

  std::string lane_name(ir::ValueId v) const { return n_.value(v) + "_l"; }
  std::string var_lanes(int64_t var) const { return n_.var(var) + "_l"; }
  /// The value of `v` in lane kj_l, in a lane loop outside `v`'s run.
  std::string at_lane(ir::ValueId v) const { return varying(v) ? lane_name(v) + ".get(kj_l)" : n_.value(v); }
  /// The declaration of a lane array of type `t`.
  static std::string lanes_of(const ir::Type& t) { return "kj::lanes<" + t.cpp() + "> "; }
  std::string new_mask() { return "kj_m" + std::to_string(masks_++); }
  /// The block a block store collects its lanes' values in (one per array: named after it).
  std::string block_name(const ir::Stmt& store) const { return "kj_s_" + n_.value(store.args[0]); }

  /// Whether `s` may fault or do work for a lane that should not run it, so that it runs
  /// only for active lanes.
  bool needs_guard(const ir::Stmt& s) const {
    switch (s.op) {
      case ir::Op::ArrayLoad: case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::CallFunc:
      case ir::Op::Print:
        return true;
      case ir::Op::Call:
        return call_needs_guard(s);
      case ir::Op::Extract: case ir::Op::Insert: {  // a component index from the lane's data
        size_t first = s.op == ir::Op::Extract ? 1 : 2;
        for (size_t i = first; i < s.args.size(); ++i)
          if (!def_.at(s.args[i]) || def_[s.args[i]]->op != ir::Op::Const) return true;
        return false;
      }
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
      case ir::Op::Cast: case ir::Op::Construct: case ir::Op::DeclVar: case ir::Op::LoadVar:
      case ir::Op::StoreVar: case ir::Op::ArrayShape: case ir::Op::If: case ir::Op::For:
      case ir::Op::While: case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
        return false;
    }
    return false;
  }

  void emit_block(const ir::Block& b, const std::string& mask, int indent) {
    std::vector<const ir::Stmt*> run;
    for (const ir::Stmt& s : b.stmts) {
      if (flat_.count(&s)) {
        hoist(s, indent);
        run.push_back(&s);
      } else if (is_control(s)) {
        flush(run, mask, indent);
        emit_control(s, mask, indent);
      } else if (is_uniform_stmt(s)) {
        emit_uniform(s, indent);
      } else if (s.op == ir::Op::DeclVar) {
        declare_lanes(s, indent);
      } else if (runs_alone(s)) {
        flush(run, mask, indent);
        run.push_back(&s);
        flush(run, mask, indent);
      } else if (s.op != ir::Op::Param) {
        run.push_back(&s);
      }
    }
    flush(run, mask, indent);
  }

  /// What a flattened If writes before its run's loop: its uniform statements and its
  /// variables' lane arrays.
  void hoist(const ir::Stmt& s, int indent) {
    for (const ir::Block& r : s.regions)
      for (const ir::Stmt& t : r.stmts) {
        if (flat_.count(&t)) hoist(t, indent);
        else if (is_uniform_stmt(t)) emit_uniform(t, indent);
        else if (t.op == ir::Op::DeclVar) declare_lanes(t, indent);
      }
  }

  void declare_lanes(const ir::Stmt& decl, int indent) {
    // Zeroed so that a lane no store reached still holds a valid value of its type.
    w_.user_line(lanes_of(fn_.vars.at(size_t(decl.imm)).type) + var_lanes(decl.imm) + " = {};", indent, decl.loc);
  }

  void emit_uniform(const ir::Stmt& s, int indent) {
    if (s.op == ir::Op::Param) return;
    if (s.op == ir::Op::DeclVar) {
      w_.user_line(fn_.vars.at(size_t(s.imm)).type.cpp() + " " + n_.var(s.imm) + ";", indent, s.loc);
    } else if (s.op == ir::Op::StoreVar) {
      w_.user_line(n_.var(s.imm) + " = " + n_.value(s.args[0]) + ";", indent, s.loc);
    } else {
      w_.user_line("const " + s.type.cpp() + " " + n_.value(s.result) + " = " + ex_.expr(s) + ";", indent, s.loc);
    }
  }

  /// Recomputes rematerializable value `v` (and what it is made of) in the current run.
  void rematerialize(ir::ValueId v, std::set<ir::ValueId>& have, int indent) {
    if (!varying(v) || have.count(v)) return;
    const ir::Stmt& s = *def_.at(v);
    for (ir::ValueId a : s.args) rematerialize(a, have, indent);
    w_.user_line("const " + s.type.cpp() + " " + n_.value(v) + " = " + ex_.expr(s) + ";", indent, s.loc);
    have.insert(v);
  }

  /// One lane loop over a run of varying statements.
  void flush(std::vector<const ir::Stmt*>& run, const std::string& mask, int indent) {
    if (run.empty()) return;
    for_each_in_loop(run, [&](const ir::Stmt& s) {
      if (s.result != ir::kNoValue && lane_array_[s.result]) w_.line(lanes_of(s.type) + lane_name(s.result) + ";", indent);
    });
    std::vector<const ir::Stmt*> blocks;  // this run's block stores, each into its kj_sN
    for (const ir::Stmt* s : run)
      if (blocks_.count(s)) {
        blocks.push_back(s);
        w_.line("alignas(64) " + fn_.type_of(s->args.back()).cpp() + " " + block_name(*s) + "[KJ_LANES];", indent);
      }
    w_.line(std::string(kLaneLoop) + " {", indent);
    const int in = indent + 1;
    w_.line("const kj_int32 kj_index = kj_base + kj_l; (void)kj_index;", in);
    // Operands from outside the run: recomputed, or read from their lane arrays.
    std::set<ir::ValueId> have;
    for_each_in_loop(run, [&](const ir::Stmt& s) {
      if (s.result != ir::kNoValue) have.insert(s.result);
    });
    std::set<ir::ValueId> defined = have;
    for_each_in_loop(run, [&](const ir::Stmt& s) {
      for (ir::ValueId a : s.args) {
        if (!varying(a) || defined.count(a) || have.count(a)) continue;
        if (remat_[a]) {
          rematerialize(a, have, in);
        } else {
          w_.line("const " + fn_.type_of(a).cpp() + " " + n_.value(a) + " = " + at_lane(a) + ";", in);
          have.insert(a);
        }
      }
    });
    emit_in_loop(run, mask.empty() ? "" : mask + "[kj_l]", in);
    w_.line("}", indent);
    for (const ir::Stmt* s : blocks) {
      const std::string a = n_.value(s->args[0]);
      w_.user_line("kj::store_block(&kj::elem(" + a + ", kj_base), " + block_name(*s) + ", kj::streams(" + a + "));",
                   indent, s->loc);
    }
    run.clear();
  }

  /// The statements of a lane loop, under lane bit `active` (empty: every lane runs).
  void emit_in_loop(const std::vector<const ir::Stmt*>& stmts, const std::string& active, int in) {
    for (const ir::Stmt* s : stmts) {
      if (flat_.count(s)) {
        emit_flattened_if(*s, active, in);
        continue;
      }
      emit_lane_stmt(*s, active, in);
      if (s->result != ir::kNoValue && lane_array_[s->result])
        w_.line(lane_name(s->result) + ".set(kj_l, " + n_.value(s->result) + ");", in);
    }
  }

  /// Both sides of a flattened If, each under the lane's bit for it.
  void emit_flattened_if(const ir::Stmt& s, const std::string& active, int in) {
    for (int side = 0; side < 2; ++side) {
      const std::vector<const ir::Stmt*> inner = in_loop(s.regions[side]);
      if (inner.empty()) continue;
      const std::string bit = "kj_b" + std::to_string(bits_++);
      w_.user_line("const bool " + bit + " = " + (active.empty() ? "" : active + " && ") + (side ? "!" : "") +
                       n_.value(s.args[0]) + ";",
                   in, s.loc);
      emit_in_loop(inner, bit, in);
    }
  }

  /// `s` for lane kj_l; `active` is the lane's mask bit (empty: every lane runs).
  void emit_lane_stmt(const ir::Stmt& s, const std::string& active, int in) {
    const bool guard = !active.empty() && needs_guard(s);
    const std::string when = guard ? "if (" + active + ") " : "";
    auto value = [&](const std::string& expr) {
      const std::string v = n_.value(s.result), t = s.type.cpp();
      if (guard) w_.user_line(t + " " + v + "{}; if (" + active + ") " + v + " = " + expr + ";", in, s.loc);
      else w_.user_line("const " + t + " " + v + " = " + expr + ";", in, s.loc);
    };
    switch (s.op) {
      case ir::Op::LoadVar:
        value(var_lanes(s.imm) + ".get(kj_l)");
        break;
      case ir::Op::StoreVar: {
        const std::string v = n_.value(s.args[0]);
        w_.user_line(var_lanes(s.imm) + (active.empty() ? ".set(kj_l, " : ".select(kj_l, " + active + ", ") + v + ");",
                     in, s.loc);
        break;
      }
      case ir::Op::ArrayStore:
        if (blocks_.count(&s))  // every lane stores (top level): into the block, written after the loop
          w_.user_line("kj::store_to(" + block_name(s) + "[kj_l], " + n_.value(s.args.back()) + ");", in, s.loc);
        else
          w_.user_line(when + "kj::store_to(" + ex_.element(s, s.args.size() - 2) + ", " + n_.value(s.args.back()) + ");",
                       in, s.loc);
        break;
      case ir::Op::ArrayAtomic:
        value(ex_.atomic(s));
        break;
      case ir::Op::Print:
        w_.user_line(when + ex_.print(s, false) + ";", in, s.loc);
        break;
      case ir::Op::CallFunc:
        if (s.type.is_void()) w_.user_line(when + ex_.call_function(s, false) + ";", in, s.loc);
        else value(ex_.call_function(s, false));
        break;
      case ir::Op::Call:
        if (s.type.is_void()) w_.user_line(when + ex_.expr(s) + ";", in, s.loc);
        else value(ex_.expr(s));
        break;
      case ir::Op::ArrayLoad:
        value("kj::load_of(" + ex_.expr(s) + ")");
        break;
      case ir::Op::Const: case ir::Op::ThreadId: case ir::Op::LaunchDim: case ir::Op::Cast:
      case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert: case ir::Op::ArrayShape:
        value(ex_.expr(s));
        break;
      case ir::Op::Param: case ir::Op::DeclVar: case ir::Op::If: case ir::Op::For: case ir::Op::While:
      case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
        KJIT_CHECK(false, std::string("lane codegen put ") + ir::op_name(s.op) + " in a run");
        break;
    }
  }

  /// `mask` = outer && `bit` (a lane expression), then the block under it when any lane is on.
  std::string narrowed(const std::string& outer, const std::string& bit, int indent, const ir::SourceLoc& loc) {
    const std::string m = new_mask();
    w_.user_line("kj_int32 " + m + "[KJ_LANES];", indent, loc);
    w_.user_line(std::string(kLaneLoop) + " " + m + "[kj_l] = " + (outer.empty() ? "" : outer + "[kj_l] && ") + bit + ";",
                 indent, loc);
    return m;
  }

  void emit_control(const ir::Stmt& s, const std::string& mask, int indent) {
    const ir::SourceLoc& loc = s.loc;
    switch (s.op) {
      case ir::Op::If: {
        const ir::ValueId c = s.args[0];
        if (!varying(c)) {
          w_.user_line("if (" + n_.value(c) + ") {", indent, loc);
          emit_block(s.regions[0], mask, indent + 1);
          if (!s.regions[1].stmts.empty()) {
            w_.user_line("} else {", indent, loc);
            emit_block(s.regions[1], mask, indent + 1);
          }
          w_.user_line("}", indent, loc);
          break;
        }
        for (int side = 0; side < 2; ++side) {
          if (s.regions[side].stmts.empty()) continue;
          const std::string m = narrowed(mask, (side ? "!" : "") + at_lane(c), indent, loc);
          w_.user_line("if (kj::lanes_any(" + m + ")) {", indent, loc);
          emit_block(s.regions[side], m, indent + 1);
          w_.user_line("}", indent, loc);
        }
        break;
      }
      case ir::Op::For: {
        const ir::ValueId iv = s.regions[0].args.at(0);
        if (!varying(iv)) {
          const std::string i = n_.value(iv), begin = n_.value(s.args[0]), end = n_.value(s.args[1]),
                            step = n_.value(s.args[2]);
          w_.user_line("for (kj_int32 " + i + " = " + begin + "; " + for_condition(i, end, step) + "; " + i + " += " + step + ") {",
                       indent, loc);
          emit_block(s.regions[0], mask, indent + 1);
          w_.user_line("}", indent, loc);
          break;
        }
        const std::string i = lane_name(iv) + ".v[kj_l]", end = at_lane(s.args[1]), step = at_lane(s.args[2]);
        w_.user_line("kj::lanes<kj_int32> " + lane_name(iv) + ";", indent, loc);
        w_.user_line(std::string(kLaneLoop) + " " + i + " = " + at_lane(s.args[0]) + ";", indent, loc);
        const std::string m = narrowed(mask, "true", indent, loc);
        w_.user_line("for (;;) {", indent, loc);
        w_.user_line(std::string(kLaneLoop) + " " + m + "[kj_l] = " + m + "[kj_l] && (" + for_condition(i, end, step) + ");",
                     indent + 1, loc);
        w_.user_line("if (!kj::lanes_any(" + m + ")) break;", indent + 1, loc);
        emit_block(s.regions[0], m, indent + 1);
        w_.user_line(std::string(kLaneLoop) + " " + i + " += " + step + ";", indent + 1, loc);
        w_.user_line("}", indent, loc);
        break;
      }
      case ir::Op::While: {
        const ir::ValueId y = s.regions[0].yield;
        if (!varying(y)) {
          w_.user_line("for (;;) {", indent, loc);
          emit_block(s.regions[0], mask, indent + 1);
          w_.user_line("if (!" + n_.value(y) + ") break;", indent + 1, loc);
          emit_block(s.regions[1], mask, indent + 1);
          w_.user_line("}", indent, loc);
          break;
        }
        const std::string m = narrowed(mask, "true", indent, loc);
        w_.user_line("for (;;) {", indent, loc);
        emit_block(s.regions[0], m, indent + 1);
        w_.user_line(std::string(kLaneLoop) + " " + m + "[kj_l] = " + m + "[kj_l] && " + at_lane(y) + ";",
                     indent + 1, loc);
        w_.user_line("if (!kj::lanes_any(" + m + ")) break;", indent + 1, loc);
        emit_block(s.regions[1], m, indent + 1);
        w_.user_line("}", indent, loc);
        break;
      }
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
      case ir::Op::Call: case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract:
      case ir::Op::Insert: case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar:
      case ir::Op::ArrayLoad: case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::ArrayShape:
      case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return: case ir::Op::Print:
      case ir::Op::CallFunc:
        KJIT_CHECK(false, std::string("lane codegen: ") + ir::op_name(s.op) + " is not control flow");
        break;
    }
  }

  const ir::Function fn_;  // jumps lowered to flags
  Names n_;
  ExprEmitter ex_;
  SourceWriter& w_;
  std::vector<bool> varying_;      // by value
  std::vector<bool> varying_var_;  // by local variable
  std::vector<bool> lane_array_;   // by value: kept per lane beyond its run
  std::vector<bool> remat_;        // by value: recomputed in each run that uses it
  std::vector<const ir::Stmt*> def_;
  std::vector<int> run_of_;
  std::set<const ir::Stmt*> flat_;  // divergent Ifs run inside their lane loop
  std::set<const ir::Stmt*> blocks_;  // block stores (block_stores)
  int masks_ = 0;
  int bits_ = 0;
};

}  // namespace

bool wants_lane_function(const ir::Function& fn, const CodegenOptions& options) {
  if (options.bounds_check) return false;
  bool control = false;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) { control |= is_control(s) || runs_alone(s); });
  return control || !block_stores(fn).empty();
}

bool emit_lane_function(SourceWriter& w, const ir::Function& fn, const std::string& name,
                        const std::vector<EntryParam>& params, PreludeUse& prelude,
                        const FunctionNames* functions) {
  return LaneEmitter(w, fn, prelude, functions).emit(name, params);
}

}  // namespace kjit::codegen
