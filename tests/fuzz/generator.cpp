// generator.cpp — builds random programs: nested loops with dynamic bounds, branches, jumps at
// any depth, Var updates, local arrays, loads at own/other/loaded indices, stores, atomics,
// builtins kept in their smooth domains, and device functions with and without custom grads.
#include "generator.hpp"

#include <random>

namespace fuzz {
namespace {

struct Scope {
  struct Entry { int id; Ty ty; bool local; };
  std::vector<Entry> vars;
};

class Gen {
 public:
  Gen(uint64_t seed, const GenOptions& o) : rng_(seed * 0x9E3779B97F4A7C15ull + 12345), o_(o) {}

  Program run(uint64_t seed) {
    Program p;
    p.seed = seed;
    scopes_.push_back({});
    budget_ = 6 + int(pick(o_.max_stmts - 5));
    // A few locals first, so that later statements have state to update.
    p.body.push_back(decl(Ty::D));
    if (chance(0.6)) p.body.push_back(decl(Ty::V3));
    if (chance(0.3)) p.body.push_back(decl(Ty::M33));
    block(p.body, 0);
    // Outputs every thread writes once (unless it returned or stored already).
    if (!out_stored_ && chance(0.9)) p.body.push_back(store(Stmt::StoreOut, Ty::D));
    if (!outv_stored_ && chance(0.5)) p.body.push_back(store(Stmt::StoreOutV, Ty::V3));
    // Finding 1's trigger is wider than its text: any jump in a loop of a kernel that also has
    // a nested loop anywhere (FINDINGS.md). Without nested_jumps, such kernels lose their
    // jumps inside loops.
    if (!o_.nested_jumps && has_nested_loop(p.body, 0)) strip_nested_jumps(p.body, true);
    return p;
  }

 private:
  std::mt19937_64 rng_;
  GenOptions o_;
  std::vector<Scope> scopes_;
  struct Loop { int id; bool is_for; };
  std::vector<Loop> loops_;
  int next_var_ = 0, next_loop_ = 0, budget_ = 0;
  bool out_stored_ = false, outv_stored_ = false;
  int minmax_op_ = -1;  ///< atomic_min (0) or atomic_max (1), once chosen

  uint64_t pick(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }

  std::vector<Scope::Entry> visible(Ty ty, bool local) const {
    std::vector<Scope::Entry> r;
    for (const Scope& s : scopes_)
      for (const auto& e : s.vars)
        if (e.ty == ty && e.local == local) r.push_back(e);
    return r;
  }

  static Expr mk(Expr::Kind k, Ty ty, std::vector<Expr> a = {}, int i0 = 0, int i1 = 0) {
    Expr e;
    e.k = k; e.ty = ty; e.a = std::move(a); e.i0 = i0; e.i1 = i1;
    return e;
  }
  static Expr cd(double d) { Expr e = mk(Expr::ConstD, Ty::D); e.d = d; return e; }
  static Expr ci(int i) { return mk(Expr::ConstI, Ty::I, {}, i); }
  static Expr tid() { return mk(Expr::Tid, Ty::I); }

  // An index: the thread's own, another thread's, or one loaded from idx.
  Expr index(int depth) {
    switch (pick(4)) {
      case 0: case 1: return tid();
      case 2: return mk(Expr::AddI, Ty::I, {tid(), ci(1 + int(pick(3)))});
      default: return depth > 1 ? mk(Expr::LoadIdx, Ty::I, {tid()}) : int_expr(depth + 1);
    }
  }

