// reference.cpp — the reference evaluator: a tree-walking interpreter of the IR in float64.
#include "reference.hpp"

#include "kjit/ir/ir.hpp"

#include <cmath>
#include <stdexcept>

namespace fuzz {
namespace {
using namespace kjit::ir;

struct RV { double c[9] = {}; };

enum class Flow { Next, Break, Continue, Return };

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("reference: " + what); }

int lanes_of(const Type& t) {
  int l = t.element().lanes();
  return l > 0 ? l : 1;
}

double erfinv_ref(double y) {
  // Newton on erf(x) = y from a rough start; |y| < 1.
  double x = 0;
  for (int i = 0; i < 100; ++i) {
    double f = std::erf(x) - y;
    double step = f / (2.0 / std::sqrt(M_PI) * std::exp(-x * x));
    x -= step;
    if (std::fabs(step) < 1e-17 * (1 + std::fabs(x))) break;
  }
  return x;
}

struct Interp {
  std::vector<RefArg>& args;
  int n;
  int tid = 0;
  uint64_t fp = 1469598103934665603ull;

  void decide(uint64_t bit) { fp = (fp ^ (bit + 0x9e37)) * 1099511628211ull; }

  struct Frame {
    const Function& fn;
    std::vector<RV> vals;
    std::vector<RV> vars;
    std::vector<RV> params;  // for device functions: argument values (array ids in c[0])
  };

  RefArg& array_of(const Frame& f, ValueId v) {
    int id = int(f.vals.at(v).c[0]);
    if (id < 0 || size_t(id) >= args.size() || !args[size_t(id)].is_array) fail("not an array");
    return args[size_t(id)];
  }

  int flat_index(Frame& f, const Stmt& s, size_t first, size_t count, RefArg& arr) {
    if (count != 1) fail("only 1-D arrays are modelled");
    double i = f.vals.at(s.args[first]).c[0];
    if (i < 0 || i >= arr.count) fail("index " + std::to_string(i) + " out of range " + std::to_string(arr.count));
    return int(i);
  }

