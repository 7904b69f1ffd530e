// Every differentiable builtin's adjoint against finite differences, float32 and float64, at
// random points and at edges; and its tangent (forward mode) against finite differences
// along a random direction and against the adjoint (<J v, w> = <v, J^T w>). The table is
// checked against the builtin registry: a differentiable builtin without a row here fails
// the suite.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "builtin_kernel.hpp"
#include "kjit/dsl/tracer.hpp"
#include "kjit/ir/ir.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/kernel.hpp"

using namespace kjit;
using ir::Scalar;
using ir::Type;

namespace {

/// One argument: its type (given the scalar of the variant), a random range, and optional
/// fixed values (cycled over the elements, all lanes equal) that probe edges, or a generator
/// of structured values (unit quaternions, rotations, symmetric matrices).
struct Arg {
  std::function<Type(Scalar)> type;
  double lo = -1, hi = 1;
  std::vector<double> fixed;
  std::function<std::vector<double>(std::mt19937_64&)> gen = nullptr;
};

/// One signature of a builtin to check.
struct Case {
  std::string builtin;
  std::vector<Arg> args;
};

Arg S(double lo, double hi, std::vector<double> fixed = {}) {
  return Arg{[](Scalar s) { return Type::scalar_of(s); }, lo, hi, std::move(fixed)};
}
Arg V(int n, double lo = -1, double hi = 1, std::vector<double> fixed = {}) {
  return Arg{[n](Scalar s) { return Type::vector(n, s); }, lo, hi, std::move(fixed)};
}
Arg M(int r, int c, double lo = -1, double hi = 1) {
  return Arg{[r, c](Scalar s) { return Type::matrix(r, c, s); }, lo, hi, {}};
}
Arg B(std::vector<double> fixed) {
  return Arg{[](Scalar) { return Type::scalar_of(Scalar::Bool); }, 0, 1, std::move(fixed)};
}
/// An int32 (uint32) argument from a list of values: indices, periods, octaves, seeds.
Arg I(std::vector<double> fixed) { return Arg{[](Scalar) { return Type::scalar_of(Scalar::I32); }, 0, 0, std::move(fixed)}; }
Arg U(std::vector<double> fixed) { return Arg{[](Scalar) { return Type::scalar_of(Scalar::U32); }, 0, 0, std::move(fixed)}; }
std::vector<double> unit_quat(std::mt19937_64& r) {
  std::normal_distribution<double> g;
  std::vector<double> q{g(r), g(r), g(r), g(r)};
  double l = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (double& x : q) x /= l;
  if (q[3] < 0) for (double& x : q) x = -x;
  return q;
}
/// The rotation matrix of q (row-major).
std::vector<double> rotation(const std::vector<double>& q) {
  double x = q[0], y = q[1], z = q[2], w = q[3];
  return {1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w), 2 * (x * y + z * w), 1 - 2 * (x * x + z * z),
          2 * (y * z - x * w), 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)};
}
/// A unit quaternion; any quaternion (length 0.5..2); a transform with a unit rotation.
Arg Q() { return Arg{[](Scalar s) { return Type::quat(s); }, 0, 0, {}, unit_quat}; }
Arg Qany() {
  return Arg{[](Scalar s) { return Type::quat(s); }, 0, 0, {}, [](std::mt19937_64& r) {
               auto q = unit_quat(r);
               double k = std::uniform_real_distribution<double>(0.5, 2)(r);
               for (double& x : q) x *= k;
               return q;
             }};
}
Arg T() {
  return Arg{[](Scalar s) { return Type::transform(s); }, 0, 0, {}, [](std::mt19937_64& r) {
               std::uniform_real_distribution<double> u(-1, 1);
               std::vector<double> t{u(r), u(r), u(r)};
               for (double x : unit_quat(r)) t.push_back(x);
               return t;
             }};
}
/// A 3x3 rotation; a 4x4 T R S matrix (positive scale); a symmetric 3x3 matrix; a unit 3-vector.
Arg R3() { return Arg{[](Scalar s) { return Type::matrix(3, 3, s); }, 0, 0, {}, [](std::mt19937_64& r) { return rotation(unit_quat(r)); }}; }
Arg TRS() {
  return Arg{[](Scalar s) { return Type::matrix(4, 4, s); }, 0, 0, {}, [](std::mt19937_64& r) {
               auto m = rotation(unit_quat(r));
               std::uniform_real_distribution<double> u(-1, 1), sc(0.5, 2);
               std::vector<double> out(16, 0.0);
               double k[3] = {sc(r), sc(r), sc(r)};
               for (int i = 0; i < 3; ++i) { for (int j = 0; j < 3; ++j) out[size_t(4 * i + j)] = m[size_t(3 * i + j)] * k[j]; out[size_t(4 * i + 3)] = u(r); }
               out[15] = 1;
               return out;
             }};
}
Arg Sym3() {
  return Arg{[](Scalar s) { return Type::matrix(3, 3, s); }, 0, 0, {}, [](std::mt19937_64& r) {
               std::uniform_real_distribution<double> u(-1, 1);
               std::vector<double> m(9);
               for (int i = 0; i < 3; ++i) for (int j = i; j < 3; ++j) m[size_t(3 * i + j)] = m[size_t(3 * j + i)] = u(r);
               return m;
             }};
}
/// A well-conditioned n x n matrix (2 on the diagonal, small elsewhere): inverses whose
/// float32 finite differences are meaningful.
Arg Mwell(int n) {
  return Arg{[n](Scalar s) { return Type::matrix(n, n, s); }, 0, 0, {}, [n](std::mt19937_64& r) {
               std::uniform_real_distribution<double> u(-0.5, 0.5);
               std::vector<double> m(size_t(n * n));
               for (int i = 0; i < n * n; ++i) m[size_t(i)] = i % (n + 1) == 0 ? 2 + u(r) : u(r);
               return m;
             }};
}
/// A 4-vector whose components are far apart (min/max away from their ties), shuffled.
Arg Vspread() {
  return Arg{[](Scalar s) { return Type::vector(4, s); }, 0, 0, {}, [](std::mt19937_64& r) {
               std::vector<double> v{-0.9, -0.2, 0.4, 1.1};
               std::shuffle(v.begin(), v.end(), r);
               return v;
             }};
}
Arg Unit3() {
  return Arg{[](Scalar s) { return Type::vector(3, s); }, 0, 0, {}, [](std::mt19937_64& r) {
               std::normal_distribution<double> g;
               std::vector<double> v{g(r), g(r), g(r)};
               double l = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
               for (double& x : v) x /= l;
               return v;
             }};
}

