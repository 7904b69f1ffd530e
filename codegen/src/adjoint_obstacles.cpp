// What cannot be differentiated: arrays read and written, elements overwritten, used atomic
// results, While conditions with effects, tangents of dual-evaluated builtins, gradients
// taken in forward code (grad(f)). See
// docs/AUTODIFF.md for the rules.
#include "adjoint_obstacles.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "kjit/ir/builtins.hpp"
#include "kjit/ir/def_use.hpp"
#include "kjit/ir/structs.hpp"

namespace kjit::codegen {

namespace {

/// How messages name the array `def` defines: "array 'x'" for parameter x.
std::string array_name(const ir::Function& fn, const ir::Stmt* def) {
  if (def && def->op == ir::Op::Param) return "array '" + fn.params.at(size_t(def->imm)).name + "'";
  if (def && def->op == ir::Op::Extract)
    return "array field '" + ir::struct_info(fn.type_of(def->args[0]).struct_id).fields.at(size_t(def->field())).name + "'";
  return "an array built from an address";
}

/// Where a statement stands: its enclosing (statement, region) pairs, outermost first.
using Path = std::vector<std::pair<const ir::Stmt*, size_t>>;

/// Finds an array element that one thread provably writes twice: two stores at the same
/// index on one path, or a store inside a loop at an index the loop does not change. The
/// forward launch keeps the last value; a store's adjoint hands the element's gradient to
/// the stored value, so every overwritten value would receive it too.
class OverwriteFinder {
 public:
  OverwriteFinder(const ir::Function& fn, std::string what) : fn_(fn), what_(std::move(what)) {
    walk(fn.body);
  }
  const std::string& problem() const { return problem_; }

 private:
  struct Write {
    const ir::Stmt* stmt;
    Path path;
    bool returns_after;  ///< the thread returns after it: no later store overwrites it
  };
  /// What follows the current statement of a block: a Return, a Break.
  struct Exits {
    bool ret = false, brk = false;
  };

  void walk(const ir::Block& b) {
    // after[j]: what the statements after statement j hold (one pass from the end).
    std::vector<Exits> after(b.stmts.size());
    for (size_t j = b.stmts.size(); j-- > 1;) {
      after[j - 1].ret = after[j].ret || b.stmts[j].op == ir::Op::Return;
      after[j - 1].brk = after[j].brk || b.stmts[j].op == ir::Op::Break;
    }
    exits_.emplace_back();
    for (size_t j = 0; j < b.stmts.size() && problem_.empty(); ++j) {
      const ir::Stmt& s = b.stmts[j];
      exits_.back() = after[j];
      if (s.result != ir::kNoValue) define(s.result, &s);
      if (s.op == ir::Op::ArrayStore) check_store(s);
      if (s.op == ir::Op::ArrayStore || s.op == ir::Op::ArrayAtomic) writes_.push_back({&s, path_, exits_after(0, true, false)});
      for (size_t r = 0; r < s.regions.size(); ++r) {
        path_.push_back({&s, r});
        for (ir::ValueId a : s.regions[r].args) define(a, nullptr);
        walk(s.regions[r]);
        path_.pop_back();
      }
    }
    exits_.pop_back();
  }

  /// Whether a Return (or a Break, with `brk`) follows the current statement in one of the
  /// blocks from nesting level `from` (0: the function's body) inwards.
  bool exits_after(size_t from, bool ret, bool brk) const {
    for (size_t k = from; k < exits_.size(); ++k)
      if ((ret && exits_[k].ret) || (brk && exits_[k].brk)) return true;
    return false;
  }

  /// Whether a Return follows the current statement anywhere inside the loop at path_[p], or
  /// a Break that leaves that loop: one in its body or in an If inside it, not one in a loop
  /// nested in it (which leaves only the nested loop).
  bool leaves_loop_after(size_t p) const {
    if (exits_after(p + 1, true, false)) return true;
    for (size_t k = p + 1; k < exits_.size(); ++k) {
      if (exits_[k].brk) return true;
      // Block k + 1 is a region of path_[k]: inside a nested loop, a Break is that loop's.
      if (k < path_.size() && is_loop(*path_[k].first)) break;
    }
    return false;
  }

