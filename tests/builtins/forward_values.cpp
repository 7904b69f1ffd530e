// Forward values of every builtin call on cpu against float64 references (forward_cases*.cpp),
// for float64 and float32 (and integer) variants, all in one module.
#include <doctest/doctest.h>

#include <memory>
#include <set>

#include "builtin_kernel.hpp"
#include "forward_cases.hpp"
#include "kjit/ir/builtins.hpp"
#include "kjit/kjit.hpp"
#include "lanes.hpp"

namespace kjit::test {

using ir::Scalar;
using ir::Type;

namespace {
Lanes repeat(double v, int n) { return Lanes(size_t(n), v); }
Lanes random_unit_quat(std::mt19937_64& rng) {
  std::normal_distribution<double> g;
  Lanes q{g(rng), g(rng), g(rng), g(rng)};
  double l = std::sqrt(ref::dot(q, q));
  for (double& x : q) x /= l;
  if (q[3] < 0) for (double& x : q) x = -x;
  return q;
}
}  // namespace

ArgSpec S(double lo, double hi) {
  return {[](Scalar s) { return Type::scalar_of(s); },
          [lo, hi](std::mt19937_64& r, int) { return Lanes{std::uniform_real_distribution<double>(lo, hi)(r)}; }};
}
ArgSpec Sfix(std::vector<double> values) {
  return {[](Scalar s) { return Type::scalar_of(s); }, [values](std::mt19937_64&, int i) { return Lanes{values[size_t(i) % values.size()]}; }};
}
ArgSpec V(int n, double lo, double hi) {
  return {[n](Scalar s) { return Type::vector(n, s); }, [n, lo, hi](std::mt19937_64& r, int) {
            Lanes l;
            for (int k = 0; k < n; ++k) l.push_back(std::uniform_real_distribution<double>(lo, hi)(r));
            return l;
          }};
}
ArgSpec M(int rows, int cols, double lo, double hi) {
  return {[rows, cols](Scalar s) { return Type::matrix(rows, cols, s); }, [rows, cols, lo, hi](std::mt19937_64& r, int) {
            Lanes l;
            for (int k = 0; k < rows * cols; ++k) l.push_back(std::uniform_real_distribution<double>(lo, hi)(r));
            return l;
          }};
}
ArgSpec Q() { return {[](Scalar s) { return Type::quat(s); }, [](std::mt19937_64& r, int) { return random_unit_quat(r); }}; }
ArgSpec Qany() {
  return {[](Scalar s) { return Type::quat(s); }, [](std::mt19937_64& r, int) { return ref::scale(random_unit_quat(r), std::uniform_real_distribution<double>(0.5, 2)(r)); }};
}
ArgSpec T() {
  return {[](Scalar s) { return Type::transform(s); }, [](std::mt19937_64& r, int) {
            std::uniform_real_distribution<double> u(-2, 2);
            return ref::concat(Lanes{u(r), u(r), u(r)}, random_unit_quat(r));
          }};
}
ArgSpec R3() { return {[](Scalar s) { return Type::matrix(3, 3, s); }, [](std::mt19937_64& r, int) { return ref::qmatrix(random_unit_quat(r)); }}; }
ArgSpec R4() {
  return {[](Scalar s) { return Type::matrix(4, 4, s); }, [](std::mt19937_64& r, int) {
            Lanes m = ref::qmatrix(random_unit_quat(r)), out(16, 0.0);
            std::uniform_real_distribution<double> u(-2, 2);
            for (int i = 0; i < 3; ++i) { for (int j = 0; j < 3; ++j) out[size_t(4 * i + j)] = m[size_t(3 * i + j)]; out[size_t(4 * i + 3)] = u(r); }
            out[15] = 1;
            return out;
          }};
}
ArgSpec TRS() {
  return {[](Scalar s) { return Type::matrix(4, 4, s); }, [](std::mt19937_64& r, int) {
            Lanes m = ref::qmatrix(random_unit_quat(r)), out(16, 0.0);
            std::uniform_real_distribution<double> u(-2, 2), sc(0.5, 2);
            double s[3] = {sc(r), sc(r), sc(r)};
            for (int i = 0; i < 3; ++i) { for (int j = 0; j < 3; ++j) out[size_t(4 * i + j)] = m[size_t(3 * i + j)] * s[j]; out[size_t(4 * i + 3)] = u(r); }
            out[15] = 1;
            return out;
          }};
}
ArgSpec Sym3() {
  return {[](Scalar s) { return Type::matrix(3, 3, s); }, [](std::mt19937_64& r, int) {
            std::uniform_real_distribution<double> u(-1, 1);
            Lanes m(9);
            for (int i = 0; i < 3; ++i) for (int j = i; j < 3; ++j) m[size_t(3 * i + j)] = m[size_t(3 * j + i)] = u(r);
            return m;
          }};
}
ArgSpec Unit3() {
  return {[](Scalar s) { return Type::vector(3, s); }, [](std::mt19937_64& r, int) {
            std::normal_distribution<double> g;
            Lanes v{g(r), g(r), g(r)};
            return ref::scale(v, 1.0 / std::sqrt(ref::dot(v, v)));
          }};
}
ArgSpec Fixed(Type t, std::vector<double> values) {
  return {[t](Scalar) { return t; }, [t, values](std::mt19937_64&, int i) { return repeat(values[size_t(i) % values.size()], lane_count(t)); }};
}
ArgSpec Int(std::vector<double> values) { return Fixed(Type::scalar_of(Scalar::I32), std::move(values)); }
ArgSpec UInt(std::vector<double> values) { return Fixed(Type::scalar_of(Scalar::U32), std::move(values)); }
ArgSpec Bools() { return Fixed(Type::scalar_of(Scalar::Bool), {1, 0}); }

namespace ref {
double dot(const Lanes& a, const Lanes& b) { double s = 0; for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i]; return s; }
Lanes cross(const Lanes& a, const Lanes& b) { return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}; }
Lanes add(Lanes a, const Lanes& b) { for (size_t i = 0; i < a.size(); ++i) a[i] += b[i]; return a; }
Lanes sub(Lanes a, const Lanes& b) { for (size_t i = 0; i < a.size(); ++i) a[i] -= b[i]; return a; }
Lanes scale(Lanes a, double s) { for (double& x : a) x *= s; return a; }
Lanes matmul(const Lanes& a, int r, int k, const Lanes& b, int c) {
  Lanes o(size_t(r * c), 0.0);
  for (int i = 0; i < r; ++i) for (int j = 0; j < c; ++j) for (int t = 0; t < k; ++t) o[size_t(i * c + j)] += a[size_t(i * k + t)] * b[size_t(t * c + j)];
  return o;
}
Lanes transpose(const Lanes& a, int r, int c) { Lanes o(a.size()); for (int i = 0; i < r; ++i) for (int j = 0; j < c; ++j) o[size_t(j * r + i)] = a[size_t(i * c + j)]; return o; }
double det(const Lanes& a, int n) {
  if (n == 1) return a[0];
  double s = 0;
  for (int k = 0; k < n; ++k) {
    Lanes minor;
    for (int i = 1; i < n; ++i) for (int j = 0; j < n; ++j) if (j != k) minor.push_back(a[size_t(i * n + j)]);
    s += (k % 2 ? -1 : 1) * a[size_t(k)] * det(minor, n - 1);
  }
  return s;
}
Lanes inverse(const Lanes& a, int n) {  // adjugate / determinant
  Lanes o(size_t(n * n));
  double d = det(a, n);
  for (int i = 0; i < n; ++i) for (int j = 0; j < n; ++j) {
    Lanes minor;
    for (int r = 0; r < n; ++r) for (int c = 0; c < n; ++c) if (r != j && c != i) minor.push_back(a[size_t(r * n + c)]);
    o[size_t(i * n + j)] = ((i + j) % 2 ? -1 : 1) * det(minor, n - 1) / d;
  }
  return o;
}
Lanes qmul(const Lanes& a, const Lanes& b) {
  Lanes v = add(add(scale(slice(b, 0, 3), a[3]), scale(slice(a, 0, 3), b[3])), cross(slice(a, 0, 3), slice(b, 0, 3)));
  return {v[0], v[1], v[2], a[3] * b[3] - dot(slice(a, 0, 3), slice(b, 0, 3))};
}
Lanes qconj(const Lanes& q) { return {-q[0], -q[1], -q[2], q[3]}; }
Lanes qrotate(const Lanes& q, const Lanes& v) { return slice(qmul(qmul(q, {v[0], v[1], v[2], 0}), qconj(q)), 0, 3); }
Lanes qmatrix(const Lanes& q) {
  Lanes m;
  for (int j = 0; j < 3; ++j) {}
  Lanes cols[3];
  for (int j = 0; j < 3; ++j) { Lanes e{0, 0, 0}; e[size_t(j)] = 1; cols[j] = qrotate(q, e); }
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) m.push_back(cols[j][size_t(i)]);
  return m;
}
Lanes axis_angle(const Lanes& axis, double angle) { return {axis[0] * std::sin(angle / 2), axis[1] * std::sin(angle / 2), axis[2] * std::sin(angle / 2), std::cos(angle / 2)}; }
Lanes slice(const Lanes& a, int from, int n) { return Lanes(a.begin() + from, a.begin() + from + n); }
Lanes concat(const Lanes& a, const Lanes& b) { Lanes o = a; o.insert(o.end(), b.begin(), b.end()); return o; }
double diff(const Lanes& a, const Lanes& b) {
  double m = a.size() == b.size() ? 0 : 1e300;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}
