// program.cpp — the builtin and device-function tables the generator, walker and printer share.
#include "program.hpp"

#include <map>
#include <optional>
#include <stdexcept>

namespace fuzz {

namespace {
struct Domain {
  bool squash;
  double scale, offset;
};
// The smooth domain of each unary builtin, by name. tanh bounds the argument where the function
// has poles, overflows or leaves its domain outside (-1, 1).
const std::map<std::string, Domain> kUnaryDomains = {
    {"sin", {false, 1, 0}},    {"cos", {false, 1, 0}},      {"tan", {true, 1, 0}},
    {"exp", {true, 1, 0}},     {"log", {true, 1, 1.5}},     {"sqrt", {true, 1, 1.5}},
    {"tanh", {false, 1, 0}},   {"atan", {false, 1, 0}},     {"sinh", {true, 1, 0}},
    {"cosh", {true, 1, 0}},    {"erf", {false, 1, 0}},      {"erfc", {false, 1, 0}},
    {"cbrt", {true, 1, 1.5}},  {"log2", {true, 1, 1.5}},    {"log10", {true, 1, 1.5}},
    {"asin", {true, 0.9, 0}},  {"acos", {true, 0.9, 0}},    {"erfinv", {true, 0.9, 0}},
    {"erfcinv", {true, 0.9, 1.0}}, {"degrees", {true, 0.02, 0}}, {"radians", {false, 1, 0}},
    {"abs", {false, 1, 0}},
    {"frac", {true, 0.2, 0.3}},  // (0.1, 0.5): away from the jumps at the integers
};

std::vector<UnaryFn> unary_builtins() {
  using namespace kjit::ir;
  std::vector<UnaryFn> out;
  const Type f64 = Type::scalar_of(Scalar::F64);
  for (int i = 0; i < kBuiltinCount; ++i) {
    const Builtin b = Builtin(i);
    const BuiltinInfo& info = builtin_info(b);
    std::string error;
    if (!info.differentiable || info.category == BuiltinCategory::Operators) continue;
    const std::optional<Type> result = infer_builtin_type(b, &f64, 1, &error);
    if (!result || *result != f64) continue;
    auto d = kUnaryDomains.find(info.name);
    if (d == kUnaryDomains.end())
      throw std::logic_error(std::string("tests/fuzz/program.cpp: the unary builtin ") + info.name +
                             " has no fuzz domain in kUnaryDomains");
    out.push_back({b, info.name, d->second.squash, d->second.scale, d->second.offset});
  }
  if (out.size() != kUnaryDomains.size())
    throw std::logic_error("tests/fuzz/program.cpp: kUnaryDomains names a builtin that is not unary");
  return out;
}
}  // namespace

const std::vector<UnaryFn> kUnary = unary_builtins();
namespace {
BinaryFn binary(kjit::ir::Builtin b, BinaryForm form) { return {b, form, kjit::ir::builtin_info(b).name}; }
}  // namespace
const std::vector<BinaryFn> kBinary = {
    binary(kjit::ir::Builtin::Atan2, BinaryForm::Plain),
    binary(kjit::ir::Builtin::Pow, BinaryForm::PowBase),
    binary(kjit::ir::Builtin::Min, BinaryForm::Plain),
    binary(kjit::ir::Builtin::Max, BinaryForm::Plain),
    binary(kjit::ir::Builtin::Clamp, BinaryForm::ClampAround),
    binary(kjit::ir::Builtin::Smoothstep, BinaryForm::StepScaled),
    binary(kjit::ir::Builtin::Lerp, BinaryForm::ThirdConst),
    binary(kjit::ir::Builtin::Fma, BinaryForm::ThirdConst),
};
namespace {
StructFn struct_fn(kjit::ir::Builtin b, std::vector<Ty> params, Ty result) {
  return {b, std::move(params), result, kjit::ir::builtin_info(b).name};
}
}  // namespace
// Smooth on any operands the generator makes (no division by a component, no inverse of a
// possibly singular matrix, no kinks of norm_l1).
const std::vector<StructFn> kStructFns = {
    struct_fn(kjit::ir::Builtin::Dot, {Ty::V3, Ty::V3}, Ty::D),
    struct_fn(kjit::ir::Builtin::Cross, {Ty::V3, Ty::V3}, Ty::V3),
    struct_fn(kjit::ir::Builtin::Length, {Ty::V3}, Ty::D),
    struct_fn(kjit::ir::Builtin::Normalize, {Ty::V3}, Ty::V3),
    struct_fn(kjit::ir::Builtin::LengthSq, {Ty::V3}, Ty::D),
    struct_fn(kjit::ir::Builtin::CwMul, {Ty::V3, Ty::V3}, Ty::V3),
    struct_fn(kjit::ir::Builtin::Outer, {Ty::V3, Ty::V3}, Ty::M33),
    struct_fn(kjit::ir::Builtin::Transpose, {Ty::M33}, Ty::M33),
    struct_fn(kjit::ir::Builtin::Trace, {Ty::M33}, Ty::D),
    struct_fn(kjit::ir::Builtin::Determinant, {Ty::M33}, Ty::D),
    struct_fn(kjit::ir::Builtin::Skew, {Ty::V3}, Ty::M33),
    struct_fn(kjit::ir::Builtin::Ddot, {Ty::M33, Ty::M33}, Ty::D),
    struct_fn(kjit::ir::Builtin::GetDiag, {Ty::M33}, Ty::V3),
};

const std::vector<FuncInfo> kFuncs = {
    {"fz_mix", {Ty::D, Ty::D}, Ty::D, false, false},
    {"fz_mix_g", {Ty::D, Ty::D}, Ty::D, true, false},
    {"fz_vscale", {Ty::V3, Ty::D}, Ty::V3, false, false},
    {"fz_soft_g", {Ty::D}, Ty::D, true, false},
    {"fz_gather_g", {Ty::I, Ty::D}, Ty::D, true, true},  // (a, i, x): the array a is implicit
    {"fz_loop", {Ty::D, Ty::I}, Ty::D, false, false},
    // A deliberately wrong custom gradient (d(x*x)/dx given as x): the self-test checks that
    // the tester reports it.
    {"fz_wrong_g", {Ty::D}, Ty::D, true, false, false},
    // The same with a deliberately wrong tangent (.jvp).
    {"fz_wrong_t", {Ty::D}, Ty::D, true, false, false},
    {"fz_early", {Ty::D, Ty::I}, Ty::D, false, false},
};

const char* ty_name(Ty t) {
  switch (t) {
    case Ty::D: return "Double";
    case Ty::I: return "Int";
    case Ty::B: return "Bool";
    case Ty::V3: return "Vec3d";
    case Ty::M33: return "Mat33d";
  }
  return "?";
}

}  // namespace fuzz