/// The gradient cases: several signatures per builtin, edges where a builtin has a kink.
const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"add", {S(-2, 2), S(-2, 2)}}, {"add", {V(3), V(3)}}, {"add", {M(2, 2), M(2, 2)}},
      {"sub", {S(-2, 2), S(-2, 2)}}, {"sub", {V(3), V(3)}},
      {"mul", {S(-2, 2), S(-2, 2)}}, {"mul", {V(3), S(-2, 2)}}, {"mul", {S(-2, 2), V(3)}},
      {"mul", {M(3, 3), V(3)}}, {"mul", {V(3), M(3, 3)}}, {"mul", {M(2, 3), M(3, 2)}},
      {"mul", {M(2, 2), S(-2, 2)}},
      {"div", {S(-2, 2), S(0.5, 2)}}, {"div", {V(3), S(0.5, 2)}}, {"div", {S(-2, 2), V(3, 0.5, 2)}},
      {"mod", {S(0, 0, {2.3, -2.3, 1.1, 5.2, -4.1, 0.35}), S(0, 0, {0.9, 0.9, 1.7, -1.5, 1.3, 2.0})}},
      {"neg", {S(-2, 2)}}, {"neg", {V(3)}},
      {"pos", {S(-2, 2)}},
      {"sin", {S(-3, 3)}}, {"cos", {S(-3, 3)}}, {"tan", {S(-1.2, 1.2)}},
      {"exp", {S(-2, 2)}}, {"log", {S(0.1, 3)}}, {"sqrt", {S(0.1, 3)}},
      {"pow", {S(0.2, 2), S(-2, 2)}},
      {"abs", {S(0, 0, {-1.5, -0.02, 0.02, 1.5, 0.7, -0.2})}}, {"abs", {V(3)}},
      {"min", {S(0, 0, {0.1, 2.0, -1.0, 0.5}), S(0, 0, {0.5, 1.0, -2.0, 0.1})}}, {"min", {V(3, -1, -0.1), V(3, 0.1, 1)}}, {"min", {V(3, 0.1, 1), V(3, -1, -0.1)}},
      {"max", {S(0, 0, {0.1, 2.0, -1.0, 0.5}), S(0, 0, {0.5, 1.0, -2.0, 0.1})}}, {"max", {V(3, -1, -0.1), V(3, 0.1, 1)}}, {"max", {V(3, 0.1, 1), V(3, -1, -0.1)}},
      // x just inside and just outside each limit (beyond the float32 step), and well inside
      {"clamp", {S(0, 0, {-0.51, -0.49, 0.49, 0.51, 0.0, 2.0}), S(0, 0, {-0.5}), S(0, 0, {0.5})}},
      {"where", {B({1, 0, 1, 0}), S(-2, 2), S(-2, 2)}}, {"where", {B({0, 1}), V(3), V(3)}},
      {"dot", {V(3), V(3)}}, {"dot", {V(4), V(4)}},
      {"cross", {V(3), V(3)}},
      {"length", {V(3, 0.2, 1)}}, {"length", {V(2, 0.2, 1)}}, {"length", {Qany()}},
      {"normalize", {V(3, 0.2, 1)}}, {"normalize", {Qany()}},
      // Operators on quaternions and transforms; the fast division.
      {"add", {Qany(), Qany()}}, {"mul", {Qany(), Qany()}}, {"mul", {Qany(), S(-2, 2)}}, {"mul", {T(), T()}},
      {"sub", {T(), T()}}, {"neg", {Qany()}}, {"div", {Qany(), S(0.5, 2)}},
      {"div_approx", {S(-2, 2), S(0.5, 2)}}, {"div_approx", {V(3), S(0.5, 2)}},
      {"min", {Vspread()}}, {"max", {Vspread()}},
      // Scalar math, with edges: near the ends of asin/acos/erfinv's domains, both sides of
      // the kinks of copysign and frac's jumps kept beyond the step.
      {"acos", {S(-0.9, 0.9, {-0.95, 0.95})}}, {"asin", {S(-0.9, 0.9, {-0.95, 0.95})}}, {"atan", {S(-3, 3)}},
      {"atan2", {S(-2, 2, {1, -1, 0.5, -2}), S(-2, 2, {1, 1, -1, -0.3})}},
      {"cbrt", {S(0, 0, {-8, -0.5, 0.3, 2, 27})}},
      {"copysign", {S(0, 0, {1.5, -1.5, 0.7, -0.2}), S(0, 0, {-1, 1, 2, -3})}},
      {"cosh", {S(-2, 2)}}, {"sinh", {S(-2, 2)}}, {"tanh", {S(-2, 2)}},
      {"degrees", {S(-3, 3)}}, {"radians", {S(-300, 300)}},
      {"erf", {S(-2, 2)}}, {"erfc", {S(-2, 2)}},
      {"erfinv", {S(0, 0, {-0.95, -0.3, 0.0, 0.4, 0.9})}}, {"erfcinv", {S(0, 0, {0.05, 0.5, 1.0, 1.6, 1.95})}},
      {"log2", {S(0.1, 5)}}, {"log10", {S(0.1, 5)}},
      {"frac", {S(0, 0, {1.3, -2.7, 0.5, -0.4, 3.6})}},
      // Vectors: both branches of the Huber norm.
      {"length_sq", {V(3)}}, {"length_sq", {Qany()}}, {"norm_l1", {V(3, 0.2, 1)}}, {"norm_l1", {V(3, -1, -0.2)}}, {"norm_l2", {V(3, 0.2, 1)}},
      {"norm_huber", {V(3, -0.3, 0.3), S(0, 0, {1.0})}}, {"norm_huber", {V(3, 1, 2), S(0, 0, {0.5, 1.0})}},
      {"norm_pseudo_huber", {V(3), S(0.5, 2)}}, {"smooth_normalize", {V(3), S(0.5, 2)}},
      {"cw_mul", {V(3), V(3)}}, {"cw_mul", {M(2, 2), M(2, 2)}}, {"cw_div", {V(3), V(3, 0.5, 2)}}, {"cw_div", {M(2, 3), M(2, 3, 0.5, 2)}},
      {"outer", {V(3), V(2)}},
      // Matrices.
      {"transpose", {M(2, 3)}}, {"trace", {M(3, 3)}},
      {"determinant", {M(2, 2)}}, {"determinant", {M(3, 3)}}, {"determinant", {M(4, 4)}},
      {"inverse", {Mwell(2)}}, {"inverse", {Mwell(3)}}, {"inverse", {Mwell(4)}}, {"inverse_approx", {Mwell(3)}},
      {"diag", {V(3)}}, {"get_diag", {M(3, 3)}}, {"ddot", {M(2, 3), M(2, 3)}}, {"skew", {V(3)}},
      {"matrix_from_cols", {V(3), V(3), V(3)}}, {"matrix_from_rows", {V(2), V(2)}},
      {"svd3", {M(3, 3)}}, {"svd2", {M(2, 2)}}, {"qr3", {M(3, 3)}}, {"eig3", {Sym3()}},
      // Quaternions (Euler angles away from gimbal lock).
      {"quat_from_axis_angle", {Unit3(), S(-3, 3)}},
      {"quat_from_euler", {V(3, -1, 1), I({0}), I({1}), I({2})}}, {"quat_from_euler", {V(3, -1, 1), I({2}), I({0}), I({2})}},
      {"quat_from_matrix", {R3()}}, {"quat_rpy", {S(-2, 2), S(-1, 1), S(-2, 2)}},
      {"quat_inverse", {Qany()}}, {"quat_rotate", {Qany(), V(3)}}, {"quat_rotate_inv", {Qany(), V(3)}},
      {"quat_slerp", {Q(), Q(), S(0.1, 0.9)}}, {"quat_to_axis_angle", {Q()}},
      {"quat_to_euler", {Q(), I({0}), I({1}), I({2})}}, {"quat_to_euler", {Q(), I({1}), I({2}), I({1})}},
      {"quat_to_matrix", {Qany()}}, {"quat_to_rpy", {Q()}},
      {"quat_twist", {Unit3(), Q()}}, {"quat_twist_angle", {Unit3(), Q()}}, {"quat_twist_angle_signed", {Unit3(), Q()}},
      // Transforms and spatial vectors.
      {"transform_get_translation", {T()}}, {"transform_get_rotation", {T()}},
      {"transform_set_translation", {T(), V(3)}}, {"transform_set_rotation", {T(), Q()}},
      {"transform_multiply", {T(), T()}}, {"transform_inverse", {T()}},
      {"transform_point", {T(), V(3)}}, {"transform_point", {M(4, 4), V(3)}},
      {"transform_vector", {T(), V(3)}}, {"transform_vector", {M(4, 4), V(3)}},
      {"transform_to_matrix", {T()}}, {"transform_from_matrix", {TRS()}},
      {"transform_compose", {V(3), Q(), V(3, 0.5, 2)}}, {"transform_decompose", {TRS()}},
      {"transform_twist", {T(), V(6)}}, {"transform_wrench", {T(), V(6)}},
      {"spatial_top", {V(6)}}, {"spatial_bottom", {V(6)}}, {"spatial_dot", {V(6), V(6)}},
      {"spatial_cross", {V(6), V(6)}}, {"spatial_cross_dual", {V(6), V(6)}}, {"spatial_adjoint", {M(3, 3), M(3, 3)}},
      {"velocity_at_point", {V(6), V(3)}},
      // Pure geometry: random segments (generic: away from clamps and parallel edges).
      {"closest_point_edge_edge", {V(3), V(3), V(3), V(3), S(0, 0, {1e-6})}},
      // Noise (gradients in the coordinate; curl noise also in lacunarity and gain).
      {"noise", {U({5}), S(-3, 3)}}, {"noise", {U({5}), V(2, -3, 3)}}, {"noise", {U({5}), V(3, -3, 3)}}, {"noise", {U({5}), V(4, -3, 3)}},
      {"pnoise", {U({9}), V(2, 0.1, 5), I({3}), I({4})}}, {"pnoise", {U({9}), S(0.1, 5), I({2})}},
      {"curlnoise", {U({2}), V(2, -2, 2), U({2}), S(0, 0, {1.8}), S(0, 0, {0.6})}},
      {"curlnoise", {U({2}), V(3, -2, 2), U({2}), S(0, 0, {1.8}), S(0, 0, {0.6})}},
      {"curlnoise", {U({2}), V(4, -2, 2), U({1}), S(0, 0, {2.0}), S(0, 0, {0.5})}},
      // Utility: smoothstep inside and beyond its edges.
      {"select", {B({1, 0, 1, 0}), S(-2, 2), S(-2, 2)}}, {"select", {B({0, 1}), V(3), V(3)}},
      {"lerp", {S(-2, 2), S(-2, 2), S(0, 1)}}, {"lerp", {V(3), V(3), S(0, 1)}}, {"lerp", {Qany(), Qany(), S(0, 1)}},
      {"fma", {S(-2, 2), S(-2, 2), S(-2, 2)}}, {"fma", {V(4), S(-2, 2), V(4)}}, {"fma", {M(3, 2), S(-2, 2), M(3, 2)}},
      {"fma", {Qany(), S(-2, 2), Qany()}},
      {"smoothstep", {S(0, 0, {-1}), S(0, 0, {2}), S(0, 0, {-1.5, -0.5, 0.3, 1.1, 1.9, 2.5})}},
  };
  return c;
}

