// program.cpp — the builtin and device-function tables the generator, walker and printer share.
#include "program.hpp"

namespace fuzz {

// Each unary builtin with the map that keeps its argument in its smooth domain: "%s" is the
// operand. tanh bounds a value to (-1, 1) smoothly, so finite differences stay meaningful.
const std::vector<UnaryFn> kUnary = {
    {"sin", "%s"},           {"cos", "%s"},           {"tan", "tanh(%s)"},
    {"exp", "tanh(%s)"},     {"log", "1.5 + tanh(%s)"}, {"sqrt", "1.5 + tanh(%s)"},
    {"tanh", "%s"},          {"atan", "%s"},          {"sinh", "tanh(%s)"},
    {"cosh", "tanh(%s)"},    {"erf", "%s"},           {"erfc", "%s"},
    {"cbrt", "1.5 + tanh(%s)"}, {"log2", "1.5 + tanh(%s)"}, {"log10", "1.5 + tanh(%s)"},
    {"asin", "0.9 * tanh(%s)"}, {"acos", "0.9 * tanh(%s)"}, {"erfinv", "0.9 * tanh(%s)"},
    {"erfcinv", "1.0 + 0.9 * tanh(%s)"}, {"degrees", "0.02 * tanh(%s)"}, {"radians", "%s"},
    {"abs", "%s"},
};
// atan2(x, y), pow(1.5 + tanh(x), tanh(y)), min, max, clamp(x, -|y|-0.5, |y|+0.5) as
// clamp(x, y - 1.0, y + 1.0), smoothstep(-1, 1, x) * y, lerp(x, y, 0.3), fma(x, y, 0.3)
const std::vector<const char*> kBinary = {"atan2", "pow", "min", "max", "clamp", "smoothstep", "lerp", "fma"};
// dot, cross, length, normalize, length_sq, cw_mul
const std::vector<const char*> kVecFn = {"dot", "cross", "length", "normalize", "length_sq", "cw_mul"};
// outer(V, V), transpose(M), trace(M), determinant(M), skew(V), ddot(M, M), get_diag(M)
const std::vector<const char*> kMatFn = {"outer", "transpose", "trace", "determinant", "skew", "ddot", "get_diag"};

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
