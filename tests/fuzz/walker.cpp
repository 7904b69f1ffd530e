// walker.cpp — traces a Program through the DSL: each AST node becomes the DSL call a user
// would write (printer.cpp prints the same calls as source).
#include "walker.hpp"

#include <cmath>
#include <map>
#include <variant>
#include <string>
#include <stdexcept>

#include "device_functions.hpp"
#include "kjit/kernel.hpp"

namespace fuzz {
namespace {
using namespace kjit::dsl;
using kjit::mat33d;
using kjit::vec3d;

using H = std::variant<Double, Int, Bool, Vec3d, Mat33d>;
// DSL values are made with `new` where the walker makes them, never std::make_unique: a value
// records the source line of its construction, which would be <memory>'s (a `#line` into
// unique_ptr.h in every generated module).
using AnyVar = std::variant<std::unique_ptr<Var<Double>>, std::unique_ptr<Var<Int>>,
                            std::unique_ptr<Var<Vec3d>>, std::unique_ptr<Var<Mat33d>>>;

struct Walker {
  const Program& p;
  Array<double> a; Array<vec3d> v; Array<mat33d> m; Array<int32_t> idx; Double s; Int k;
  Array<double> out; Array<vec3d> outv; Array<double> acc; Array<vec3d> accv; Array<double> accm;
  std::map<int, AnyVar> vars;
  std::map<int, std::unique_ptr<LocalArray<double, kLocalSize>>> locals;
  std::map<int, std::unique_ptr<Int>> loop_vars;
  std::unique_ptr<Int> t;

  Double D(const Expr& e) { return std::get<Double>(ev(e)); }
  Int I(const Expr& e) { return std::get<Int>(ev(e)); }
  Bool B(const Expr& e) { return std::get<Bool>(ev(e)); }
  Vec3d V(const Expr& e) { return std::get<Vec3d>(ev(e)); }
  Mat33d M(const Expr& e) { return std::get<Mat33d>(ev(e)); }

  // An array index: the thread's own index stays tid() (the plain-add adjoint path), any
  // other is reduced mod n (all ints are non-negative by construction).
  Int index(const Expr& e) {
    if (e.k == Expr::Tid) return *t;
    return I(e) % p.n;
  }

  Double unary(int f, const Double& x) {
    const UnaryFn& u = kUnary[size_t(f)];
    Double y = u.squash ? tanh(x) : x;
    if (u.scale != 1) y = u.scale * y;
    if (u.offset != 0) y = u.offset + y;
    const Loc loc = Loc::here();
    return kjit::dsl::detail::call<double>(u.builtin, loc, y.use(loc));
  }

  Double binary(int f, const Double& x, const Double& y) {
    const BinaryFn& fn = kBinary[size_t(f)];
    const Loc loc = Loc::here();
    auto call = [&](auto... operands) { return kjit::dsl::detail::call<double>(fn.builtin, loc, operands.use(loc)...); };
    switch (fn.form) {
      case BinaryForm::Plain: return call(x, y);
      case BinaryForm::PowBase: return call(1.5 + tanh(x), tanh(y));
      case BinaryForm::ClampAround: return call(x, y - 1.0, y + 1.0);
      case BinaryForm::StepScaled: return call(Double(-1.0), Double(1.0), x) * y;
      case BinaryForm::ThirdConst: return call(x, y, Double(0.3));
    }
    throw std::logic_error("walker: binary " + std::to_string(f));
  }

  /// A builtin of kStructFns, traced as the call the DSL function of its name makes.
  H struct_fn(const Expr& e) {
    const StructFn& f = kStructFns[size_t(e.i0)];
    const Loc loc = Loc::here();
    auto arg = [&](size_t i) {
      switch (f.params[i]) {
        case Ty::D: return D(e.a[i]).use(loc);
        case Ty::V3: return V(e.a[i]).use(loc);
        case Ty::M33: return M(e.a[i]).use(loc);
        case Ty::I: case Ty::B: break;
      }
      throw std::logic_error(std::string("walker: ") + f.name + " takes a vector, matrix or float64");
    };
    auto call = [&](auto result) -> H {
      using R = decltype(result);
      const kjit::ir::ValueId x = arg(0);  // operands traced in order
      if (f.params.size() == 1) return kjit::dsl::detail::call<R>(f.builtin, loc, x);
      const kjit::ir::ValueId y = arg(1);
      return kjit::dsl::detail::call<R>(f.builtin, loc, x, y);
    };
    switch (f.result) {
      case Ty::D: return call(double());
      case Ty::V3: return call(vec3d());
      case Ty::M33: return call(mat33d());
      case Ty::I: case Ty::B: break;
    }
    throw std::logic_error(std::string("walker: ") + f.name + " gives a vector, matrix or float64");
  }

  bool cmp(int op) const { return op >= 0; }

  template <class T>
  Bool compare(int op, const T& x, const T& y) {
    switch (op) {
      case 0: return x < y;
      case 1: return x > y;
      case 2: return x <= y;
      default: return x >= y;
    }
  }