/// A 1-D array of `n` elements of `t` whose lanes follow `arg`.
NdArray fill(const Type& t, const Arg& arg, int n, std::mt19937_64& rng) {
  NdArray a = NdArray::empty(t, {n});
  std::uniform_real_distribution<double> u(arg.lo, arg.hi);
  char* p = static_cast<char*>(a.data());
  for (int i = 0; i < n; ++i) {
    std::vector<double> generated = arg.gen ? arg.gen(rng) : std::vector<double>();
    for (int l = 0; l < t.lanes(); ++l) {
      double v = arg.gen ? generated[size_t(l)] : arg.fixed.empty() ? u(rng) : arg.fixed[size_t(i) % arg.fixed.size()];
      char* q = p + size_t(i) * size_t(t.element_bytes()) + size_t(l) * size_t(ir::scalar_bytes(t.scalar));
      if (t.scalar == Scalar::F64) *reinterpret_cast<double*>(q) = v;
      else if (t.scalar == Scalar::F32) *reinterpret_cast<float*>(q) = float(v);
      else if (t.scalar == Scalar::I32) *reinterpret_cast<int32_t*>(q) = int32_t(v);
      else if (t.scalar == Scalar::U32) *reinterpret_cast<uint32_t*>(q) = uint32_t(v);
      else *reinterpret_cast<bool*>(q) = v != 0;
    }
  }
  return a;
}