  RV call(const Frame& f, const Stmt& s) {
    const Type& rt = s.type;
    auto A = [&](int k) -> const RV& { return f.vals.at(s.args.at(size_t(k))); };
    auto T = [&](int k) -> Type { return f.fn.type_of(s.args.at(size_t(k))); };
    int L = lanes_of(rt);
    RV r;
    auto each = [&](auto op) { for (int i = 0; i < L; ++i) r.c[i] = op(i); return r; };
    auto un = [&](double (*g)(double)) { return each([&](int i) { return g(A(0).c[i]); }); };
    auto boolean = [&](bool b) { decide(b); r.c[0] = b; return r; };
    bool isint = !rt.is_float() && rt.shape != Shape::Void;
    switch (s.builtin()) {
      case Builtin::Add: return each([&](int i) { return A(0).c[i] + A(1).c[i]; });
      case Builtin::Sub: return each([&](int i) { return A(0).c[i] - A(1).c[i]; });
      case Builtin::Neg: return each([&](int i) { return -A(0).c[i]; });
      case Builtin::Pos: return A(0);
      case Builtin::Mul: {
        const Type &a = T(0), &b = T(1);
        if (a.is_scalar() && b.is_scalar()) { r.c[0] = A(0).c[0] * A(1).c[0]; return r; }
        if (b.is_scalar()) return each([&](int i) { return A(0).c[i] * A(1).c[0]; });
        if (a.is_scalar()) return each([&](int i) { return A(0).c[0] * A(1).c[i]; });
        if (a.is_matrix() && b.is_vector()) {
          for (int i = 0; i < a.rows; ++i) { double acc = 0; for (int j = 0; j < a.cols; ++j) acc += A(0).c[i * a.cols + j] * A(1).c[j]; r.c[i] = acc; }
          return r;
        }
        if (a.is_vector() && b.is_matrix()) {
          for (int j = 0; j < b.cols; ++j) { double acc = 0; for (int i = 0; i < b.rows; ++i) acc += A(0).c[i] * A(1).c[i * b.cols + j]; r.c[j] = acc; }
          return r;
        }
        if (a.is_matrix() && b.is_matrix()) {
          for (int i = 0; i < a.rows; ++i)
            for (int j = 0; j < b.cols; ++j) {
              double acc = 0;
              for (int q = 0; q < a.cols; ++q) acc += A(0).c[i * a.cols + q] * A(1).c[q * b.cols + j];
              r.c[i * b.cols + j] = acc;
            }
          return r;
        }
        fail("mul of " + a.str() + " and " + b.str());
      }
      case Builtin::Div:
        if (isint) {
          if (A(1).c[0] == 0) fail("integer division by zero");
          r.c[0] = std::trunc(A(0).c[0] / A(1).c[0]);
          return r;
        }
        return each([&](int i) { return A(0).c[i] / (T(1).is_scalar() ? A(1).c[0] : A(1).c[i]); });
      case Builtin::Mod:
        if (A(1).c[0] == 0) fail("modulo by zero");
        r.c[0] = std::fmod(A(0).c[0], A(1).c[0]);
        return r;
      case Builtin::Lt: return boolean(A(0).c[0] < A(1).c[0]);
      case Builtin::Le: return boolean(A(0).c[0] <= A(1).c[0]);
      case Builtin::Gt: return boolean(A(0).c[0] > A(1).c[0]);
      case Builtin::Ge: return boolean(A(0).c[0] >= A(1).c[0]);
      case Builtin::Eq: return boolean(A(0).c[0] == A(1).c[0]);
      case Builtin::Ne: return boolean(A(0).c[0] != A(1).c[0]);
      case Builtin::Unot: r.c[0] = A(0).c[0] == 0; return r;
      case Builtin::LogicalAnd: r.c[0] = A(0).c[0] != 0 && A(1).c[0] != 0; return r;
      case Builtin::LogicalOr: r.c[0] = A(0).c[0] != 0 || A(1).c[0] != 0; return r;
      case Builtin::Sin: return un(std::sin);
      case Builtin::Cos: return un(std::cos);
      case Builtin::Tan: return un(std::tan);
      case Builtin::Exp: return un(std::exp);
      case Builtin::Log: return un(std::log);
      case Builtin::Sqrt: return un(std::sqrt);
      case Builtin::Tanh: return un(std::tanh);
      case Builtin::Atan: return un(std::atan);
      case Builtin::Sinh: return un(std::sinh);
      case Builtin::Cosh: return un(std::cosh);
      case Builtin::Erf: return un(std::erf);
      case Builtin::Erfc: return un(std::erfc);
      case Builtin::Cbrt: return un(std::cbrt);
      case Builtin::Log2: return un(std::log2);
      case Builtin::Log10: return un(std::log10);
      case Builtin::Asin: return un(std::asin);
      case Builtin::Acos: return un(std::acos);
      case Builtin::Erfinv: r.c[0] = erfinv_ref(A(0).c[0]); return r;
      case Builtin::Erfcinv: r.c[0] = erfinv_ref(1.0 - A(0).c[0]); return r;
      case Builtin::Degrees: r.c[0] = A(0).c[0] * (180.0 / M_PI); return r;
      case Builtin::Frac: r.c[0] = A(0).c[0] - std::trunc(A(0).c[0]); return r;
      case Builtin::Radians: r.c[0] = A(0).c[0] * (M_PI / 180.0); return r;
      case Builtin::Abs: return each([&](int i) { decide(A(0).c[i] < 0); return std::fabs(A(0).c[i]); });
      case Builtin::Atan2: r.c[0] = std::atan2(A(0).c[0], A(1).c[0]); return r;
      case Builtin::Pow: r.c[0] = std::pow(A(0).c[0], A(1).c[0]); return r;
      case Builtin::Min:
        if (s.args.size() == 1) fail("min of one vector");
        return each([&](int i) { bool second = A(1).c[i] < A(0).c[i]; decide(second); return second ? A(1).c[i] : A(0).c[i]; });
      case Builtin::Max:
        if (s.args.size() == 1) fail("max of one vector");
        return each([&](int i) { bool second = A(1).c[i] > A(0).c[i]; decide(second); return second ? A(1).c[i] : A(0).c[i]; });
      case Builtin::Clamp: {
        double x = A(0).c[0], lo = A(1).c[0], hi = A(2).c[0];
        int which = x < lo ? 1 : (x > hi ? 2 : 0);
        decide(uint64_t(which) + 7);
        r.c[0] = which == 1 ? lo : which == 2 ? hi : x;
        return r;
      }
      case Builtin::Where: {
        bool c = A(0).c[0] != 0;
        decide(c);
        return c ? A(1) : A(2);
      }
      case Builtin::Lerp: return each([&](int i) { return A(0).c[i] + (A(1).c[i] - A(0).c[i]) * A(2).c[0]; });
      case Builtin::Fma: return each([&](int i) { return std::fma(A(0).c[i], A(1).c[0], A(2).c[i]); });
      case Builtin::Smoothstep: {
        double a = A(0).c[0], b = A(1).c[0], x = A(2).c[0];
        double t = (x - a) / (b - a);
        decide(t < 0 ? 11 : t > 1 ? 12 : 13);
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        r.c[0] = t * t * (3 - 2 * t);
        return r;
      }
      case Builtin::Dot: {
        double acc = 0;
        for (int i = 0; i < T(0).rows; ++i) acc += A(0).c[i] * A(1).c[i];
        r.c[0] = acc;
        return r;
      }
      case Builtin::Cross: {
        const double* a = A(0).c; const double* b = A(1).c;
        r.c[0] = a[1] * b[2] - a[2] * b[1];
        r.c[1] = a[2] * b[0] - a[0] * b[2];
        r.c[2] = a[0] * b[1] - a[1] * b[0];
        return r;
      }
      case Builtin::LengthSq: case Builtin::Length: case Builtin::Normalize: {
        double acc = 0;
        int m = T(0).rows;
        for (int i = 0; i < m; ++i) acc += A(0).c[i] * A(0).c[i];
        if (s.builtin() == Builtin::LengthSq) { r.c[0] = acc; return r; }
        double len = std::sqrt(acc);
        if (s.builtin() == Builtin::Length) { r.c[0] = len; return r; }
        decide(len > 0);
        for (int i = 0; i < m; ++i) r.c[i] = len > 0 ? A(0).c[i] / len : 0.0;
        return r;
      }
      case Builtin::CwMul: return each([&](int i) { return A(0).c[i] * A(1).c[i]; });
      case Builtin::Outer:
        for (int i = 0; i < rt.rows; ++i)
          for (int j = 0; j < rt.cols; ++j) r.c[i * rt.cols + j] = A(0).c[i] * A(1).c[j];
        return r;
      case Builtin::Transpose:
        for (int i = 0; i < rt.rows; ++i)
          for (int j = 0; j < rt.cols; ++j) r.c[i * rt.cols + j] = A(0).c[j * rt.rows + i];
        return r;
      case Builtin::Trace: {
        int m = T(0).rows;
        double acc = 0;
        for (int i = 0; i < m; ++i) acc += A(0).c[i * m + i];
        r.c[0] = acc;
        return r;
      }
      case Builtin::GetDiag: {
        int m = T(0).rows;
        for (int i = 0; i < m; ++i) r.c[i] = A(0).c[i * m + i];
        return r;
      }
      case Builtin::Determinant: {
        if (T(0).rows != 3) fail("determinant of a non-3x3 matrix");
        const double* a = A(0).c;
        r.c[0] = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
                 a[2] * (a[3] * a[7] - a[4] * a[6]);
        return r;
      }
      case Builtin::Skew: {
        const double* v = A(0).c;
        double m[9] = {0, -v[2], v[1], v[2], 0, -v[0], -v[1], v[0], 0};
        for (int i = 0; i < 9; ++i) r.c[i] = m[i];
        return r;
      }
      case Builtin::Ddot: {
        double acc = 0;
        for (int i = 0; i < lanes_of(T(0)); ++i) acc += A(0).c[i] * A(1).c[i];
        r.c[0] = acc;
        return r;
      }
      default:
        fail(std::string("builtin ") + builtin_info(s.builtin()).name + " is not modelled");
    }
  }