  H var_value(int id) {
    AnyVar& av = vars.at(id);
    if (auto* d = std::get_if<std::unique_ptr<Var<Double>>>(&av)) return Double(**d);
    if (auto* i = std::get_if<std::unique_ptr<Var<Int>>>(&av)) return Int(**i);
    if (auto* x = std::get_if<std::unique_ptr<Var<Vec3d>>>(&av)) return Vec3d(**x);
    return Mat33d(*std::get<std::unique_ptr<Var<Mat33d>>>(av));
  }

  H ev(const Expr& e) {
    switch (e.k) {
      case Expr::ConstD: return Double(e.d);
      case Expr::ConstI: return Int(e.i0);
      case Expr::ParamS: return Double(s);
      case Expr::ParamK: return Int(k);
      case Expr::Tid: return *t;
      case Expr::LoadA: return Double(a[index(e.a[0])]);
      case Expr::LoadV: return Vec3d(v[index(e.a[0])]);
      case Expr::LoadM: return Mat33d(m[index(e.a[0])]);
      case Expr::LoadIdx: return Int(idx[index(e.a[0])]);
      case Expr::VarRef: return var_value(e.i0);
      case Expr::LoopVar: return *loop_vars.at(e.i0);
      case Expr::Add:
        if (e.ty == Ty::D) return D(e.a[0]) + D(e.a[1]);
        if (e.ty == Ty::V3) return V(e.a[0]) + V(e.a[1]);
        return M(e.a[0]) + M(e.a[1]);
      case Expr::Sub:
        if (e.ty == Ty::D) return D(e.a[0]) - D(e.a[1]);
        if (e.ty == Ty::V3) return V(e.a[0]) - V(e.a[1]);
        return M(e.a[0]) - M(e.a[1]);
      case Expr::Mul: {
        Ty l = e.a[0].ty, r = e.a[1].ty;
        if (l == Ty::D) return D(e.a[0]) * D(e.a[1]);
        if (l == Ty::V3) return V(e.a[0]) * D(e.a[1]);
        if (r == Ty::D) return M(e.a[0]) * D(e.a[1]);
        if (r == Ty::V3) return M(e.a[0]) * V(e.a[1]);
        return M(e.a[0]) * M(e.a[1]);
      }
      case Expr::SafeDiv: return D(e.a[0]) / (2.0 + sin(D(e.a[1])));
      case Expr::Unary: return unary(e.i0, D(e.a[0]));
      case Expr::Binary: return binary(e.i0, D(e.a[0]), D(e.a[1]));
      case Expr::Neg:
        return -D(e.a[0]);
      case Expr::Comp:
        if (e.a[0].ty == Ty::V3) return Double(V(e.a[0])[e.i0]);
        return Double(M(e.a[0])(e.i0, e.i1));
      case Expr::MakeV3: return Vec3d(D(e.a[0]), D(e.a[1]), D(e.a[2]));
      case Expr::StructFn: return struct_fn(e);
      case Expr::Where: return where(B(e.a[0]), D(e.a[1]), D(e.a[2]));
      case Expr::Cmp:
        if (e.a[0].ty == Ty::I) return compare(e.i0, I(e.a[0]), I(e.a[1]));
        return compare(e.i0, D(e.a[0]), D(e.a[1]));
      case Expr::Not: return !B(e.a[0]);
      case Expr::AddI: return I(e.a[0]) + I(e.a[1]);
      case Expr::ModI: return I(e.a[0]) % e.i0;
      case Expr::CastD: return Double(I(e.a[0]));
      case Expr::CallF:
        switch (e.i0) {
          case 0: return fns::fz_mix(D(e.a[0]), D(e.a[1]));
          case 1: return fns::fz_mix_g(D(e.a[0]), D(e.a[1]));
          case 2: return fns::fz_vscale(V(e.a[0]), D(e.a[1]));
          case 3: return fns::fz_soft_g(D(e.a[0]));
          case 4: return fns::fz_gather_g(a, index(e.a[0]), D(e.a[1]));
          case 5: return fns::fz_loop(D(e.a[0]), I(e.a[1]));
          case 6: return fns::fz_wrong_g(D(e.a[0]));
          case 7: return fns::fz_wrong_t(D(e.a[0]));
          default: return fns::fz_early(D(e.a[0]), I(e.a[1]));
        }
      case Expr::LocalRead: return Double((*locals.at(e.i0))[I(e.a[0]) % kLocalSize]);
    }
    throw std::logic_error("walker: expression kind " + std::to_string(int(e.k)));
  }