/// The kernel of one case: out[i] = builtin(a0[i], ...); a builtin returning several results
/// (a result struct: svd3, quat_to_axis_angle, ...) stores each into its own array out0...
std::unique_ptr<KernelDef> make_gradient_kernel(const std::string& name, ir::Builtin builtin, const std::vector<Type>& args) {
  Type result = test::builtin_result(builtin, args);
  if (result.shape != ir::Shape::Struct) return test::make_builtin_kernel(name, "builtin_gradients", builtin, args);
  const ir::StructInfo& info = ir::struct_info(result.struct_id);
  std::vector<KernelParam> params;
  for (size_t k = 0; k < args.size(); ++k) params.push_back({"a" + std::to_string(k), Type::array(args[k], 1)});
  for (size_t f = 0; f < info.fields.size(); ++f) params.push_back({"out" + std::to_string(f), Type::array(info.fields[f].type, 1)});
  ir::SourceLoc loc{__FILE__, __LINE__};
  auto trace = [builtin, args, result, loc, fields = info.fields, n = params.size()](const ir::ValueId* param_ids) {
    dsl::Loc l{loc.file, loc.line};
    auto& t = dsl::detail::Tracer::get(l);
    std::vector<ir::ValueId> arrays(param_ids, param_ids + n);
    ir::ValueId i = t.emit(ir::Op::ThreadId, Type::scalar_of(Scalar::I32), {}, -1, l);
    std::vector<ir::ValueId> values;
    for (size_t k = 0; k < args.size(); ++k) values.push_back(t.emit(ir::Op::ArrayLoad, args[k], {arrays[k], i}, 0, l));
    ir::ValueId r = t.emit(ir::Op::Call, result, values, int64_t(builtin), l);
    for (size_t f = 0; f < fields.size(); ++f) {
      ir::ValueId part = t.emit(ir::Op::Extract, fields[f].type, {r}, int64_t(f), l);
      t.emit(ir::Op::ArrayStore, Type::void_type(), {arrays[args.size() + f], i, part}, 0, l);
    }
  };
  return std::make_unique<KernelDef>(name, "builtin_gradients", params, loc, detail::ir_kernel_body(trace));
}

}  // namespace