  double to_type(double x, const Type& t) {
    if (t.is_float()) return x;
    if (t.is_bool()) return x != 0;
    return std::trunc(x);  // int32 values here are small: truncation toward zero, as C++ casts
  }

  Flow block(Frame& f, const Block& b) {
    for (const Stmt& s : b.stmts) {
      Flow fl = stmt(f, s);
      if (fl != Flow::Next) return fl;
    }
    return Flow::Next;
  }

  Flow stmt(Frame& f, const Stmt& s) {
    auto A = [&](size_t k) -> RV& { return f.vals.at(s.args.at(k)); };
    auto set = [&](const RV& v) { if (s.result != kNoValue) f.vals.at(s.result) = v; };
    RV r;
    switch (s.op) {
      case Op::Const:
        r.c[0] = s.type.is_float() ? s.const_float() : double(s.const_int());
        set(r);
        return Flow::Next;
      case Op::Param:
        if (f.fn.is_function) set(f.params.at(size_t(s.imm)));
        else if (args.at(size_t(s.imm)).is_array) { r.c[0] = double(s.imm); set(r); }
        else {
          for (int i = 0; i < lanes_of(s.type); ++i) r.c[i] = args[size_t(s.imm)].data.at(size_t(i));
          set(r);
        }
        return Flow::Next;
      case Op::ThreadId: r.c[0] = tid; set(r); return Flow::Next;
      case Op::LaunchDim: r.c[0] = n; set(r); return Flow::Next;
      case Op::Call: set(call(f, s)); return Flow::Next;
      case Op::Cast: r.c[0] = to_type(A(0).c[0], s.type); set(r); return Flow::Next;
      case Op::Construct: {
        int L = lanes_of(s.type);
        if (s.type.is_array()) fail("arrays from addresses are not modelled");
        if (s.args.empty()) { set(r); return Flow::Next; }
        if (int(s.args.size()) == L) {
          for (int i = 0; i < L; ++i) r.c[i] = A(size_t(i)).c[0];
        } else if (s.args.size() == 1) {
          for (int i = 0; i < L; ++i) r.c[i] = A(0).c[0];
        } else if (s.type.is_matrix() && int(s.args.size()) == s.type.rows) {
          for (int i = 0; i < s.type.rows; ++i)
            for (int j = 0; j < s.type.cols; ++j) r.c[i * s.type.cols + j] = A(size_t(i)).c[j];
        } else {
          fail("construct of " + s.type.str() + " from " + std::to_string(s.args.size()) + " values");
        }
        set(r);
        return Flow::Next;
      }
      case Op::Extract: case Op::Insert: {
        const Type& agg = f.fn.type_of(s.args[0]);
        size_t first = s.op == Op::Extract ? 1 : 2;
        size_t nidx = s.args.size() - first;
        if (agg.is_struct()) fail("struct fields are not modelled");
        int off = 0, len = 1;
        int i0 = int(A(first).c[0]);
        if (agg.is_matrix() && nidx == 1) { off = i0 * agg.cols; len = agg.cols; }
        else if (agg.is_matrix()) off = i0 * agg.cols + int(A(first + 1).c[0]);
        else off = i0;
        if (off < 0 || off + len > lanes_of(agg)) fail("component out of range");
        if (s.op == Op::Extract) {
          for (int i = 0; i < len; ++i) r.c[i] = A(0).c[off + i];
        } else {
          r = A(0);
          for (int i = 0; i < len; ++i) r.c[off + i] = A(1).c[i];
        }
        set(r);
        return Flow::Next;
      }
      case Op::DeclVar: f.vars.at(size_t(s.imm)) = RV{}; return Flow::Next;
      case Op::LoadVar: set(f.vars.at(size_t(s.imm))); return Flow::Next;
      case Op::StoreVar: f.vars.at(size_t(s.imm)) = A(0); return Flow::Next;
      case Op::ArrayLoad: {
        RefArg& arr = array_of(f, s.args[0]);
        int i = flat_index(f, s, 1, s.args.size() - 1, arr);
        int L = lanes_of(s.type);
        for (int q = 0; q < L; ++q) r.c[q] = arr.data.at(size_t(i * L + q));
        set(r);
        return Flow::Next;
      }
      case Op::ArrayStore: {
        RefArg& arr = array_of(f, s.args[0]);
        int i = flat_index(f, s, 1, s.args.size() - 2, arr);
        const RV& v = A(s.args.size() - 1);
        int L = lanes_of(f.fn.type_of(s.args.back()));
        for (int q = 0; q < L; ++q) arr.data.at(size_t(i * L + q)) = v.c[q];
        return Flow::Next;
      }
      case Op::ArrayAtomic: {
        RefArg& arr = array_of(f, s.args[0]);
        if (s.atomic_op() == AtomicOp::Cas) fail("atomic_cas is not modelled");
        int i = flat_index(f, s, 1, s.args.size() - 2, arr);
        const RV& v = A(s.args.size() - 1);
        int L = lanes_of(s.type);
        for (int q = 0; q < L; ++q) {
          double& el = arr.data.at(size_t(i * L + q));
          r.c[q] = el;
          switch (s.atomic_op()) {
            case AtomicOp::Add: el += v.c[q]; break;
            case AtomicOp::Sub: el -= v.c[q]; break;
            // Per component, as the forward pass works.
            case AtomicOp::Min: decide(v.c[q] < el ? 21 : 22); if (v.c[q] < el) el = v.c[q]; break;
            case AtomicOp::Max: decide(v.c[q] > el ? 23 : 24); if (v.c[q] > el) el = v.c[q]; break;
            case AtomicOp::Exch: el = v.c[q]; break;
            case AtomicOp::And: case AtomicOp::Or: case AtomicOp::Xor: case AtomicOp::Cas:
              fail("bitwise atomics are not modelled");
          }
        }
        set(r);
        return Flow::Next;
      }
      case Op::ArrayShape: r.c[0] = array_of(f, s.args[0]).count; set(r); return Flow::Next;
      case Op::If: {
        bool c = A(0).c[0] != 0;
        decide(c ? 31 : 32);
        return block(f, s.regions.at(c ? 0 : 1));
      }
      case Op::For: {
        double begin = A(0).c[0], end = A(1).c[0], step = A(2).c[0];
        const Block& body = s.regions.at(0);
        for (double i = begin; step > 0 ? i < end : (step < 0 ? i > end : false); i += step) {
          if (!body.args.empty()) f.vals.at(body.args[0]).c[0] = i;
          Flow fl = block(f, body);
          if (fl == Flow::Break) break;
          if (fl == Flow::Return) return fl;
        }
        return Flow::Next;
      }
      case Op::While: {
        for (long iter = 0;; ++iter) {
          if (iter > 1000000) fail("While ran a million iterations");
          Flow cf = block(f, s.regions.at(0));
          if (cf != Flow::Next) fail("a jump in a While condition");
          bool c = f.vals.at(s.regions[0].yield).c[0] != 0;
          decide(c ? 41 : 42);
          if (!c) break;
          Flow fl = block(f, s.regions.at(1));
          if (fl == Flow::Break) break;
          if (fl == Flow::Return) return fl;
        }
        return Flow::Next;
      }
      case Op::Break: return Flow::Break;
      case Op::Continue: return Flow::Continue;
      case Op::Return: return Flow::Return;
      case Op::Print: return Flow::Next;
      case Op::CallFunc: {
        const Function& callee = *f.fn.callees.at(size_t(s.imm));
        Frame g{callee, std::vector<RV>(callee.values.size()), std::vector<RV>(callee.vars.size()), {}};
        for (ValueId a : s.args) g.params.push_back(f.vals.at(a));
        Flow fl = block(g, callee.body);
        if (fl != Flow::Next) fail("a jump out of a device function");
        if (callee.body.yield != kNoValue) set(g.vals.at(callee.body.yield));
        return Flow::Next;
      }
      case Op::GradFunc:  // the fuzzer generates no gradients (tests/builtins/func_grad.cpp checks them)
        fail("the reference interprets no grad(f)");
      case Op::TangentCall:  // tangent kernels are checked against finite differences of this
        fail("the reference interprets traced kernels, not tangent kernels");
      case Op::AccumVar: case Op::CallAdjoint: case Op::StrongZero: case Op::AdjArrayAdd: case Op::AdjArrayRead: case Op::AccumParam: case Op::Checkpoint: case Op::ReverseSegments: case Op::GradView:
        fail("the reference interprets traced kernels, not adjoint kernels");
    }
    fail("unknown op");
  }
};

}  // namespace

RefResult run_reference(const Function& fn, int n, std::vector<RefArg>& args) {
  Interp in{args, n};
  for (int t = 0; t < n; ++t) {
    in.tid = t;
    Interp::Frame f{fn, std::vector<RV>(fn.values.size()), std::vector<RV>(fn.vars.size()), {}};
    in.block(f, fn.body);
  }
  return RefResult{in.fp};
}

}  // namespace fuzz