  Expr int_expr(int depth) {
    std::vector<int> choices = {0, 1, 2, 3};
    for (const Loop& l : loops_) if (l.is_for) { choices.push_back(4); break; }
    if (!visible(Ty::I, false).empty()) choices.push_back(5);
    if (depth < 2) { choices.push_back(6); choices.push_back(7); }
    switch (choices[pick(choices.size())]) {
      case 0: return ci(int(pick(4)));
      case 1: return tid();
      case 2: return mk(Expr::ParamK, Ty::I);
      case 3: return mk(Expr::LoadIdx, Ty::I, {index(depth + 1)});
      case 4: {
        std::vector<int> ids;
        for (const Loop& l : loops_) if (l.is_for) ids.push_back(l.id);
        return mk(Expr::LoopVar, Ty::I, {}, ids[pick(ids.size())]);
      }
      case 5: { auto v = visible(Ty::I, false); return mk(Expr::VarRef, Ty::I, {}, v[pick(v.size())].id); }
      case 6: return mk(Expr::AddI, Ty::I, {int_expr(depth + 1), int_expr(depth + 1)});
      default: return mk(Expr::ModI, Ty::I, {int_expr(depth + 1)}, 1 + int(pick(4)));
    }
  }

  Expr bool_expr(int depth) {
    if (chance(0.15) && depth < 2) return mk(Expr::Not, Ty::B, {bool_expr(depth + 1)});
    if (chance(0.3)) return mk(Expr::Cmp, Ty::B, {int_expr(depth + 1), int_expr(depth + 1)}, int(pick(4)));
    return mk(Expr::Cmp, Ty::B, {dexpr(depth + 1), dexpr(depth + 1)}, int(pick(4)));
  }

  Expr leaf(Ty ty) {
    auto vars = visible(ty, false);
    if (!vars.empty() && chance(0.45)) return mk(Expr::VarRef, ty, {}, vars[pick(vars.size())].id);
    switch (ty) {
      case Ty::D: {
        auto locals = visible(Ty::D, true);
        if (!locals.empty() && chance(0.25))
          return mk(Expr::LocalRead, Ty::D, {int_expr(2)}, locals[pick(locals.size())].id);
        switch (pick(5)) {
          case 0: return cd(double(int(real(-20, 20))) / 8.0);
          case 1: return mk(Expr::ParamS, Ty::D);
          case 2: if (!loops_.empty() && loops_.back().is_for) return mk(Expr::CastD, Ty::D, {int_expr(1)}); [[fallthrough]];
          default: return mk(Expr::LoadA, Ty::D, {index(0)});
        }
      }
      case Ty::V3: return mk(Expr::LoadV, Ty::V3, {index(0)});
      case Ty::M33: return mk(Expr::LoadM, Ty::M33, {index(0)});
      case Ty::I: return int_expr(2);
      case Ty::B: return bool_expr(2);
    }
    return cd(0);
  }

  Expr dexpr(int depth) { return expr(Ty::D, depth); }

  Expr expr(Ty ty, int depth) {
    if (depth >= 3 || chance(0.25)) return leaf(ty);
    int d = depth + 1;
    if (ty == Ty::I) return int_expr(depth);
    if (ty == Ty::B) return bool_expr(depth);
    if (ty == Ty::D) {
      switch (pick(13)) {
        case 0: return mk(Expr::Add, Ty::D, {expr(Ty::D, d), expr(Ty::D, d)});
        case 1: return mk(Expr::Sub, Ty::D, {expr(Ty::D, d), expr(Ty::D, d)});
        case 2: return mk(Expr::Mul, Ty::D, {expr(Ty::D, d), expr(Ty::D, d)});
        case 3: return mk(Expr::SafeDiv, Ty::D, {expr(Ty::D, d), expr(Ty::D, d)});
        case 4: case 5: return mk(Expr::Unary, Ty::D, {expr(Ty::D, d)}, int(pick(kUnary.size())));
        case 6: return mk(Expr::Binary, Ty::D, {expr(Ty::D, d), expr(Ty::D, d)}, int(pick(kBinary.size())));
        case 7: return mk(Expr::Neg, Ty::D, {expr(Ty::D, d)});
        case 8: {
          if (chance(0.5)) return mk(Expr::Comp, Ty::D, {expr(Ty::V3, d)}, int(pick(3)));
          return mk(Expr::Comp, Ty::D, {expr(Ty::M33, d)}, int(pick(3)), int(pick(3)));
        }
        case 9: case 10: return struct_fn(Ty::D, d);
        case 11: return mk(Expr::Where, Ty::D, {bool_expr(d), expr(Ty::D, d), expr(Ty::D, d)});
        default: return call(Ty::D, d);
      }
    }
    if (ty == Ty::V3) {
      switch (pick(8)) {
        case 0: return mk(Expr::Add, Ty::V3, {expr(Ty::V3, d), expr(Ty::V3, d)});
        case 1: return mk(Expr::Sub, Ty::V3, {expr(Ty::V3, d), expr(Ty::V3, d)});
        case 2: return mk(Expr::Mul, Ty::V3, {expr(Ty::V3, d), expr(Ty::D, d)});
        case 3: return mk(Expr::Mul, Ty::V3, {expr(Ty::M33, d), expr(Ty::V3, d)});
        case 4: return mk(Expr::MakeV3, Ty::V3, {expr(Ty::D, d), expr(Ty::D, d), expr(Ty::D, d)});
        case 5: case 6: return struct_fn(Ty::V3, d);
        default: return call(Ty::V3, d);
      }
    }
    // M33
    switch (pick(7)) {
      case 0: return mk(Expr::Add, Ty::M33, {expr(Ty::M33, d), expr(Ty::M33, d)});
      case 1: return mk(Expr::Sub, Ty::M33, {expr(Ty::M33, d), expr(Ty::M33, d)});
      case 2: return mk(Expr::Mul, Ty::M33, {expr(Ty::M33, d), expr(Ty::D, d)});
      case 3:
        if (o_.mat_products) return mk(Expr::Mul, Ty::M33, {expr(Ty::M33, d), expr(Ty::M33, d)});
        [[fallthrough]];
      default: return struct_fn(Ty::M33, d);
    }
  }

