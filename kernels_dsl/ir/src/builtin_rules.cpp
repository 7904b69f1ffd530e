// Builtin table: names, categories, differentiability, the type rule of every builtin, the
// rules of the operators, and the Warp-name counterparts (builtins and intrinsics).
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "builtin_rules.hpp"
#include "kjit/error.hpp"

namespace kjit::ir {

namespace rules {

std::string list(const Type* a, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + a[i].str();
  return s.empty() ? "nothing" : s;
}

std::optional<Type> fail(std::string* error, const char* name, const char* expected, const Type* a,
                         int n) {
  *error = std::string(name) + " expects " + expected + ", got " + list(a, n);
  return std::nullopt;
}

Type result_struct(const std::string& cpp_name, const char* chunk, std::vector<ResultField> fields) {
  static std::mutex mutex;
  static auto* ids = new std::unordered_map<std::string, uint16_t>;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = ids->find(cpp_name);
  if (it != ids->end()) return Type::structure(it->second);
  StructInfo info;
  info.name = cpp_name;
  info.cpp_name = cpp_name;
  info.prelude_chunk = chunk;
  for (const ResultField& f : fields) info.fields.push_back(StructField{f.name, f.type, 0});
  layout_struct(info);
  uint16_t id = register_struct(std::move(info));
  ids->emplace(cpp_name, id);
  return Type::structure(id);
}

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
    if (x.scalar == y.scalar && numeric(x) && numeric(y)) {
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
    if (numeric(y) && y.is_vector() && x.is_scalar() && x.scalar == y.scalar) return y;
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

KJIT_RULE(select) {
  if (n == 3 && a[0].is_bool() && (value(a[1]) || a[1].is_struct()) && a[1] == a[2]) return a[1];
  return fail(error, fn, "a bool and two values of the same type", a, n);
}

}  // namespace rules

namespace {
using RuleFn = std::optional<Type> (*)(const char*, const Type*, int, std::string*);
struct Entry {
  BuiltinInfo info;
  RuleFn rule;
};
// The IR reads a record's fields for one fact: a builtin with an adjoint is differentiable
// (each adjoint field expands to `true ||`, the rest to nothing).
const Entry kBuiltins[] = {
#define KJ_OPERATOR(op)
#define KJ_OPERATOR_ON_INTEGERS(op)
#define KJ_FORWARD(function, chunk)
#define KJ_ADJOINT(function, chunk) true ||
#define KJ_LINEAR_ADJOINT(function, chunk) true ||
#define KJ_TANGENT(rule)
#define KJ_TANGENT_FUNCTION(function, chunk)
#define KJ_TAKES_SITE()
#define KJIT_BUILTIN(E, name, category, rule, ...) \
  {{#name, BuiltinCategory::category, __VA_ARGS__ false}, &rules::rule},
#include "kjit/ir/builtins.def"
};
static_assert(sizeof(kBuiltins) / sizeof(kBuiltins[0]) == size_t(kBuiltinCount));

struct Intrinsic {
  const char* warp;
  const char* spelling;
  const char* statement;
  bool differentiable;
};
constexpr bool Yes = true;
constexpr bool No = false;
const Intrinsic kIntrinsics[] = {
#define KJIT_INTRINSIC(warp, spelling, statement, diff) {warp, spelling, statement, diff},
#include "kjit/ir/intrinsics.def"
#undef KJIT_INTRINSIC
};
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

std::vector<Counterpart> all_counterparts() {
  std::vector<Counterpart> out;
  for (int i = 0; i < kBuiltinCount; ++i) {
    const BuiltinInfo& b = kBuiltins[i].info;
    out.push_back(Counterpart{b.name, b.name, b.differentiable, Builtin(i), "Call"});
  }
  for (const Intrinsic& x : kIntrinsics)
    out.push_back(Counterpart{x.warp, x.spelling, x.differentiable, std::nullopt, x.statement});
  return out;
}

std::optional<Counterpart> find_counterpart(std::string_view warp_name) {
  for (const Counterpart& c : all_counterparts())
    if (warp_name == c.warp_name) return c;
  return std::nullopt;
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