double orthogonality(const Lanes& q, int n) {
  Lanes qtq = matmul(transpose(q, n, n), n, n, q, n);
  double m = 0;
  for (int i = 0; i < n; ++i) for (int j = 0; j < n; ++j) m = std::max(m, std::fabs(qtq[size_t(i * n + j)] - (i == j ? 1 : 0)));
  return m;
}
}  // namespace ref

std::vector<FwdCase> all_forward_cases() {
  std::vector<FwdCase> cases = math_cases();
  for (auto& more : {geometry_cases(), random_cases()}) cases.insert(cases.end(), more.begin(), more.end());
  return cases;
}

TEST_CASE("every builtin call has forward-value cases") {
  std::set<std::string> covered;
  for (auto* list : {&math_cases, &geometry_cases, &random_cases})
    for (const FwdCase& c : (*list)()) covered.insert(c.builtin);
  // Builtins whose arguments make_builtin_kernel cannot pass (arrays) or that have effects
  // are checked by their own kernels in intrinsics.cpp and debug.cpp; the mesh traversals
  // against brute force in tests/geometry.
  const std::set<std::string> elsewhere = {"sample_cdf", "lower_bound", "block_dim", "breakpoint", "expect_near",
                                           "mesh_closest_face", "mesh_first_hit", "mesh_furthest_face",
                                           "mesh_ray_count", "mesh_ray_any", "mesh_sign_rays", "mesh_sign_parity",
                                           "mesh_closest_sign_normal", "mesh_winding_number", "bvh_next_leaf_box",
                                           "bvh_next_leaf_ray"};
  for (int b = 0; b < ir::kBuiltinCount; ++b) {
    const char* name = ir::builtin_info(ir::Builtin(b)).name;
    CHECK_MESSAGE((covered.count(name) || elsewhere.count(name)), "no forward-value case for builtin " << name);
  }
}