  void define(ir::ValueId v, const ir::Stmt* s) {
    def_[v] = s;
    std::vector<const ir::Stmt*>& loops = loops_of_[v];
    for (const auto& [stmt, region] : path_)
      if (is_loop(*stmt)) loops.push_back(stmt);
  }

  static bool is_loop(const ir::Stmt& s) { return s.op == ir::Op::For || s.op == ir::Op::While; }

  /// A statement whose value depends on its operands alone. An array read counts: this
  /// check runs only on functions that write no array they read, so an element read twice at
  /// the same index gives the same value.
  static bool pure(const ir::Stmt& s) { return ir::is_pure(s) || s.op == ir::Op::ArrayLoad; }

  /// Whether `v` provably has the same value in every iteration of `loop`: defined outside
  /// it, or computed inside from such values (a variable the loop never stores counts).
  bool invariant(ir::ValueId v, const ir::Stmt* loop) {
    const std::vector<const ir::Stmt*>& loops = loops_of_.at(v);
    if (std::find(loops.begin(), loops.end(), loop) == loops.end()) return true;
    const ir::Stmt* d = def_.at(v);
    if (d && d->op == ir::Op::LoadVar) return stored_in(loop).count(d->imm) == 0;
    if (!d || !pure(*d)) return false;
    for (ir::ValueId a : d->args)
      if (!invariant(a, loop)) return false;
    return true;
  }

  /// The variables that statements inside `loop` store.
  const std::set<int64_t>& stored_in(const ir::Stmt* loop) {
    auto [it, fresh] = stored_.try_emplace(loop);
    if (fresh)
      for (const ir::Block& r : loop->regions)
        ir::for_each_stmt(r, [&](const ir::Stmt& s) {
          if (s.op == ir::Op::StoreVar) it->second.insert(s.var());
        });
    return it->second;
  }

  /// Whether `a` and `b` provably hold the same value (the same value, or the same pure
  /// computation of the same operands: `tid()` twice).
  bool same(ir::ValueId a, ir::ValueId b) const {
    if (a == b) return true;
    const ir::Stmt* da = def_.at(a);
    const ir::Stmt* db = def_.at(b);
    if (!da || !db || !pure(*da) || da->op != db->op || da->imm != db->imm || da->bits != db->bits ||
        !(da->type == db->type) || da->args.size() != db->args.size())
      return false;
    for (size_t i = 0; i < da->args.size(); ++i)
      if (!same(da->args[i], db->args[i])) return false;
    return true;
  }

  /// Whether no run of the function reaches both paths (they part in two branches of one If).
  static bool exclusive(const Path& p, const Path& q) {
    for (size_t i = 0; i < p.size() && i < q.size(); ++i) {
      if (p[i] == q[i]) continue;
      return p[i].first == q[i].first && p[i].first->op == ir::Op::If;
    }
    return false;
  }

  void check_store(const ir::Stmt& s) {
    const size_t n = s.args.size() - 1;  // the array and its indices; the value is last
    for (size_t p = path_.size(); p-- > 0;) {
      const auto it = path_.begin() + std::ptrdiff_t(p);
      if (!is_loop(*it->first)) continue;
      // A Return after the store, or a Break that leaves this loop, makes it the loop's last write.
      if (leaves_loop_after(p)) continue;
      bool moves = false;
      for (size_t i = 1; i < n; ++i) moves = moves || !invariant(s.args[i], it->first);
      if (moves) continue;
      problem_ = what_ + ": " + array_name(fn_, def_.at(s.args[0])) + " is written at " + s.loc.str() +
                 " inside the loop at " + it->first->loc.str() +
                 " at an index the loop does not change; each iteration overwrites the element, and "
                 "the adjoint would give every overwritten value the element's gradient. Keep the "
                 "value in a Var and store it once after the loop, or index the store by the loop";
      return;
    }
    for (const Write& w : writes_) {
      const ir::Stmt& t = *w.stmt;
      if (w.returns_after || t.args.size() < n || !same(t.args[0], s.args[0]) || exclusive(w.path, path_)) continue;
      const size_t tn = t.op == ir::Op::ArrayStore ? t.args.size() - 1 : n;
      bool at_same = tn == n;
      for (size_t i = 1; at_same && i < n; ++i) at_same = same(t.args[i], s.args[i]);
      if (!at_same) continue;
      problem_ = what_ + ": " + array_name(fn_, def_.at(s.args[0])) + " is written at " + t.loc.str() + " and again at " +
                 s.loc.str() + " at the same index; the second write overwrites the first, and the "
                 "adjoint would give the overwritten value the element's gradient too. Keep the value "
                 "in a Var and store it once";
      return;
    }
  }

