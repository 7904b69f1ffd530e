// The builtin codegen table: one row per builtin, in builtins.def order.
#include "builtin_codegen.hpp"

#include <iterator>

#include "tangent_rules.hpp"

namespace kjit::codegen {

namespace {
using B = ir::Builtin;
#define T(rule) &tangent_rules::rule
constexpr BuiltinCodegen kTable[] = {
    // id, operator, function, chunk, adjoint, adjoint chunk, tangent rule, operator on integers
    // only, takes the call site (thread index and location), adjoint linear (default false),
    // tangent function and its chunk (default: a dual-number evaluation of the function)
    {B::Add, "+", nullptr, nullptr, "kj::adj_add", "arith", T(add), false, false, true},
    {B::Sub, "-", nullptr, nullptr, "kj::adj_sub", "arith", T(sub), false, false, true},
    {B::Mul, "*", nullptr, nullptr, "kj::adj_mul", "arith", T(mul), false, false},
    {B::Div, "/", nullptr, nullptr, "kj::adj_div", "arith", T(div), false, false},
    {B::Mod, "%", "kj::mod", "mod", "kj::adj_mod", "mod", T(mod), true, false},
    {B::Neg, "-", nullptr, nullptr, "kj::adj_neg", "arith", T(neg), false, false, true},
    {B::Pos, "+", nullptr, nullptr, "kj::adj_pos", "arith", T(identity), false, false, true},
    {B::FloorDiv, nullptr, "kj::floordiv", "floordiv", nullptr, nullptr, nullptr, false, false},
    {B::BitAnd, "&", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::BitOr, "|", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::BitXor, "^", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::LShift, "<<", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::RShift, ">>", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::Invert, "~", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::Unot, "!", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::LogicalAnd, "&&", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::LogicalOr, "||", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::Lt, "<", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::Le, "<=", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::Gt, ">", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::Ge, ">=", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::Eq, "==", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::Ne, "!=", nullptr, nullptr, nullptr, nullptr, nullptr, false, false},
    {B::DivApprox, nullptr, "kj::div_approx", "div_approx", "kj::adj_div_approx", "div_approx", T(div), false, false},
    {B::Sin, nullptr, "kj::sin", "math", "kj::adj_sin", "math", T(sin), false, false},
    {B::Cos, nullptr, "kj::cos", "math", "kj::adj_cos", "math", T(cos), false, false},
    {B::Tan, nullptr, "kj::tan", "math", "kj::adj_tan", "math", T(tan), false, false},
    {B::Exp, nullptr, "kj::exp", "math", "kj::adj_exp", "math", T(exp), false, false},
    {B::Log, nullptr, "kj::log", "math", "kj::adj_log", "math", T(log), false, false},
    {B::Sqrt, nullptr, "kj::sqrt", "math", "kj::adj_sqrt", "math", T(sqrt), false, false},
    {B::Pow, nullptr, "kj::pow", "math", "kj::adj_pow", "math", T(pow), false, false},
    {B::Abs, nullptr, "kj::abs", "abs", "kj::adj_abs", "abs", T(abs), false, false},
    {B::Min, nullptr, "kj::min", "minmax", "kj::adj_min", "minmax", T(min), false, false},
    {B::Max, nullptr, "kj::max", "minmax", "kj::adj_max", "minmax", T(max), false, false},
    {B::Floor, nullptr, "kj::floor", "math", nullptr, nullptr, nullptr, false, false},
    {B::Ceil, nullptr, "kj::ceil", "math", nullptr, nullptr, nullptr, false, false},
    {B::Clamp, nullptr, "kj::clamp", "clamp", "kj::adj_clamp", "clamp", T(clamp), false, false},
    {B::Where, "?:", nullptr, nullptr, "kj::adj_where", "select", T(linear), false, false},
    {B::Acos, nullptr, "kj::acos", "math", "kj::adj_acos", "math", T(acos), false, false},
    {B::Asin, nullptr, "kj::asin", "math", "kj::adj_asin", "math", T(asin), false, false},
    {B::Atan, nullptr, "kj::atan", "math", "kj::adj_atan", "math", T(atan), false, false},
    {B::Atan2, nullptr, "kj::atan2", "math", "kj::adj_atan2", "math", T(atan2), false, false},
    {B::Cbrt, nullptr, "kj::cbrt", "math", "kj::adj_cbrt", "math", T(cbrt), false, false},
    {B::Copysign, nullptr, "kj::copysign", "math", "kj::adj_copysign", "math", T(copysign), false, false},
    {B::Cosh, nullptr, "kj::cosh", "math", "kj::adj_cosh", "math", T(cosh), false, false},
    {B::Sinh, nullptr, "kj::sinh", "math", "kj::adj_sinh", "math", T(sinh), false, false},
    {B::Tanh, nullptr, "kj::tanh", "math", "kj::adj_tanh", "math", T(tanh), false, false},
    {B::Degrees, nullptr, "kj::degrees", "math", "kj::adj_degrees", "math", T(linear), false, false},
    {B::Radians, nullptr, "kj::radians", "math", "kj::adj_radians", "math", T(linear), false, false},
    {B::Erf, nullptr, "kj::erf", "math", "kj::adj_erf", "math", T(erf), false, false},
    {B::Erfc, nullptr, "kj::erfc", "math", "kj::adj_erfc", "math", T(erfc), false, false},
    {B::Erfinv, nullptr, "kj::erfinv", "erfinv", "kj::adj_erfinv", "erfinv", T(erfinv), false, false},
    {B::Erfcinv, nullptr, "kj::erfcinv", "erfinv", "kj::adj_erfcinv", "erfinv", T(erfcinv), false, false},
    {B::Log2, nullptr, "kj::log2", "math", "kj::adj_log2", "math", T(log2), false, false},
    {B::Log10, nullptr, "kj::log10", "math", "kj::adj_log10", "math", T(log10), false, false},
    {B::Frac, nullptr, "kj::frac", "math", "kj::adj_frac", "math", T(identity), false, false},
    {B::Trunc, nullptr, "kj::trunc", "math", nullptr, nullptr, nullptr, false, false},
    {B::Round, nullptr, "kj::round", "math", nullptr, nullptr, nullptr, false, false},
    {B::Rint, nullptr, "kj::rint", "math", nullptr, nullptr, nullptr, false, false},
    {B::Isfinite, nullptr, "kj::isfinite", "classify", nullptr, nullptr, nullptr, false, false},
    {B::Isinf, nullptr, "kj::isinf", "classify", nullptr, nullptr, nullptr, false, false},
    {B::Isnan, nullptr, "kj::isnan", "classify", nullptr, nullptr, nullptr, false, false},
    {B::Sign, nullptr, "kj::sign", "sign", nullptr, nullptr, nullptr, false, false},
    {B::Step, nullptr, "kj::step", "sign", nullptr, nullptr, nullptr, false, false},
    {B::Nonzero, nullptr, "kj::nonzero", "sign", nullptr, nullptr, nullptr, false, false},
    {B::Dot, nullptr, "kj::dot", "vec", "kj::adj_dot", "dot", T(bilinear), false, false},
    {B::Cross, nullptr, "kj::cross", "cross", "kj::adj_cross", "cross", T(bilinear), false, false},
    {B::Length, nullptr, "kj::length", "length", "kj::adj_length", "length", T(length), false, false},
    {B::Normalize, nullptr, "kj::normalize", "normalize", "kj::adj_normalize", "normalize", T(normalize), false, false},
    {B::LengthSq, nullptr, "kj::length_sq", "length", "kj::adj_length_sq", "length", T(length_sq), false, false},
    {B::NormL1, nullptr, "kj::norm_l1", "norms", "kj::adj_norm_l1", "norms", T(norm_l1), false, false},
    {B::NormL2, nullptr, "kj::norm_l2", "length", "kj::adj_norm_l2", "length", T(length), false, false},
    {B::NormHuber, nullptr, "kj::norm_huber", "norms", "kj::adj_norm_huber", "norms", T(norm_huber), false, false},
    {B::NormPseudoHuber, nullptr, "kj::norm_pseudo_huber", "norms", "kj::adj_norm_pseudo_huber", "norms", T(norm_pseudo_huber), false, false},
    {B::SmoothNormalize, nullptr, "kj::smooth_normalize", "norms", "kj::adj_smooth_normalize", "norms", T(smooth_normalize), false, false},
    {B::CwMul, nullptr, "kj::cw_mul", "cw", "kj::adj_cw_mul", "cw", T(bilinear), false, false},
    {B::CwDiv, nullptr, "kj::cw_div", "cw", "kj::adj_cw_div", "cw", T(cw_div), false, false},
    {B::Outer, nullptr, "kj::outer", "outer", "kj::adj_outer", "outer", T(bilinear), false, false},
    {B::Argmin, nullptr, "kj::argmin", "argminmax", nullptr, nullptr, nullptr, false, false},
    {B::Argmax, nullptr, "kj::argmax", "argminmax", nullptr, nullptr, nullptr, false, false},
    {B::Transpose, nullptr, "kj::transpose", "transpose", "kj::adj_transpose", "transpose", T(linear), false, false},
    {B::Trace, nullptr, "kj::trace", "trace", "kj::adj_trace", "trace", T(linear), false, false},
    {B::Determinant, nullptr, "kj::determinant", "determinant", "kj::adj_determinant", "determinant", T(determinant), false, false},
    {B::Inverse, nullptr, "kj::inverse", "inverse", "kj::adj_inverse", "inverse", T(inverse), false, false},
    {B::InverseApprox, nullptr, "kj::inverse_approx", "inverse", "kj::adj_inverse_approx", "inverse", T(inverse), false, false},
    {B::Diag, nullptr, "kj::diag", "trace", "kj::adj_diag", "trace", T(linear), false, false},
    {B::GetDiag, nullptr, "kj::get_diag", "trace", "kj::adj_get_diag", "trace", T(linear), false, false},
    {B::Ddot, nullptr, "kj::ddot", "trace", "kj::adj_ddot", "trace", T(bilinear), false, false},
    {B::Skew, nullptr, "kj::skew", "trace", "kj::adj_skew", "trace", T(linear), false, false},
    {B::MatrixFromCols, nullptr, "kj::matrix_from_cols", "from_vectors", "kj::adj_matrix_from_cols", "from_vectors", T(linear), false, false},
    {B::MatrixFromRows, nullptr, "kj::matrix_from_rows", "from_vectors", "kj::adj_matrix_from_rows", "from_vectors", T(linear), false, false},
    {B::Svd2, nullptr, "kj::svd2", "svd2", "kj::adj_svd2", "svd2", T(tangent_call), false, false},
    {B::Svd3, nullptr, "kj::svd3", "svd3", "kj::adj_svd3", "svd3", T(tangent_call), false, false},
    {B::Qr3, nullptr, "kj::qr3", "qr3", "kj::adj_qr3", "qr3", T(tangent_call), false, false},
    {B::Eig3, nullptr, "kj::eig3", "eig3", "kj::adj_eig3", "eig3", T(tangent_call), false, false},
    {B::QuatFromAxisAngle, nullptr, "kj::quat_from_axis_angle", "quatmath", "kj::adj_quat_from_axis_angle", "quatmath", T(tangent_call), false, false},
    {B::QuatFromEuler, nullptr, "kj::quat_from_euler", "quatmath", "kj::adj_quat_from_euler", "quatmath", T(tangent_call), false, false},
    {B::QuatFromMatrix, nullptr, "kj::quat_from_matrix", "quatmath", "kj::adj_quat_from_matrix", "quatmath", T(tangent_call), false, false},
    {B::QuatRpy, nullptr, "kj::quat_rpy", "quatmath", "kj::adj_quat_rpy", "quatmath", T(tangent_call), false, false},
    {B::QuatInverse, nullptr, "kj::quat_inverse", "quatmath", "kj::adj_quat_inverse", "quatmath", T(linear), false, false},
    {B::QuatRotate, nullptr, "kj::quat_rotate", "quatmath", "kj::adj_quat_rotate", "quatmath", T(tangent_call), false, false},
    {B::QuatRotateInv, nullptr, "kj::quat_rotate_inv", "quatmath", "kj::adj_quat_rotate_inv", "quatmath", T(tangent_call), false, false},
    {B::QuatSlerp, nullptr, "kj::quat_slerp", "quatmath", "kj::adj_quat_slerp", "quatmath", T(tangent_call), false, false},
    {B::QuatToAxisAngle, nullptr, "kj::quat_to_axis_angle", "quatmath", "kj::adj_quat_to_axis_angle", "quatmath", T(tangent_call), false, false},
    {B::QuatToEuler, nullptr, "kj::quat_to_euler", "quatmath", "kj::adj_quat_to_euler", "quatmath", T(tangent_call), false, false},
    {B::QuatToMatrix, nullptr, "kj::quat_to_matrix", "quatmath", "kj::adj_quat_to_matrix", "quatmath", T(tangent_call), false, false},
    {B::QuatToRpy, nullptr, "kj::quat_to_rpy", "quatmath", "kj::adj_quat_to_rpy", "quatmath", T(tangent_call), false, false},
    {B::QuatTwist, nullptr, "kj::quat_twist", "quatmath", "kj::adj_quat_twist", "quatmath", T(tangent_call), false, false},
    {B::QuatTwistAngle, nullptr, "kj::quat_twist_angle", "quatmath", "kj::adj_quat_twist_angle", "quatmath", T(tangent_call), false, false},
    {B::QuatTwistAngleSigned, nullptr, "kj::quat_twist_angle_signed", "quatmath", "kj::adj_quat_twist_angle_signed", "quatmath", T(tangent_call), false, false},
    {B::TransformGetTranslation, nullptr, "kj::transform_get_translation", "transformmath", "kj::adj_transform_get_translation", "transformmath", T(linear), false, false},
    {B::TransformGetRotation, nullptr, "kj::transform_get_rotation", "transformmath", "kj::adj_transform_get_rotation", "transformmath", T(linear), false, false},
    {B::TransformSetTranslation, nullptr, "kj::transform_set_translation", "transformmath", "kj::adj_transform_set_translation", "transformmath", T(linear), false, false},
    {B::TransformSetRotation, nullptr, "kj::transform_set_rotation", "transformmath", "kj::adj_transform_set_rotation", "transformmath", T(linear), false, false},
    {B::TransformMultiply, nullptr, "kj::transform_multiply", "transformmath", "kj::adj_transform_multiply", "transformmath", T(tangent_call), false, false},
    {B::TransformInverse, nullptr, "kj::transform_inverse", "transformmath", "kj::adj_transform_inverse", "transformmath", T(tangent_call), false, false},
    {B::TransformPoint, nullptr, "kj::transform_point", "transformmath", "kj::adj_transform_point", "transformmath", T(tangent_call), false, false},
    {B::TransformVector, nullptr, "kj::transform_vector", "transformmath", "kj::adj_transform_vector", "transformmath", T(tangent_call), false, false},
    {B::TransformToMatrix, nullptr, "kj::transform_to_matrix", "transformmath", "kj::adj_transform_to_matrix", "transformmath", T(tangent_call), false, false},
    {B::TransformFromMatrix, nullptr, "kj::transform_from_matrix", "transformmath", "kj::adj_transform_from_matrix", "transformmath", T(tangent_call), false, false},
    {B::TransformCompose, nullptr, "kj::transform_compose", "transformmath", "kj::adj_transform_compose", "transformmath", T(tangent_call), false, false},
    {B::TransformDecompose, nullptr, "kj::transform_decompose", "transformmath", "kj::adj_transform_decompose", "transformmath", T(tangent_call), false, false},
    {B::TransformTwist, nullptr, "kj::transform_twist", "transformmath", "kj::adj_transform_twist", "transformmath", T(tangent_call), false, false},
    {B::TransformWrench, nullptr, "kj::transform_wrench", "transformmath", "kj::adj_transform_wrench", "transformmath", T(tangent_call), false, false},
    {B::SpatialTop, nullptr, "kj::spatial_top", "transformmath", "kj::adj_spatial_top", "transformmath", T(linear), false, false},
    {B::SpatialBottom, nullptr, "kj::spatial_bottom", "transformmath", "kj::adj_spatial_bottom", "transformmath", T(linear), false, false},
    {B::SpatialDot, nullptr, "kj::spatial_dot", "transformmath", "kj::adj_spatial_dot", "transformmath", T(bilinear), false, false},
    {B::SpatialCross, nullptr, "kj::spatial_cross", "transformmath", "kj::adj_spatial_cross", "transformmath", T(bilinear), false, false},
    {B::SpatialCrossDual, nullptr, "kj::spatial_cross_dual", "transformmath", "kj::adj_spatial_cross_dual", "transformmath", T(bilinear), false, false},
    {B::SpatialAdjoint, nullptr, "kj::spatial_adjoint", "transformmath", "kj::adj_spatial_adjoint", "transformmath", T(linear), false, false},
    {B::VelocityAtPoint, nullptr, "kj::velocity_at_point", "transformmath", "kj::adj_velocity_at_point", "transformmath", T(tangent_call), false, false},
    {B::RandInit, nullptr, "kj::rand_init", "random", nullptr, nullptr, nullptr, false, false},
    {B::Randi, nullptr, "kj::randi", "random", nullptr, nullptr, nullptr, false, false},
    {B::Randu, nullptr, "kj::randu", "random", nullptr, nullptr, nullptr, false, false},
    {B::Randf, nullptr, "kj::randf", "random", nullptr, nullptr, nullptr, false, false},
    {B::Randn, nullptr, "kj::randn", "random", nullptr, nullptr, nullptr, false, false},
    {B::Poisson, nullptr, "kj::poisson", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleCdf, nullptr, "kj::sample_cdf", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleTriangle, nullptr, "kj::sample_triangle", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleUnitSquare, nullptr, "kj::sample_unit_square", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleUnitCube, nullptr, "kj::sample_unit_cube", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleUnitDisk, nullptr, "kj::sample_unit_disk", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleUnitRing, nullptr, "kj::sample_unit_ring", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleUnitSphere, nullptr, "kj::sample_unit_sphere", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleUnitSphereSurface, nullptr, "kj::sample_unit_sphere_surface", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleUnitHemisphere, nullptr, "kj::sample_unit_hemisphere", "random", nullptr, nullptr, nullptr, false, false},
    {B::SampleUnitHemisphereSurface, nullptr, "kj::sample_unit_hemisphere_surface", "random", nullptr, nullptr, nullptr, false, false},
    {B::Noise, nullptr, "kj::noise", "noise", "kj::adj_noise", "noise", T(tangent_call), false, false, false, "kj::tangent_noise", "noise"},
    {B::Pnoise, nullptr, "kj::pnoise", "noise", "kj::adj_pnoise", "noise", T(tangent_call), false, false, false, "kj::tangent_pnoise", "noise"},
    {B::Curlnoise, nullptr, "kj::curlnoise", "noise", "kj::adj_curlnoise", "noise", T(tangent_call), false, false, false, "kj::tangent_curlnoise", "noise_tangent"},
    {B::Select, nullptr, "kj::select", "select", "kj::adj_select", "select", T(linear), false, false},
    {B::Lerp, nullptr, "kj::lerp", "lerp", "kj::adj_lerp", "lerp", T(lerp), false, false},
    {B::Fma, nullptr, "kj::fma", "fma", "kj::adj_fma", "fma", T(fma), false, false},
    {B::Smoothstep, nullptr, "kj::smoothstep", "smoothstep", "kj::adj_smoothstep", "smoothstep", T(smoothstep), false, false},
    {B::LowerBound, nullptr, "kj::lower_bound", "lower_bound", nullptr, nullptr, nullptr, false, false},
    {B::BlockDim, nullptr, "kj::block_dim", "launch_info", nullptr, nullptr, nullptr, false, false},
    {B::Breakpoint, nullptr, "kj::breakpoint", "launch_info", nullptr, nullptr, nullptr, false, false},
    {B::ExpectNear, nullptr, "kj::expect_near", "expect", nullptr, nullptr, nullptr, false, true},
};

#undef T

constexpr bool rows_in_order() {
  for (size_t i = 0; i < std::size(kTable); ++i)
    if (size_t(kTable[i].id) != i) return false;
  return true;
}
static_assert(std::size(kTable) == size_t(ir::kBuiltinCount),
              "every builtin of builtins.def needs a row in the codegen table");
static_assert(rows_in_order(), "codegen table rows must follow builtins.def order");

// builtins.def's differentiable column, as a constant the table is checked against.
constexpr bool kDifferentiable[] = {
#define Yes true
#define No false
#define KJIT_BUILTIN(E, name, category, rule, diff) diff,
#include "kjit/ir/builtins.def"
#undef KJIT_BUILTIN
#undef Yes
#undef No
};
constexpr bool adjoints_match_table() {
  for (size_t i = 0; i < std::size(kTable); ++i)
    if (kDifferentiable[i] != (kTable[i].adjoint != nullptr)) return false;
  return true;
}
// A differentiable builtin without an adjoint rule would silently get a zero gradient; one
// with a rule that the table calls non-differentiable would never use it.
static_assert(adjoints_match_table(), "a builtin is differentiable exactly when it has an adjoint rule");
constexpr bool tangents_match_table() {
  for (size_t i = 0; i < std::size(kTable); ++i)
    if (kDifferentiable[i] != kTable[i].tangent.set) return false;
  return true;
}
// The same for forward mode: a differentiable builtin without a tangent rule would give the
// tangent kernel a silent zero.
static_assert(tangents_match_table(), "a builtin is differentiable exactly when it has a tangent rule");
}  // namespace

const BuiltinCodegen& builtin_codegen(ir::Builtin b) { return kTable[size_t(b)]; }

std::string rule_by_reference(const char* rule) { return std::string(rule) + "_ref"; }

std::string rule_wrappers(const std::set<std::string>& chunks) {
  std::set<std::string> rules;  // several builtins share a rule (quat and transform chunks)
  for (const BuiltinCodegen& g : kTable)
    if (g.adjoint && chunks.count(g.adjoint_chunk)) rules.insert(g.adjoint);
  std::string out;
  for (const std::string& rule : rules) {
    const std::string name = rule.substr(rule.rfind(':') + 1);  // "kj::adj_mul" -> "adj_mul"
    out += "template <class... A> KJ_FUNC void " + name + "_ref(A&... a) { " + name + "(a...); }\n";
  }
  return out.empty() ? out : "namespace kj {  // adjoint rules by reference (rule_by_reference)\n" + out + "}\n";
}

}  // namespace kjit::codegen
