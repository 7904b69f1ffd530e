// program.hpp — the fuzzer's own small AST of a random kernel: typed expressions and
// structured statements over one fixed kernel signature (see kParamNames).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/ir/builtins.hpp"

namespace fuzz {

/// The value types programs compute with (all floating values are float64).
enum class Ty : uint8_t { D, I, B, V3, M33 };

/// The fixed parameters of every generated kernel, in order.
/// Inputs: a (double), v (vec3d), m (mat33d), idx (int, values in [0, n)), s, k (0..4).
/// Outputs, written once per thread or by atomics: out, outv, acc, accv, accm (min/max).
inline const std::vector<std::string> kParamNames = {"a",   "v",    "m",   "idx",  "s",   "k",
                                                     "out", "outv", "acc", "accv", "accm"};
enum Param : int { P_A, P_V, P_M, P_IDX, P_S, P_K, P_OUT, P_OUTV, P_ACC, P_ACCV, P_ACCM, P_COUNT };
/// Elements of the atomic targets acc, accv and accm.
constexpr int kAccSize = 2;

/// An expression. `a` holds the operands; `i0`/`i1` small integer facts (see Kind).
struct Expr {
  enum Kind : uint8_t {
    ConstD,    ///< d
    ConstI,    ///< i0 (>= 0)
    ParamS,    ///< s
    ParamK,    ///< k
    Tid,       ///< the thread's index
    LoadA,     ///< a[a0 % n]    (a0: Int); i0: 0 own index, 1 other, 2 loaded (for printing only)
    LoadV,     ///< v[a0 % n]
    LoadM,     ///< m[a0 % n]
    LoadIdx,   ///< idx[a0 % n]
    VarRef,    ///< local variable i0 (of type ty)
    LoopVar,   ///< induction value of loop i0
    Add, Sub, Mul,  ///< same-type arithmetic (Mul: D*D, V3*D, M33*D, M33*V3, M33*M33)
    SafeDiv,   ///< a0 / (2 + sin(a1))
    Unary,     ///< unary builtin i0 of kUnary on a domain-mapped a0
    Binary,    ///< binary builtin i0 of kBinary
    Neg,
    Comp,      ///< a0[i0] of a V3, or a0(i0, i1) of a M33
    MakeV3,    ///< Vec3d(a0, a1, a2)
    StructFn,  ///< vector or matrix builtin i0 of kStructFns
    Where,     ///< where(a0, a1, a2)
    Cmp,       ///< a0 < a1 (i0: 0 <, 1 >, 2 <=, 3 >=) for D or I operands
    Not,       ///< !a0
    AddI,      ///< a0 + a1 (Int)
    ModI,      ///< a0 % i0 (Int, i0 >= 1)
    CastD,     ///< Double(a0) of an Int
    CallF,     ///< device function i0 of kFuncs on a
    LocalRead, ///< local array i0, element a0 % kLocalSize
  };
  Kind k = ConstD;
  Ty ty = Ty::D;
  int i0 = 0, i1 = 0;
  double d = 0;
  std::vector<Expr> a;
  /// An expression of kind `k` and type `ty` without operands (add them to `a`).
  static Expr of(Kind k, Ty ty) { Expr e; e.k = k; e.ty = ty; return e; }
};

/// Elements of a local array (zeros<Double, kLocalSize>()).
constexpr int kLocalSize = 4;

/// A statement.
struct Stmt {
  enum Kind : uint8_t {
    Decl,       ///< Var<ty> var i0 = e0
    Assign,     ///< var i0 = e0
    AssignComp, ///< var i0 [comp i1] (+)= e0 : vector lane i1, or matrix element (i1/3, i1%3); d=1: +=
    DeclLocal,  ///< auto la_i0 = zeros<Double, kLocalSize>()
    LocalWrite, ///< la_i0[e1 % kLocalSize] = e0
    If,         ///< If(e0) body else els (has_else)
    For,        ///< For(0, e0) body, induction value = loop i0
    While,      ///< Var<Int> c_i0 = 0; While(c_i0 < e0) { c_i0 = c_i0 + 1; body }
    Break, Continue, Return,
    StoreOut,   ///< out[t] = e0
    StoreOutV,  ///< outv[t] = e0
    AtomicAdd,  ///< atomic_add(acc or accv by e0's type, e1 % kAccSize, e0)
    AtomicMinMax, ///< atomic_min (i1 = 0) / atomic_max (i1 = 1) (accm, e1 % kAccSize, e0)
  };
  Kind k = Decl;
  Ty ty = Ty::D;
  int i0 = 0, i1 = 0;
  double d = 0;
  bool has_else = false;
  std::vector<Expr> e;
  std::vector<Stmt> body, els;
};

/// A generated kernel.
struct Program {
  uint64_t seed = 0;
  std::vector<Stmt> body;
  int n = 4;  ///< threads (and elements of each input array)
  int variant = 0;  ///< tells shrinking candidates of one seed apart (kernel names)
};

// Builtin tables the generator draws from and every layer of the fuzzer agrees on. Each entry
// names its DSL spelling; the walker and printer apply the same domain map (see generator.cpp).
/// A unary builtin and the smooth domain it is fuzzed on: offset + scale * (squash ? tanh(x) : x).
struct UnaryFn {
  kjit::ir::Builtin builtin;
  const char* name;  ///< Warp's name, the DSL spelling
  bool squash;       ///< tanh bounds the argument to (-1, 1) smoothly: finite differences stay meaningful
  double scale, offset;
};
/// Every differentiable builtin of builtins.def that maps one float64 to a float64 (its type
/// rule says so), in table order; a builtin without a domain in program.cpp stops the fuzzer.
extern const std::vector<UnaryFn> kUnary;
/// How a binary builtin's operands x and y are passed (each form is a smooth use of both).
enum class BinaryForm {
  Plain,       ///< f(x, y)
  PowBase,     ///< pow(1.5 + tanh(x), tanh(y)): a positive base, a bounded exponent
  ClampAround, ///< clamp(x, y - 1.0, y + 1.0)
  StepScaled,  ///< smoothstep(-1.0, 1.0, x) * y
  ThirdConst,  ///< f(x, y, 0.3): lerp's t, fma's addend
};
/// A builtin of two float64 operands the generator draws, and its form.
struct BinaryFn {
  kjit::ir::Builtin builtin;
  BinaryForm form;
  const char* name;  ///< Warp's name (builtins.def), the DSL spelling
};
extern const std::vector<BinaryFn> kBinary;
/// A differentiable builtin over vectors and matrices the generator draws: its operand types
/// and result type, by Builtin (the name comes from builtins.def).
struct StructFn {
  kjit::ir::Builtin builtin;
  std::vector<Ty> params;
  Ty result;
  const char* name;
};
extern const std::vector<StructFn> kStructFns;
/// Device functions (device_functions.hpp): name, parameter types, result type, custom grad.
struct FuncInfo {
  const char* name; std::vector<Ty> params; Ty result; bool custom_grad; bool takes_array;
  bool generated = true;  ///< false: only the tester's self-test calls it
};
extern const std::vector<FuncInfo> kFuncs;

/// The DSL handle name of a type ("Double", "Vec3d", ...).
const char* ty_name(Ty t);

}  // namespace fuzz
