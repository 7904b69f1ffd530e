// Builtin table: names, categories, differentiability, and the type rule of every builtin.
#include <string>
#include <unordered_map>

#include "kjit/error.hpp"
#include "kjit/ir/builtins.hpp"

namespace kjit::ir {

/// Type rules: each returns the result type, or nullopt with *error set.
namespace rules {
namespace {

std::string list(const Type* a, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + a[i].str();
  return s.empty() ? "nothing" : s;
}
std::optional<Type> fail(std::string* error, const char* name, const char* expected,
                         const Type* a, int n) {
  *error = std::string(name) + " expects " + expected + ", got " + list(a, n);
  return std::nullopt;
}
bool value(const Type& t) { return !t.is_array() && !t.is_void() && t.shape != Shape::Struct; }
bool numeric(const Type& t) { return value(t) && t.scalar != Scalar::Bool; }
bool numeric_scalar(const Type& t) { return t.is_scalar() && t.scalar != Scalar::Bool; }
bool integer_scalar(const Type& t) { return t.is_scalar() && t.is_integer(); }
bool float_scalar(const Type& t) { return t.is_scalar() && t.is_float(); }
bool float_vector(const Type& t) { return t.is_vector() && t.is_float(); }
Type bool_type() { return Type::scalar_of(Scalar::Bool); }

}  // namespace

#define KJIT_RULE(name) \
  std::optional<Type> name(const char* fn, const Type* a, int n, std::string* error)

KJIT_RULE(arith) {
  if (n == 2 && numeric(a[0]) && a[0] == a[1]) return a[0];
  return fail(error, fn, "two numeric values of the same type", a, n);
}

KJIT_RULE(mul) {
  if (n == 2) {
    const Type &x = a[0], &y = a[1];
    if (numeric_scalar(x) && x == y) return x;
    if (numeric(x) && !x.is_scalar() && y.is_scalar() && y.scalar == x.scalar) return x;
    if (numeric(y) && !y.is_scalar() && x.is_scalar() && x.scalar == y.scalar) return y;
    if (x.scalar == y.scalar && numeric(x)) {
      if (x.is_matrix() && y.is_vector() && x.cols == y.rows) return Type::vector(x.rows, x.scalar);
      if (x.is_vector() && y.is_matrix() && x.rows == y.rows) return Type::vector(y.cols, x.scalar);
      if (x.is_matrix() && y.is_matrix() && x.cols == y.rows)
        return Type::matrix(x.rows, y.cols, x.scalar);
      if (x.shape == Shape::Quat && x == y) return x;
      if (x.shape == Shape::Transform && x == y) return x;
    }
  }
  return fail(error, fn,
              "scalars of one type, a vector/matrix and its scalar, or matrix/vector products "
              "of matching sizes",
              a, n);
}

KJIT_RULE(div) {
  if (n == 2) {
    const Type &x = a[0], &y = a[1];
    if (numeric_scalar(x) && x == y) return x;
    if (numeric(x) && !x.is_scalar() && y.is_scalar() && y.scalar == x.scalar) return x;
    if (numeric(y) && !y.is_scalar() && x.is_scalar() && x.scalar == y.scalar) return y;
  }
  return fail(error, fn, "scalars of one type, or a vector/matrix and its scalar", a, n);
}

KJIT_RULE(numeric_scalar_binary) {
  if (n == 2 && numeric_scalar(a[0]) && a[0] == a[1]) return a[0];
  return fail(error, fn, "two numeric scalars of the same type", a, n);
}

KJIT_RULE(numeric_unary) {
  if (n == 1 && numeric(a[0])) return a[0];
  return fail(error, fn, "one numeric value", a, n);
}

KJIT_RULE(integer_binary) {
  if (n == 2 && integer_scalar(a[0]) && a[0] == a[1]) return a[0];
  return fail(error, fn, "two integers of the same type", a, n);
}

KJIT_RULE(integer_unary) {
  if (n == 1 && integer_scalar(a[0])) return a[0];
  return fail(error, fn, "one integer", a, n);
}

KJIT_RULE(truth_unary) {
  if (n == 1 && a[0].is_scalar() && (a[0].is_bool() || a[0].is_integer())) return bool_type();
  return fail(error, fn, "a bool or an integer", a, n);
}

KJIT_RULE(logical_binary) {
  if (n == 2 && a[0].is_bool() && a[1].is_bool()) return bool_type();
  return fail(error, fn, "two bools", a, n);
}

KJIT_RULE(ordered_compare) {
  if (n == 2 && numeric_scalar(a[0]) && a[0] == a[1]) return bool_type();
  return fail(error, fn, "two numeric scalars of the same type", a, n);
}

KJIT_RULE(equality_compare) {
  if (n == 2 && value(a[0]) && a[0] == a[1]) return bool_type();
  return fail(error, fn, "two values of the same type", a, n);
}

KJIT_RULE(float_unary) {
  if (n == 1 && float_scalar(a[0])) return a[0];
  return fail(error, fn, "one floating-point scalar", a, n);
}

KJIT_RULE(float_binary) {
  if (n == 2 && float_scalar(a[0]) && a[0] == a[1]) return a[0];
  return fail(error, fn, "two floating-point scalars of the same type", a, n);
}

KJIT_RULE(numeric_same_binary) {
  if (n == 2 && numeric(a[0]) && !a[0].is_matrix() && a[0] == a[1]) return a[0];
  return fail(error, fn, "two numeric scalars or vectors of the same type", a, n);
}

KJIT_RULE(numeric_same_ternary) {
  if (n == 3 && numeric_scalar(a[0]) && a[0] == a[1] && a[0] == a[2]) return a[0];
  return fail(error, fn, "three numeric scalars of the same type", a, n);
}

KJIT_RULE(select) {
  if (n == 3 && a[0].is_bool() && value(a[1]) && a[1] == a[2]) return a[1];
  return fail(error, fn, "a bool and two values of the same type", a, n);
}

KJIT_RULE(dot) {
  if (n == 2 && numeric(a[0]) && (a[0].is_vector() || a[0].shape == Shape::Quat) && a[0] == a[1])
    return Type::scalar_of(a[0].scalar);
  return fail(error, fn, "two vectors of the same type", a, n);
}

KJIT_RULE(cross) {
  if (n == 2 && numeric(a[0]) && a[0].is_vector() && a[0].rows == 3 && a[0] == a[1]) return a[0];
  return fail(error, fn, "two 3-vectors of the same type", a, n);
}

KJIT_RULE(float_vector_norm) {
  if (n == 1 && float_vector(a[0])) return Type::scalar_of(a[0].scalar);
  return fail(error, fn, "one floating-point vector", a, n);
}

KJIT_RULE(float_vector_unary) {
  if (n == 1 && float_vector(a[0])) return a[0];
  return fail(error, fn, "one floating-point vector", a, n);
}
#undef KJIT_RULE

}  // namespace rules

namespace {
using RuleFn = std::optional<Type> (*)(const char*, const Type*, int, std::string*);
struct Entry {
  BuiltinInfo info;
  RuleFn rule;
};
constexpr bool Yes = true;
constexpr bool No = false;
const Entry kBuiltins[] = {
#define KJIT_BUILTIN(E, name, category, rule, diff) \
  {{name, BuiltinCategory::category, diff}, &rules::rule},
#include "kjit/ir/builtins.def"
#undef KJIT_BUILTIN
};
static_assert(sizeof(kBuiltins) / sizeof(kBuiltins[0]) == size_t(kBuiltinCount));
}  // namespace

const BuiltinInfo& builtin_info(Builtin b) {
  KJIT_CHECK(int(b) < kBuiltinCount, "builtin id out of range");
  return kBuiltins[int(b)].info;
}

std::optional<Builtin> find_builtin(std::string_view name) {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, Builtin>;
    for (int i = 0; i < kBuiltinCount; ++i) m->emplace(kBuiltins[i].info.name, Builtin(i));
    return m;
  }();
  auto it = index->find(name);
  if (it == index->end()) return std::nullopt;
  return it->second;
}

std::optional<Type> infer_builtin_type(Builtin b, const Type* args, int count,
                                       std::string* error) {
  const Entry& e = kBuiltins[int(b)];
  std::string local;
  return e.rule(e.info.name, args, count, error ? error : &local);
}

const char* atomic_op_name(AtomicOp op) {
  switch (op) {
    case AtomicOp::Add: return "add";
    case AtomicOp::Sub: return "sub";
    case AtomicOp::Min: return "min";
    case AtomicOp::Max: return "max";
    case AtomicOp::And: return "and";
    case AtomicOp::Or: return "or";
    case AtomicOp::Xor: return "xor";
    case AtomicOp::Exch: return "exch";
    case AtomicOp::Cas: return "cas";
  }
  return "?";
}

}  // namespace kjit::ir
