// The builtin codegen table: the fields of each record of builtins.def, as codegen reads them.
#include "builtin_codegen.hpp"

#include <iterator>

#include "tangent_rules.hpp"

namespace kjit::codegen {

namespace {
using B = ir::Builtin;
// Each record of builtins.def, its fields applied in order to an empty row.
constexpr BuiltinCodegen kTable[] = {
#define KJ_OPERATOR(op) .with_operator(op, false)
#define KJ_OPERATOR_ON_INTEGERS(op) .with_operator(op, true)
#define KJ_FORWARD(function, chunk) .with_forward(function, chunk)
#define KJ_ADJOINT(function, chunk) .with_adjoint(function, chunk, false)
#define KJ_LINEAR_ADJOINT(function, chunk) .with_adjoint(function, chunk, true)
#define KJ_TANGENT(rule) .with_tangent(&tangent_rules::rule)
#define KJ_TANGENT_FUNCTION(function, chunk) .with_tangent_function(function, chunk)
#define KJ_TAKES_SITE() .with_site()
#define KJIT_BUILTIN(E, name, category, rule, ...) BuiltinCodegen{B::E} __VA_ARGS__,
#include "kjit/ir/builtins.def"
};
static_assert(std::size(kTable) == size_t(ir::kBuiltinCount));

constexpr bool each_row_computes() {
  for (const BuiltinCodegen& g : kTable)
    if (!g.op && !g.function) return false;
  return true;
}
static_assert(each_row_computes(), "every builtin needs KJ_OPERATOR or KJ_FORWARD");
constexpr bool tangents_match_adjoints() {
  for (const BuiltinCodegen& g : kTable)
    if ((g.adjoint != nullptr) != g.tangent.set) return false;
  return true;
}
// A differentiable builtin without a tangent rule would give the tangent kernel a silent
// zero; one with a tangent and no adjoint a silent zero gradient.
static_assert(tangents_match_adjoints(),
              "a builtin with KJ_ADJOINT needs KJ_TANGENT, and only such a builtin");
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