TEST_CASE("every differentiable builtin has a gradient case") {
  std::set<std::string> covered;
  for (const Case& c : cases()) covered.insert(c.builtin);
  for (int b = 0; b < ir::kBuiltinCount; ++b) {
    const ir::BuiltinInfo& info = ir::builtin_info(ir::Builtin(b));
    INFO("builtin " << info.name);
    if (info.differentiable) CHECK_MESSAGE(covered.count(info.name), "no gradient case for differentiable builtin " << info.name);
    else CHECK_MESSAGE(!covered.count(info.name), info.name << " is not differentiable but has a gradient case");
  }
}

TEST_CASE("builtin adjoints and tangents match finite differences and each other (float64 and float32)") {
  // The tangent module needs no second derivatives here: it compiles in half the time.
  ModuleOptions options = module("builtin_gradients").options();
  options.tangent_adjoint = false;
  module("builtin_gradients").set_options(options);
  // All kernels are defined first so that they compile as one module.
  struct Item {
    const Case* c;
    Scalar scalar;
    std::unique_ptr<KernelDef> kernel;
  };
  std::vector<Item> items;
  int counter = 0;
  for (const Case& c : cases()) {
    for (Scalar s : {Scalar::F64, Scalar::F32}) {
      std::vector<Type> types;
      for (const Arg& a : c.args) types.push_back(a.type(s));
      auto b = ir::find_builtin(c.builtin);
      REQUIRE(b);
      items.push_back({&c, s, make_gradient_kernel("grad::" + c.builtin + "_" + std::to_string(counter++), *b, types)});
    }
  }
  std::mt19937_64 rng(42);
  const int n = 6;
  for (Item& item : items) {
    std::vector<LaunchArg> args;
    for (const Arg& a : item.c->args) args.push_back(fill(a.type(item.scalar), a, n, rng));
    for (size_t k = item.c->args.size(); k < item.kernel->params().size(); ++k)
      args.push_back(NdArray::zeros(item.kernel->params()[k].type.element(), {n}));
    GradCheckOptions o;
    GradCheckReport r = check_gradients(*item.kernel, n, args, o);
    INFO(item.kernel->name() << " (" << ir::scalar_name(item.scalar) << ")\n" << r.str());
    CHECK(r.passed());
    CHECK(r.tangent_error.empty());
    bool dot = false, tangent = false;
    for (const GradCheckParam& p : r.tangents) {
      dot = dot || (p.check == "dot" && p.checked > 0);
      tangent = tangent || (p.check == "tangent" && p.checked > 0);
    }
    CHECK(dot);
    CHECK(tangent);
    if (item.scalar == Scalar::F64)
      for (const GradCheckParam& p : r.params) CHECK(p.checked > 0);
  }
}
