// Every differentiable builtin's adjoint against finite differences, float32 and float64, at
// random points and at edges. The table is checked against the builtin registry: a
// differentiable builtin without a row here fails the suite.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <random>
#include <set>

#include "builtin_kernel.hpp"
#include "kjit/kjit.hpp"

using namespace kjit;
using ir::Scalar;
using ir::Type;

namespace {

/// One argument: its type (given the scalar of the variant), a random range, and optional
/// fixed values (cycled over the elements, all lanes equal) that probe edges.
struct Arg {
  std::function<Type(Scalar)> type;
  double lo = -1, hi = 1;
  std::vector<double> fixed;
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
      {"length", {V(3, 0.2, 1)}}, {"length", {V(2, 0.2, 1)}},
      {"normalize", {V(3, 0.2, 1)}},
  };
  return c;
}

/// A 1-D array of `n` elements of `t` whose lanes follow `arg`.
NdArray fill(const Type& t, const Arg& arg, int n, std::mt19937_64& rng) {
  NdArray a = NdArray::empty(t, {n});
  std::uniform_real_distribution<double> u(arg.lo, arg.hi);
  char* p = static_cast<char*>(a.data());
  for (int i = 0; i < n; ++i) {
    for (int l = 0; l < t.lanes(); ++l) {
      double v = arg.fixed.empty() ? u(rng) : arg.fixed[size_t(i) % arg.fixed.size()];
      char* q = p + size_t(i) * size_t(t.element_bytes()) + size_t(l) * size_t(ir::scalar_bytes(t.scalar));
      if (t.scalar == Scalar::F64) *reinterpret_cast<double*>(q) = v;
      else if (t.scalar == Scalar::F32) *reinterpret_cast<float*>(q) = float(v);
      else *reinterpret_cast<bool*>(q) = v != 0;
    }
  }
  return a;
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

TEST_CASE("builtin adjoints match finite differences (float64 and float32)") {
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
      items.push_back({&c, s, test::make_builtin_kernel("grad::" + c.builtin + "_" + std::to_string(counter++),
                                                        "builtin_gradients", *b, types)});
    }
  }
  std::mt19937_64 rng(42);
  const int n = 6;
  for (Item& item : items) {
    std::vector<LaunchArg> args;
    for (const Arg& a : item.c->args) args.push_back(fill(a.type(item.scalar), a, n, rng));
    const Type out = item.kernel->params().back().type.element();
    args.push_back(NdArray::zeros(out, {n}));
    GradCheckOptions o;
    GradCheckReport r = check_gradients(*item.kernel, n, args, o);
    INFO(item.kernel->name() << " (" << ir::scalar_name(item.scalar) << ")\n" << r.str());
    CHECK(r.passed());
    if (item.scalar == Scalar::F64)
      for (const GradCheckParam& p : r.params) CHECK(p.checked > 0);
  }
}
