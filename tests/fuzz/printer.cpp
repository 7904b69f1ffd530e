// printer.cpp — prints a Program as the DSL source the walker traces (walker.cpp), call for call.
#include "printer.hpp"

#include <cstdio>
#include <set>
#include <sstream>

namespace fuzz {
namespace {

std::string num(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string var_name(int id) { return "x" + std::to_string(id); }

struct Printer {
  const Program& p;
  std::ostringstream o;
  std::set<int> funcs;

  std::string index(const Expr& e) {
    if (e.k == Expr::Tid) return "t";
    return "(" + ex(e) + ") % " + std::to_string(p.n);
  }

  std::string domain(int f, const std::string& x) {
    const UnaryFn& u = kUnary[size_t(f)];
    std::string y = u.squash ? "tanh(" + x + ")" : x;
    if (u.scale != 1) y = num(u.scale) + " * " + y;
    if (u.offset != 0) y = num(u.offset) + " + " + y;
    return y;
  }

  std::string ex(const Expr& e) {
    auto A = [&](int i) { return ex(e.a[size_t(i)]); };
    switch (e.k) {
      case Expr::ConstD: return "Double(" + num(e.d) + ")";
      case Expr::ConstI: return "Int(" + std::to_string(e.i0) + ")";
      case Expr::ParamS: return "s";
      case Expr::ParamK: return "k";
      case Expr::Tid: return "t";
      case Expr::LoadA: return "a[" + index(e.a[0]) + "]";
      case Expr::LoadV: return "Vec3d(v[" + index(e.a[0]) + "])";
      case Expr::LoadM: return "Mat33d(m[" + index(e.a[0]) + "])";
      case Expr::LoadIdx: return "idx[" + index(e.a[0]) + "]";
      case Expr::VarRef: return (e.ty == Ty::D ? "Double(" : e.ty == Ty::I ? "Int(" : e.ty == Ty::V3 ? "Vec3d(" : "Mat33d(") + var_name(e.i0) + ")";
      case Expr::LoopVar: return "i" + std::to_string(e.i0);
      case Expr::Add: return "(" + A(0) + " + " + A(1) + ")";
      case Expr::Sub: return "(" + A(0) + " - " + A(1) + ")";
      case Expr::Mul: return "(" + A(0) + " * " + A(1) + ")";
      case Expr::SafeDiv: return "(" + A(0) + " / (2.0 + sin(" + A(1) + ")))";
      case Expr::Unary: return std::string(kUnary[size_t(e.i0)].name) + "(" + domain(e.i0, A(0)) + ")";
      case Expr::Binary: {
        const BinaryFn& fn = kBinary[size_t(e.i0)];
        const std::string f = fn.name, x = A(0), y = A(1);
        switch (fn.form) {
          case BinaryForm::Plain: return f + "(" + x + ", " + y + ")";
          case BinaryForm::PowBase: return f + "(1.5 + tanh(" + x + "), tanh(" + y + "))";
          case BinaryForm::ClampAround: return f + "(" + x + ", " + y + " - 1.0, " + y + " + 1.0)";
          case BinaryForm::StepScaled: return "(" + f + "(Double(-1.0), Double(1.0), " + x + ") * " + y + ")";
          case BinaryForm::ThirdConst: return f + "(" + x + ", " + y + ", Double(0.3))";
        }
        return "?";
      }
      case Expr::Neg: return "(-" + A(0) + ")";
      case Expr::Comp:
        if (e.a[0].ty == Ty::V3) return "Double(" + A(0) + "[" + std::to_string(e.i0) + "])";
        return "Double(" + A(0) + "(" + std::to_string(e.i0) + ", " + std::to_string(e.i1) + "))";
      case Expr::MakeV3: return "Vec3d(" + A(0) + ", " + A(1) + ", " + A(2) + ")";
      case Expr::StructFn: {
        const StructFn& f = kStructFns[size_t(e.i0)];
        std::string out = std::string(f.name) + "(";
        for (size_t i = 0; i < f.params.size(); ++i) out += (i ? ", " : "") + A(int(i));
        return out + ")";
      }
      case Expr::Where: return "where(" + A(0) + ", " + A(1) + ", " + A(2) + ")";
      case Expr::Cmp: {
        static const char* ops[] = {"<", ">", "<=", ">="};
        return "(" + A(0) + " " + ops[e.i0] + " " + A(1) + ")";
      }
      case Expr::Not: return "(!" + A(0) + ")";
      case Expr::AddI: return "(" + A(0) + " + " + A(1) + ")";
      case Expr::ModI: return "(" + A(0) + " % " + std::to_string(e.i0) + ")";
      case Expr::CastD: return "Double(" + A(0) + ")";
      case Expr::CallF: {
        funcs.insert(e.i0);
        std::string r = std::string(kFuncs[size_t(e.i0)].name) + "(";
        if (kFuncs[size_t(e.i0)].takes_array) r += "a, " + index(e.a[0]) + ", " + A(1);
        else for (size_t i = 0; i < e.a.size(); ++i) r += (i ? ", " : "") + ex(e.a[i]);
        return r + ")";
      }
      case Expr::LocalRead: return "Double(la" + std::to_string(e.i0) + "[" + A(0) + " % " + std::to_string(kLocalSize) + "])";
    }
    return "?";
  }

  void line(int depth, const std::string& s) { o << std::string(size_t(2 * depth + 2), ' ') << s << "\n"; }

  void block(const std::vector<Stmt>& b, int depth) { for (const Stmt& s : b) st(s, depth); }

  void st(const Stmt& s, int d) {
    auto E = [&](int i) { return ex(s.e[size_t(i)]); };
    switch (s.k) {
      case Stmt::Decl: line(d, std::string("Var<") + ty_name(s.ty) + "> " + var_name(s.i0) + " = " + E(0) + ";"); break;
      case Stmt::Assign: line(d, var_name(s.i0) + " = " + E(0) + ";"); break;
      case Stmt::AssignComp: {
        std::string c = s.ty == Ty::V3 ? "[" + std::to_string(s.i1) + "]"
                                       : "(" + std::to_string(s.i1 / 3) + ", " + std::to_string(s.i1 % 3) + ")";
        line(d, var_name(s.i0) + c + (s.d != 0 ? " += " : " = ") + E(0) + ";");
        break;
      }
      case Stmt::DeclLocal: line(d, "auto la" + std::to_string(s.i0) + " = zeros<Double, " + std::to_string(kLocalSize) + ">();"); break;
      case Stmt::LocalWrite: line(d, "la" + std::to_string(s.i0) + "[" + E(1) + " % " + std::to_string(kLocalSize) + "] = " + E(0) + ";"); break;
      case Stmt::If:
        line(d, "If(" + E(0) + ", [&] {");
        block(s.body, d + 1);
        if (s.has_else) { line(d, "}).Else([&] {"); block(s.els, d + 1); }
        line(d, "});");
        break;
      case Stmt::For:
        line(d, "For(0, " + E(0) + ", [&](Int i" + std::to_string(s.i0) + ") {");
        block(s.body, d + 1);
        line(d, "});");
        break;
      case Stmt::While: {
        std::string c = "c" + std::to_string(s.i0);
        line(d, "Var<Int> " + c + " = 0;");
        line(d, "While([&] { return Int(" + c + ") < " + E(0) + "; }, [&] {");
        line(d + 1, c + " = " + c + " + 1;");
        block(s.body, d + 1);
        line(d, "});");
        break;
      }
      case Stmt::Break: line(d, "Break();"); break;
      case Stmt::Continue: line(d, "Continue();"); break;
      case Stmt::Return: line(d, "Return();"); break;
      case Stmt::StoreOut: line(d, "out[t] = " + E(0) + ";"); break;
      case Stmt::StoreOutV: line(d, "outv[t] = " + E(0) + ";"); break;
      case Stmt::AtomicAdd:
        line(d, std::string("atomic_add(") + (s.ty == Ty::D ? "acc" : "accv") + ", " + E(1) + " % " + std::to_string(kAccSize) + ", " + E(0) + ");");
        break;
      case Stmt::AtomicMinMax:
        line(d, std::string(s.i1 == 0 ? "atomic_min" : "atomic_max") + "(accm, " + E(1) + " % " + std::to_string(kAccSize) + ", " + E(0) + ");");
        break;
    }
  }
};

const char* func_source(int f) {
  switch (f) {
    case 0: return "inline const auto fz_mix = func(\"fz_mix\", [](auto x, auto y) { return x * sin(y) + y; });\n";
    case 1:
      return "inline const auto fz_mix_g = func(\"fz_mix_g\", [](auto x, auto y) { return x * sin(y) + y; })\n"
             "    .grad([](auto x, auto y, auto adj_ret, auto& adj_x, auto& adj_y) {\n"
             "      adj_x += adj_ret * sin(y);\n"
             "      adj_y += adj_ret * (x * cos(y) + 1.0);\n"
             "    });\n";
    case 2: return "inline const auto fz_vscale = func(\"fz_vscale\", [](auto u, auto t) { return u * tanh(t) + u; });\n";
    case 3:
      return "inline const auto fz_soft_g = func(\"fz_soft_g\", [](auto x) { return sqrt(x * x + 1.0); })\n"
             "    .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * x / sqrt(x * x + 1.0); })\n"
             "    .jvp([](auto x, auto dx) { return dx * x / sqrt(x * x + 1.0); });\n";
    case 4:
      return "inline const auto fz_gather_g = func(\"fz_gather_g\", [](auto a, auto i, auto x) { return a[i] * x; })\n"
             "    .grad([](auto a, auto i, auto x, auto adj_ret, auto& adj_a, auto&, auto& adj_x) {\n"
             "      atomic_add(adj_a, i, adj_ret * x);\n"
             "      adj_x += adj_ret * a[i];\n"
             "    });\n";
    case 6:
      return "inline const auto fz_wrong_g = func(\"fz_wrong_g\", [](auto x) { return x * x; })\n"
             "    .grad([](auto x, auto adj_ret, auto& adj_x) { adj_x += adj_ret * x; });\n";
    case 7:
      return "inline const auto fz_wrong_t = func(\"fz_wrong_t\", [](auto x) { return x * x; })\n"
             "    .jvp([](auto x, auto dx) { return dx * x; });\n";
    case 8:
      return "inline const auto fz_early = func(\"fz_early\", [](auto x, auto n) {\n"
             "  Var<Double> y = x;\n"
             "  For(0, n % 4, [&](Int j) {\n"
             "    y = y * 0.9 + sin(y) * 0.1;\n"
             "    If(y > 0.8, [&] { Return(y * 2.0 - Double(j)); });\n"
             "  });\n"
             "  If(y < -1.5, [&] { Return(y * 0.1 - 1.35); });\n"
             "  return Double(y);\n"
             "});\n";
    default:
      return "inline const auto fz_loop = func(\"fz_loop\", [](auto x, auto n) {\n"
             "  Var<Double> y = x;\n"
             "  For(0, n % 4, [&](Int) { y = y * 0.9 + sin(y) * 0.1; });\n"
             "  return Double(y);\n"
             "});\n";
  }
}

int count(const std::vector<Stmt>& b) {
  int n = 0;
  for (const Stmt& s : b) n += 1 + count(s.body) + count(s.els);
  return n;
}

}  // namespace

std::string to_dsl_source(const Program& p, const std::string& name) {
  Printer pr{p, {}, {}};
  pr.line(0, "Int t = tid();");
  pr.block(p.body, 0);
  std::ostringstream o;
  o << "// Generated by kjit_autodiff_fuzz, seed " << p.seed << "; launch over n = " << p.n
    << " threads (see tests/fuzz/FINDINGS.md for the inputs).\n"
    << "#include <kjit/kjit.hpp>\nnamespace repro {\nusing namespace kjit::dsl;\n";
  for (int f : pr.funcs) o << func_source(f);
  o << "KJIT_KERNEL(" << name
    << ", (Array<Double> a, Array<Vec3d> v, Array<Mat33d> m, Array<Int> idx, Double s, Int k,\n"
       "    Array<Double> out, Array<Vec3d> outv, Array<Double> acc, Array<Vec3d> accv, Array<Double> accm)) {\n"
    << pr.o.str() << "}\n}  // namespace repro\n";
  return o.str();
}

int program_size(const Program& p) { return count(p.body); }

}  // namespace fuzz