  /// A builtin of kStructFns with result type `ty`, on generated operands.
  Expr struct_fn(Ty ty, int d) {
    std::vector<int> ok;
    for (size_t i = 0; i < kStructFns.size(); ++i)
      if (kStructFns[i].result == ty) ok.push_back(int(i));
    const int f = ok[pick(ok.size())];
    std::vector<Expr> a;
    for (Ty t : kStructFns[size_t(f)].params) a.push_back(expr(t, d));
    return mk(Expr::StructFn, ty, std::move(a), f);
  }

  Expr call(Ty ty, int d) {
    std::vector<int> ok;
    for (size_t f = 0; f < kFuncs.size(); ++f) {
      const FuncInfo& fi = kFuncs[f];
      if (fi.result != ty || !fi.generated) continue;
      if (fi.custom_grad && fi.params.size() >= 2 && !fi.takes_array && !o_.custom_grad_multi) continue;
      if (fi.takes_array && !o_.custom_grad_array) continue;
      ok.push_back(int(f));
    }
    if (ok.empty() || o_.straight_line || !o_.calls) return leaf(ty);
    int f = ok[pick(ok.size())];
    std::vector<Expr> args;
    for (Ty t : kFuncs[size_t(f)].params) args.push_back(t == Ty::I ? (chance(0.5) ? tid() : int_expr(2)) : expr(t, d + 1));
    return mk(Expr::CallF, ty, std::move(args), f);
  }

  Stmt decl(Ty ty) {
    Stmt s;
    s.k = Stmt::Decl; s.ty = ty; s.i0 = next_var_++;
    s.e.push_back(ty == Ty::I ? int_expr(1) : expr(ty, 1));
    scopes_.back().vars.push_back({s.i0, ty, false});
    --budget_;
    return s;
  }

  Stmt store(Stmt::Kind k, Ty ty) {
    Stmt s;
    s.k = k; s.ty = ty;
    s.e.push_back(expr(ty, 0));
    (k == Stmt::StoreOut ? out_stored_ : outv_stored_) = true;
    --budget_;
    return s;
  }

  int for_depth() const { return int(loops_.size()); }

  void block(std::vector<Stmt>& out, int depth) {
    int n = 1 + int(pick(depth == 0 ? 6 : 4));
    for (int i = 0; i < n && budget_ > 0; ++i) out.push_back(stmt(depth));
  }

  void nested(std::vector<Stmt>& body, int depth) {
    scopes_.push_back({});
    block(body, depth + 1);
    scopes_.pop_back();
  }

