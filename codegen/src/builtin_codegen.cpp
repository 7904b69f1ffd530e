// The builtin codegen table: one row per builtin, in builtins.def order.
#include "builtin_codegen.hpp"

#include <iterator>

namespace kjit::codegen {

namespace {
using B = ir::Builtin;
constexpr BuiltinCodegen kTable[] = {
    // id            op     function          chunk        adjoint            adjoint chunk
    {B::Add,         "+",   nullptr,          nullptr,     "kj::adj_add",     "arith", false},
    {B::Sub,         "-",   nullptr,          nullptr,     "kj::adj_sub",     "arith", false},
    {B::Mul,         "*",   nullptr,          nullptr,     "kj::adj_mul",     "arith", false},
    {B::Div,         "/",   nullptr,          nullptr,     "kj::adj_div",     "arith", false},
    {B::Mod,         "%",   "kj::mod",        "mod",       "kj::adj_mod",     "mod",   true},
    {B::Neg,         "-",   nullptr,          nullptr,     "kj::adj_neg",     "arith", false},
    {B::Pos,         "+",   nullptr,          nullptr,     "kj::adj_pos",     "arith", false},
    {B::FloorDiv,    nullptr, "kj::floordiv", "floordiv",  nullptr,           nullptr, false},
    {B::BitAnd,      "&",   nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::BitOr,       "|",   nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::BitXor,      "^",   nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::LShift,      "<<",  nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::RShift,      ">>",  nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::Invert,      "~",   nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::Unot,        "!",   nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::LogicalAnd,  "&&",  nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::LogicalOr,   "||",  nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::Lt,          "<",   nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::Le,          "<=",  nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::Gt,          ">",   nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::Ge,          ">=",  nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::Eq,          "==",  nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::Ne,          "!=",  nullptr,          nullptr,     nullptr,           nullptr, false},
    {B::Sin,         nullptr, "kj::sin",      "math",      "kj::adj_sin",     "math",  false},
    {B::Cos,         nullptr, "kj::cos",      "math",      "kj::adj_cos",     "math",  false},
    {B::Tan,         nullptr, "kj::tan",      "math",      "kj::adj_tan",     "math",  false},
    {B::Exp,         nullptr, "kj::exp",      "math",      "kj::adj_exp",     "math",  false},
    {B::Log,         nullptr, "kj::log",      "math",      "kj::adj_log",     "math",  false},
    {B::Sqrt,        nullptr, "kj::sqrt",     "math",      "kj::adj_sqrt",    "math",  false},
    {B::Pow,         nullptr, "kj::pow",      "math",      "kj::adj_pow",     "math",  false},
    {B::Abs,         nullptr, "kj::abs",      "abs",       "kj::adj_abs",     "abs",   false},
    {B::Min,         nullptr, "kj::min",      "minmax",    "kj::adj_min",     "minmax", false},
    {B::Max,         nullptr, "kj::max",      "minmax",    "kj::adj_max",     "minmax", false},
    {B::Floor,       nullptr, "kj::floor",    "math",      nullptr,           nullptr, false},
    {B::Ceil,        nullptr, "kj::ceil",     "math",      nullptr,           nullptr, false},
    {B::Clamp,       nullptr, "kj::clamp",    "clamp",     "kj::adj_clamp",   "clamp", false},
    {B::Where,       "?:",  nullptr,          nullptr,     "kj::adj_where",   "select", false},
    {B::Dot,         nullptr, "kj::dot",      "vec",       "kj::adj_dot",     "dot",   false},
    {B::Cross,       nullptr, "kj::cross",    "cross",     "kj::adj_cross",   "cross", false},
    {B::Length,      nullptr, "kj::length",   "length",    "kj::adj_length",  "length", false},
    {B::Normalize,   nullptr, "kj::normalize", "normalize", "kj::adj_normalize", "normalize", false},
};

constexpr bool rows_in_order() {
  for (size_t i = 0; i < std::size(kTable); ++i)
    if (size_t(kTable[i].id) != i) return false;
  return true;
}
static_assert(std::size(kTable) == size_t(ir::kBuiltinCount),
              "every builtin of builtins.def needs a row in the codegen table");
static_assert(rows_in_order(), "codegen table rows must follow builtins.def order");
}  // namespace

const BuiltinCodegen& builtin_codegen(ir::Builtin b) { return kTable[size_t(b)]; }

}  // namespace kjit::codegen
