// shrinker.cpp — greedy shrinking of a failing program: delete statements, unwrap branches and
// loops, reduce loop bounds, then simplify expressions, while the failure of the same kind
// persists. Candidates are checked many to a module, so one host compile serves a round.
#include <atomic>
#include <chrono>
#include <functional>

#include "checker.hpp"
#include "printer.hpp"

namespace fuzz {
namespace {

// Scoping rules a candidate must keep (deleting a declaration or unwrapping a loop can break them).
struct Validator {
  std::vector<std::vector<int>> vars;  // visible var / local ids per scope
  std::vector<std::pair<int, bool>> loops;  // loop id, is_for
  bool ok = true;

  bool visible(int id) const {
    for (auto& s : vars) for (int v : s) if (v == id) return true;
    return false;
  }
  bool loop_visible(int id) const {
    for (auto& l : loops) if (l.first == id && l.second) return true;
    return false;
  }
  void expr(const Expr& e) {
    if ((e.k == Expr::VarRef || e.k == Expr::LocalRead) && !visible(e.i0)) ok = false;
    if (e.k == Expr::LoopVar && !loop_visible(e.i0)) ok = false;
    for (const Expr& a : e.a) expr(a);
  }
  void block(const std::vector<Stmt>& b) {
    vars.emplace_back();
    for (const Stmt& s : b) stmt(s);
    vars.pop_back();
  }
  void stmt(const Stmt& s) {
    for (const Expr& e : s.e) expr(e);
    switch (s.k) {
      case Stmt::Decl: case Stmt::DeclLocal: vars.back().push_back(s.i0); break;
      case Stmt::Assign: case Stmt::AssignComp: case Stmt::LocalWrite: if (!visible(s.i0)) ok = false; break;
      case Stmt::If: block(s.body); if (s.has_else) block(s.els); break;
      case Stmt::For: case Stmt::While:
        loops.push_back({s.i0, s.k == Stmt::For});
        block(s.body);
        loops.pop_back();
        break;
      case Stmt::Break: case Stmt::Continue: if (loops.empty()) ok = false; break;
      default: break;
    }
  }
};

bool valid(const Program& p) {
  Validator v;
  v.block(p.body);
  return v.ok;
}

// Visits every block of the program in a fixed order.
void each_block(std::vector<Stmt>& b, const std::function<void(std::vector<Stmt>&)>& f) {
  f(b);
  for (Stmt& s : b) {
    each_block(s.body, f);
    if (s.has_else) each_block(s.els, f);
  }
}
void each_expr(Expr& e, const std::function<void(Expr&)>& f) {
  f(e);
  for (Expr& a : e.a) each_expr(a, f);
}
void each_expr(Program& p, const std::function<void(Expr&)>& f) {
  each_block(p.body, [&](std::vector<Stmt>& b) { for (Stmt& s : b) for (Expr& e : s.e) each_expr(e, f); });
}

Expr simplest(Ty ty) {
  Expr e;
  e.ty = ty;
  switch (ty) {
    case Ty::D: e.k = Expr::ConstD; e.d = 0.5; break;
    case Ty::I: e.k = Expr::ConstI; e.i0 = 1; break;
    case Ty::V3: e.k = Expr::LoadV; e.a.push_back(Expr::of(Expr::Tid, Ty::I)); break;
    case Ty::M33: e.k = Expr::LoadM; e.a.push_back(Expr::of(Expr::Tid, Ty::I)); break;
    case Ty::B: {
      e.k = Expr::Cmp; e.i0 = 0;
      Expr x; x.k = Expr::LoadA; x.ty = Ty::D; x.a.push_back(Expr::of(Expr::Tid, Ty::I));
      Expr z; z.k = Expr::ConstD; z.ty = Ty::D; z.d = 0;
      e.a = {x, z};
      break;
    }
  }
  return e;
}

bool is_leafish(const Expr& e) {
  return e.a.empty() || ((e.k == Expr::LoadV || e.k == Expr::LoadM || e.k == Expr::LoadA) && e.a[0].k == Expr::Tid);
}

// Statement-level candidates, biggest reductions first.
std::vector<Program> stmt_candidates(const Program& p) {
  std::vector<Program> out;
  int blocks = 0;
  { Program q = p; each_block(q.body, [&](std::vector<Stmt>&) { ++blocks; }); }
  for (int bi = 0; bi < blocks; ++bi) {
    size_t len = 0;
    { Program q = p; int c = 0; each_block(q.body, [&](std::vector<Stmt>& b) { if (c++ == bi) len = b.size(); }); }
    for (size_t si = 0; si < len; ++si) {
      for (int edit = 0; edit < 5; ++edit) {
        Program q = p;
        bool applied = false;
        int c = 0;
        each_block(q.body, [&](std::vector<Stmt>& b) {
          if (c++ != bi || applied) return;
          Stmt s = b[si];
          auto splice = [&](std::vector<Stmt> inner) {
            b.erase(b.begin() + long(si));
            b.insert(b.begin() + long(si), inner.begin(), inner.end());
            applied = true;
          };
          switch (edit) {
            case 0: b.erase(b.begin() + long(si)); applied = true; break;
            case 1: if (s.k == Stmt::If || s.k == Stmt::For || s.k == Stmt::While) splice(s.body); break;
            case 2: if (s.k == Stmt::If && s.has_else) splice(s.els); break;
            case 3: if (s.k == Stmt::If && s.has_else) { b[si].has_else = false; b[si].els.clear(); applied = true; } break;
            case 4:
              if ((s.k == Stmt::For || s.k == Stmt::While) && !(s.e[0].k == Expr::ConstI && s.e[0].i0 <= 1)) {
                b[si].e[0] = simplest(Ty::I);
                applied = true;
              }
              break;
          }
        });
        // each_block iterates a block before its children, so erasing in the callback is safe
        // only because `applied` stops further edits.
        if (applied && valid(q)) out.push_back(std::move(q));
      }
    }
  }
  return out;
}

std::vector<Program> expr_candidates(const Program& p) {
  std::vector<Program> out;
  int nodes = 0;
  { Program q = p; each_expr(q, [&](Expr&) { ++nodes; }); }
  for (int ni = 0; ni < nodes; ++ni) {
    for (int alt = -1; alt < 3; ++alt) {
      Program q = p;
      bool applied = false;
      int c = 0;
      each_expr(q, [&](Expr& e) {
        if (c++ != ni || applied) return;
        if (alt == -1) {
          if (is_leafish(e)) return;
          e = simplest(e.ty);
          applied = true;
        } else if (size_t(alt) < e.a.size() && e.a[size_t(alt)].ty == e.ty && !is_leafish(e)) {
          Expr child = e.a[size_t(alt)];
          e = child;
          applied = true;
        }
      });
      if (applied && valid(q)) out.push_back(std::move(q));
    }
  }
  return out;
}

}  // namespace

Program shrink(const Program& start, const std::string& kind, const CheckOptions& options) {
  static std::atomic<int> module_counter{0};
  CheckOptions o = options;
  o.shrink = false;
  o.dump_source.clear();  // the candidates' texts are not the seed's
  Program best = start;
  int variant = 1;
  const auto start_time = std::chrono::steady_clock::now();
  auto in_time = [&] {
    return o.shrink_seconds <= 0 ||
           std::chrono::steady_clock::now() < start_time + std::chrono::seconds(o.shrink_seconds);
  };
  for (int phase = 0; phase < 2; ++phase) {
    bool progress = true;
    while (progress && in_time()) {
      progress = false;
      std::vector<Program> cands = phase == 0 ? stmt_candidates(best) : expr_candidates(best);
      for (size_t at = 0; at < cands.size() && !progress && in_time(); at += size_t(o.batch)) {
        std::vector<Program> chunk(cands.begin() + long(at), cands.begin() + long(std::min(cands.size(), at + size_t(o.batch))));
        for (Program& c : chunk) c.variant = variant++;
        std::vector<ProgramResult> res = check_batch(chunk, "fuzz_shrink_" + std::to_string(start.seed) + "_" + std::to_string(module_counter++), o);
        for (size_t i = 0; i < res.size(); ++i) {
          if (res[i].outcome == Outcome::Failure && res[i].kind == kind) {
            best = chunk[i];
            progress = true;
            break;
          }
        }
      }
      if (phase == 1 && !progress) break;
    }
    if (phase == 0) continue;
  }
  // Back to the seed's own kernel name in the repro.
  best.variant = 0;
  return best;
}

}  // namespace fuzz