  Stmt stmt(int depth) {
    --budget_;
    Stmt s;
    int r = int(pick(100));
    bool can_nest = depth < 3 && budget_ > 2 && !o_.straight_line;
    bool in_loop = !loops_.empty();
    bool jump_ok = (loops_.size() < 2 || o_.nested_jumps) && !o_.straight_line;
    if (r < 12) return decl(Ty(pick(2) == 0 ? Ty::D : (chance(0.5) ? Ty::V3 : (chance(0.5) ? Ty::I : Ty::M33))));
    if (r < 30) {
      // Assign a visible Var.
      static const Ty tys[] = {Ty::D, Ty::V3, Ty::M33, Ty::I};
      Ty ty = tys[pick(4)];
      auto v = visible(ty, false);
      if (v.empty()) return decl(Ty::D);
      s.k = Stmt::Assign; s.ty = ty; s.i0 = v[pick(v.size())].id;
      if (ty == Ty::I) {
        s.e.push_back(mk(Expr::AddI, Ty::I, {mk(Expr::VarRef, Ty::I, {}, s.i0), ci(1 + int(pick(2)))}));
      } else if (chance(0.5)) {
        // Carried state: the new value depends on the old one.
        Expr old = mk(Expr::VarRef, ty, {}, s.i0);
        if (ty == Ty::D) s.e.push_back(mk(Expr::Add, Ty::D, {mk(Expr::Mul, Ty::D, {old, cd(0.75)}), mk(Expr::Unary, Ty::D, {expr(Ty::D, 1)}, int(pick(kUnary.size())))}));
        else s.e.push_back(mk(Expr::Add, ty, {mk(Expr::Mul, ty, {old, cd(0.5)}), expr(ty, 1)}));
      } else {
        s.e.push_back(expr(ty, 0));
      }
      return s;
    }
    if (r < 36) {
      auto v3 = visible(Ty::V3, false), m = visible(Ty::M33, false);
      if (v3.empty() && m.empty()) return decl(Ty::V3);
      bool mat = v3.empty() || (!m.empty() && chance(0.4));
      s.k = Stmt::AssignComp; s.ty = mat ? Ty::M33 : Ty::V3;
      auto& pool = mat ? m : v3;
      s.i0 = pool[pick(pool.size())].id;
      s.i1 = int(pick(mat ? 9 : 3));
      s.d = chance(0.5) ? 1 : 0;
      s.e.push_back(expr(Ty::D, 1));
      return s;
    }
    if (r < 40) {
      auto locals = visible(Ty::D, true);
      if (locals.empty() || chance(0.3)) {
        s.k = Stmt::DeclLocal; s.i0 = next_var_++;
        scopes_.back().vars.push_back({s.i0, Ty::D, true});
        return s;
      }
      s.k = Stmt::LocalWrite; s.i0 = locals[pick(locals.size())].id;
      s.e.push_back(expr(Ty::D, 1));
      s.e.push_back(int_expr(1));
      return s;
    }
    if (r < 55 && can_nest) {
      s.k = Stmt::If;
      s.e.push_back(bool_expr(0));
      nested(s.body, depth);
      if (chance(0.4)) { s.has_else = true; nested(s.els, depth); }
      return s;
    }
    if (r < 70 && can_nest && o_.loops) {
      bool is_for = chance(0.65);
      s.k = is_for ? Stmt::For : Stmt::While;
      s.i0 = next_loop_++;
      // Dynamic bounds: k, a loaded int, a counter; reduced mod 5 so nests stay small.
      Expr bound;
      switch (pick(4)) {
        case 0: bound = mk(Expr::ParamK, Ty::I); break;
        case 1: bound = mk(Expr::ModI, Ty::I, {mk(Expr::LoadIdx, Ty::I, {index(1)})}, 4); break;
        case 2: bound = ci(1 + int(pick(4))); break;
        default: bound = mk(Expr::ModI, Ty::I, {int_expr(1)}, 5); break;
      }
      s.e.push_back(bound);
      loops_.push_back({s.i0, is_for});
      nested(s.body, depth);
      loops_.pop_back();
      return s;
    }
    if (r < 78 && in_loop && jump_ok) {
      s.k = chance(0.5) ? Stmt::Break : Stmt::Continue;
      return guarded(s, depth);
    }
    if (r < 81 && jump_ok) {
      s.k = Stmt::Return;
      return guarded(s, depth);
    }
    // A store in a loop overwrites its element every iteration: kjit must refuse its adjoint
    // with the line (AUTODIFF.md), which exercises the refusal path.
    if (r < 84 && !out_stored_ && (loops_.empty() || (o_.refusable && chance(0.3)))) return store(Stmt::StoreOut, Ty::D);
    if (r < 86 && !outv_stored_ && loops_.empty()) return store(Stmt::StoreOutV, Ty::V3);
    if (r < 94) {
      s.k = Stmt::AtomicAdd; s.ty = chance(0.7) ? Ty::D : Ty::V3;
      s.e.push_back(expr(s.ty, 1));
      s.e.push_back(chance(0.5) ? ci(int(pick(2))) : int_expr(1));
      return s;
    }
    if (r < 97 && o_.atomic_minmax) {
      // One of min and max per program: mixed on one element, the result depends on the order
      // the threads reach them (the reference runs thread after thread, the cpu's lane
      // functions all lanes' atomic_min before their atomic_max: seed 7251 at 16 threads).
      if (minmax_op_ < 0) minmax_op_ = int(pick(2));
      s.k = Stmt::AtomicMinMax; s.i1 = minmax_op_;
      s.e.push_back(expr(Ty::D, 1));
      s.e.push_back(chance(0.5) ? ci(int(pick(2))) : int_expr(1));
      return s;
    }
    // A plain carried update of the first scalar.
    auto v = visible(Ty::D, false);
    if (v.empty()) return decl(Ty::D);
    s.k = Stmt::Assign; s.ty = Ty::D; s.i0 = v[0].id;
    s.e.push_back(mk(Expr::Add, Ty::D, {mk(Expr::VarRef, Ty::D, {}, s.i0), mk(Expr::Mul, Ty::D, {cd(0.5), mk(Expr::Unary, Ty::D, {expr(Ty::D, 1)}, 0)})}));
    return s;
  }