  void declare(const Stmt& s) {
    switch (s.ty) {
      case Ty::D: vars[s.i0] = std::unique_ptr<Var<Double>>(new Var<Double>(D(s.e[0]))); break;
      case Ty::I: vars[s.i0] = std::unique_ptr<Var<Int>>(new Var<Int>(I(s.e[0]))); break;
      case Ty::V3: vars[s.i0] = std::unique_ptr<Var<Vec3d>>(new Var<Vec3d>(V(s.e[0]))); break;
      case Ty::M33: vars[s.i0] = std::unique_ptr<Var<Mat33d>>(new Var<Mat33d>(M(s.e[0]))); break;
      case Ty::B: throw std::logic_error("walker: Bool var");
    }
  }

  void assign(const Stmt& s) {
    AnyVar& av = vars.at(s.i0);
    switch (s.ty) {
      case Ty::D: *std::get<std::unique_ptr<Var<Double>>>(av) = D(s.e[0]); break;
      case Ty::I: *std::get<std::unique_ptr<Var<Int>>>(av) = I(s.e[0]); break;
      case Ty::V3: *std::get<std::unique_ptr<Var<Vec3d>>>(av) = V(s.e[0]); break;
      case Ty::M33: *std::get<std::unique_ptr<Var<Mat33d>>>(av) = M(s.e[0]); break;
      case Ty::B: throw std::logic_error("walker: Bool var");
    }
  }

  void assign_comp(const Stmt& s) {
    AnyVar& av = vars.at(s.i0);
    Double x = D(s.e[0]);
    if (s.ty == Ty::V3) {
      auto& w = *std::get<std::unique_ptr<Var<Vec3d>>>(av);
      if (s.d != 0) w[s.i1] += x; else w[s.i1] = x;
    } else {
      auto& w = *std::get<std::unique_ptr<Var<Mat33d>>>(av);
      if (s.d != 0) w(s.i1 / 3, s.i1 % 3) += x; else w(s.i1 / 3, s.i1 % 3) = x;
    }
  }

  void block(const std::vector<Stmt>& body) {
    for (const Stmt& s : body) stmt(s);
  }

  void stmt(const Stmt& s) {
    switch (s.k) {
      case Stmt::Decl: declare(s); break;
      case Stmt::Assign: assign(s); break;
      case Stmt::AssignComp: assign_comp(s); break;
      case Stmt::DeclLocal:
        locals[s.i0] = std::unique_ptr<LocalArray<double, kLocalSize>>(new LocalArray<double, kLocalSize>());
        break;
      case Stmt::LocalWrite: {
        Double x = D(s.e[0]);
        (*locals.at(s.i0))[I(s.e[1]) % kLocalSize] = x;
        break;
      }
      case Stmt::If: {
        auto chain = If(B(s.e[0]), [&] { block(s.body); });
        if (s.has_else) chain.Else([&] { block(s.els); });
        break;
      }
      case Stmt::For:
        For(0, I(s.e[0]), [&](Int i) {
          loop_vars[s.i0] = std::unique_ptr<Int>(new Int(i));
          block(s.body);
          loop_vars.erase(s.i0);
        });
        break;
      case Stmt::While: {
        auto c = std::unique_ptr<Var<Int>>(new Var<Int>(0));
        Var<Int>& cr = *c;
        While([&] { return Int(cr) < I(s.e[0]); }, [&] {
          cr = cr + 1;
          block(s.body);
        });
        break;
      }
      case Stmt::Break: Break(); break;
      case Stmt::Continue: Continue(); break;
      case Stmt::Return: Return(); break;
      case Stmt::StoreOut: out[*t] = D(s.e[0]); break;
      case Stmt::StoreOutV: outv[*t] = V(s.e[0]); break;
      case Stmt::AtomicAdd:
        if (s.ty == Ty::D) atomic_add(acc, I(s.e[1]) % kAccSize, D(s.e[0]));
        else atomic_add(accv, I(s.e[1]) % kAccSize, V(s.e[0]));
        break;
      case Stmt::AtomicMinMax:
        if (s.i1 == 0) atomic_min(accm, I(s.e[1]) % kAccSize, D(s.e[0]));
        else atomic_max(accm, I(s.e[1]) % kAccSize, D(s.e[0]));
        break;
    }
  }
};

}  // namespace

std::unique_ptr<KernelReg> register_program(const Program& p, const std::string& name,
                                            const std::string& module) {
  return std::make_unique<KernelReg>(kjit::make_kernel<
      Array<double>, Array<vec3d>, Array<mat33d>, Array<int32_t>, Double, Int, Array<double>,
      Array<vec3d>, Array<double>, Array<vec3d>, Array<double>>(
      name, module, kParamNames,
      [p](Array<double> a, Array<vec3d> v, Array<mat33d> m, Array<int32_t> idx, Double s, Int k,
          Array<double> out, Array<vec3d> outv, Array<double> acc, Array<vec3d> accv,
          Array<double> accm) {
        Walker w{p, a, v, m, idx, s, k, out, outv, acc, accv, accm, {}, {}, {}, nullptr};
        w.t = std::unique_ptr<Int>(new Int(tid()));
        w.block(p.body);
      }));
}

}  // namespace fuzz