TEST_CASE("forward values of every builtin match float64 references (float64, float32, integers)") {
  struct Item {
    const FwdCase* c;
    Scalar scalar;
    std::unique_ptr<KernelDef> kernel;
  };
  std::vector<FwdCase> cases = all_forward_cases();
  ModuleOptions o;
  o.enable_adjoint = false;  // values only here (nvrtc.cpp compiles the adjoints)
  kjit::module("builtins_forward").set_options(o);
  std::vector<Item> items;
  int counter = 0;
  for (const FwdCase& c : cases) {
    for (Scalar s : c.variants) {
      std::vector<Type> types;
      for (const ArgSpec& a : c.args) types.push_back(a.type(s));
      auto b = ir::find_builtin(c.builtin);
      REQUIRE_MESSAGE(b, c.builtin);
      items.push_back({&c, s, make_builtin_kernel("fwd::" + c.builtin + "_" + std::to_string(counter++), "builtins_forward", *b, types)});
    }
  }
  std::mt19937_64 rng(7);
  const int n = 12;
  for (Item& item : items) {
    const FwdCase& c = *item.c;
    std::vector<LaunchArg> args;
    std::vector<NdArray> inputs;
    for (const ArgSpec& a : c.args) {
      NdArray x = NdArray::zeros(a.type(item.scalar), {n});
      for (int i = 0; i < n; ++i) write_lanes(x, i, a.gen(rng, i));
      inputs.push_back(x);
      args.push_back(x);
    }
    const Type out_type = item.kernel->params().back().type.element();
    NdArray out = NdArray::zeros(out_type, {n});
    args.push_back(out);
    launch(*item.kernel, n, args);
    const bool f32 = item.scalar == Scalar::F32;
    double worst = 0;
    std::string detail;
    for (int i = 0; i < n; ++i) {
      Inputs in;
      for (const NdArray& x : inputs) in.push_back(read_lanes(x, i));  // what the kernel saw
      Lanes got = read_lanes(out, i);
      double err;
      if (c.ref) {
        Lanes want = c.ref(in);
        err = 0;
        for (size_t k = 0; k < want.size() && k < got.size(); ++k) {
          if (std::isnan(want[k]) && std::isnan(got[k])) continue;
          if (std::isinf(want[k]) && want[k] == got[k]) continue;
          err = std::max(err, std::fabs(want[k] - got[k]) / std::max(1.0, std::fabs(want[k])));
        }
        if (want.size() != got.size()) err = 1e300;
        if (err > worst) {
          worst = err;
          detail = "element " + std::to_string(i) + ": got";
          for (double g : got) detail += " " + std::to_string(g);
          detail += ", want";
          for (double w : want) detail += " " + std::to_string(w);
        }
      } else {
        err = c.check(in, got);
        if (err > worst) worst = err, detail = "element " + std::to_string(i);
      }
    }
    double tol = f32 ? c.tol32 : (item.scalar == Scalar::F64 ? c.tol64 : 0.0);
    INFO(item.kernel->name() << " (" << std::string(ir::scalar_name(item.scalar)) << "): worst error " << worst << " > " << tol << "; " << detail);
    CHECK(worst <= tol);
  }
}

}  // namespace kjit::test