  const ir::Function& fn_;
  std::string what_;
  std::string problem_;
  Path path_;
  std::vector<Exits> exits_;  ///< per block of path_ (and the body), what follows its statement
  std::vector<Write> writes_;
  std::map<ir::ValueId, const ir::Stmt*> def_;  ///< nullptr for block arguments
  std::map<ir::ValueId, std::vector<const ir::Stmt*>> loops_of_;  ///< loops around each value's definition
  std::map<const ir::Stmt*, std::set<int64_t>> stored_;  ///< see stored_in
};

/// The first statement reading and the first writing an array, for messages.
struct ArrayUse {
  const ir::Stmt* read = nullptr;
  const ir::Stmt* write = nullptr;
};

/// What stops `fn` (a kernel or a device function) from being differentiated, or "".
/// `params` receives, per parameter, how the body (callees included) uses it as an array.
std::string obstacle_of(const ir::Function& fn, std::vector<ArrayUse>& params) {
  const std::string what = std::string(fn.is_function ? "device function '" : "kernel '") + fn.name + "'";
  std::map<ir::ValueId, const ir::Stmt*> param_of;
  std::map<ir::ValueId, const ir::Stmt*> field_of;  ///< the Extract that reads each array field
  std::map<ir::ValueId, ArrayUse> arrays;
  const ir::DefUse def_use(fn);
  std::vector<const ir::Stmt*> atomics;
  std::string problem;
  std::string gradient;  ///< a grad(f) here: no second derivatives, whatever a replay says
  // Each read of a struct's array field is an Extract of its own; one key per (struct value,
  // field) makes two reads of `q.x()` one array.
  std::map<std::pair<ir::ValueId, int>, ir::ValueId> field_key;
  std::map<ir::ValueId, ir::ValueId> same_array;
  auto note = [&](ir::ValueId array, const ir::Stmt& s, bool write) {
    auto same = same_array.find(array);
    if (same != same_array.end()) array = same->second;
    ArrayUse& u = arrays[array];
    if (write && !u.write) u.write = &s;
    if (!write && !u.read) u.read = &s;
  };
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param) param_of[s.result] = &s;
    if (s.op == ir::Op::Extract && s.type.is_array()) {
      same_array[s.result] = field_key.emplace(std::make_pair(s.args[0], s.field()), s.result).first->second;
      field_of[s.result] = &s;
    }
    if (s.op == ir::Op::ArrayLoad) note(s.args[0], s, false);
    if (s.op == ir::Op::ArrayStore || s.op == ir::Op::ArrayAtomic) note(s.args[0], s, true);
    if (s.op == ir::Op::ArrayAtomic) atomics.push_back(&s);
    if (s.op == ir::Op::TangentCall && problem.empty())
      problem = what + " at " + s.loc.str() + ": the adjoint of the tangent of " + ir::builtin_info(s.builtin()).name +
                " is not supported (its tangent is one dual-number evaluation, which has no adjoint of its own): "
                "second derivatives through " + ir::builtin_info(s.builtin()).name +
                " are not available; build the tangent module with enable_adjoint = false";
    if (s.op == ir::Op::GradFunc && gradient.empty()) {
      const std::string f = fn.callees.at(s.callee())->name;
      gradient = what + " at " + s.loc.str() + ": grad(" + f + ") is forward code; the adjoint of a kernel that takes "
                 "a gradient would need second derivatives through " + f + "'s adjoint, which are not supported. "
                 "Build the module with enable_adjoint = false (Warp's enable_backward=False)";
    }
    if (s.op == ir::Op::CallFunc && gradient.empty() && ir::takes_gradient(*fn.callees.at(s.callee())))
      gradient = what + " at " + s.loc.str() + ": device function '" + fn.callees.at(s.callee())->name +
                 "' takes a gradient (grad(...)), which has no adjoint: second derivatives are not supported. "
                 "Build the module with enable_adjoint = false (Warp's enable_backward=False)";
    if (s.op == ir::Op::CallFunc && problem.empty()) {
      const ir::Function& callee = *fn.callees.at(s.callee());
      std::vector<ArrayUse> inner;
      std::string p = obstacle_of(callee, inner);
      if (!p.empty()) problem = p + " (called at " + s.loc.str() + ")";
      for (size_t k = 0; k < s.args.size() && k < inner.size(); ++k) {
        if (inner[k].read) note(s.args[k], s, false);
        if (inner[k].write) note(s.args[k], s, true);
      }
    }
    if (s.op == ir::Op::While && problem.empty()) {
      // A variable the condition declares itself (lower_jumps' guarded condition) is its own
      // scratch, not state that replaying it would change.
      std::set<int64_t> own;
      ir::for_each_stmt(s.regions[0], [&](const ir::Stmt& c) {
        if (c.op == ir::Op::DeclVar) own.insert(c.var());
      });
      ir::for_each_stmt(s.regions[0], [&](const ir::Stmt& c) {
        bool effect = (c.op == ir::Op::StoreVar && !own.count(c.var())) || c.op == ir::Op::ArrayStore ||
                      c.op == ir::Op::ArrayAtomic || c.op == ir::Op::Print || c.op == ir::Op::CallFunc;
        if (effect && problem.empty())
          problem = what + " at " + c.loc.str() +
                    ": a While condition changes state; the adjoint replays conditions and "
                    "needs them free of effects. Move the change into the loop body";
      });
    }
  });
  params.assign(fn.params.size(), ArrayUse{});
  for (const auto& [value, param] : param_of)
    if (arrays.count(value)) params[size_t(param->imm)] = arrays[value];
  if (!gradient.empty()) return gradient;
  // A user-supplied replay takes responsibility for what replaying the body would get wrong.
  if (fn.custom_replay) return "";
  if (!problem.empty()) return problem;
  for (const auto& [value, u] : arrays) {
    if (!u.read || !u.write) continue;
    auto p = param_of.find(value);
    auto f = field_of.find(value);
    const ir::Stmt* def = p != param_of.end() ? p->second : f != field_of.end() ? f->second : nullptr;
    return what + ": " + array_name(fn, def) + " is read at " + u.read->loc.str() + " and written at " + u.write->loc.str() +
           "; its adjoint would replay reads of values the forward launch overwrote. Write "
           "results to a separate array, or build the module with enable_adjoint = false";
  }
  OverwriteFinder overwrites(fn, what);
  if (!overwrites.problem().empty()) return overwrites.problem();
  for (const ir::Stmt* a : atomics) {
    const ir::AtomicOp op = a->atomic_op();
    const bool has_rule = op == ir::AtomicOp::Add || op == ir::AtomicOp::Sub || op == ir::AtomicOp::Min ||
                          op == ir::AtomicOp::Max;
    if (!has_rule && fn.type_of(a->args.back()).is_differentiable())
      return what + " at " + a->loc.str() + ": atomic_" + ir::atomic_op_name(op) + " on " +
             array_name(fn, param_of.count(a->args[0]) ? param_of.at(a->args[0]) : nullptr) +
             " has no adjoint (the value it replaces is lost); differentiate a kernel that uses "
             "atomic_add, atomic_sub, atomic_min, atomic_max or a store, or build the module with "
             "enable_adjoint = false";
  }
  for (const ir::Stmt* a : atomics)
    if (def_use.used(a->result))  // a device function's returning it is a use too
      return what + " at " + a->loc.str() + ": the value returned by atomic_" + ir::atomic_op_name(a->atomic_op()) +
             " is used; the adjoint cannot replay an atomic's result. Use the returned value only in "
             "kernels built without adjoints, or give the device function a replay";
  return "";
}

}  // namespace

std::string adjoint_obstacle(const ir::Function& fn) {
  std::vector<ArrayUse> params;
  return obstacle_of(fn, params);
}

}  // namespace kjit::codegen