  static bool has_nested_loop(const std::vector<Stmt>& b, int depth) {
    for (const Stmt& s : b) {
      bool loop = s.k == Stmt::For || s.k == Stmt::While;
      if (loop && depth > 0) return true;
      if (has_nested_loop(s.body, depth + loop) || has_nested_loop(s.els, depth)) return true;
    }
    return false;
  }
  // Removes every jump inside a loop.
  static void strip_nested_jumps(std::vector<Stmt>& b, bool strip) {
    for (size_t i = 0; i < b.size();) {
      Stmt& s = b[i];
      if (strip && (s.k == Stmt::Break || s.k == Stmt::Continue || s.k == Stmt::Return)) {
        b.erase(b.begin() + long(i));
        continue;
      }
      bool inner = strip || s.k == Stmt::For || s.k == Stmt::While;
      strip_nested_jumps(s.body, inner);
      strip_nested_jumps(s.els, inner);
      ++i;
    }
  }

  // A jump is usually conditional (else the rest of its block is dead).
  Stmt guarded(Stmt jump, int) {
    if (chance(0.2)) return jump;
    Stmt s;
    s.k = Stmt::If;
    s.e.push_back(bool_expr(0));
    s.body.push_back(std::move(jump));
    return s;
  }
};

}  // namespace

Program generate(uint64_t seed, const GenOptions& options) {
  Gen g(seed, options);
  return g.run(seed);
}

}  // namespace fuzz

namespace fuzz {
GenOptions known_safe_options() {
  // Turn a construct off here (see GenOptions) while a finding about it is open, naming the
  // finding; FINDINGS.md says which. Issue 12's findings 1-4 and 7 (jumps in nested loops,
  // .grad() of two value parameters and of array parameters, square matrix products,
  // atomic min/max ties) were avoided here until a92ee13 fixed them; none is open now.
  GenOptions o;
  return o;
}
}  // namespace fuzz
