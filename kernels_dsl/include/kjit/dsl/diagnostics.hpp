// kjit/dsl/diagnostics.hpp — the names of kjit's compile-time advice for kernel code that
// cannot work: catch-all overloads return one of these types, whose instantiation fails with
// kjit's message (the definitions, with the messages, are at the end of kjit/dsl.hpp).
//
// Why a return type and not a static_assert in the catch-all's body: GCC instantiates
// function bodies at the end of the file, so a body's message comes after every error the
// call's unusable result causes (40 lines later). A call needs its return type complete at
// once, so the class's static_assert is the first error, "required from" the user's line.
// Why the definitions live in kjit/dsl.hpp: GCC prefixes the first error in a header with
// the chain of includes that reached it, one line per header; in the header kernel files
// include, the message is the fourth line of the output (the fifth through <kjit/kjit.hpp>).
#pragma once

namespace kjit::dsl::detail {

/// False for every T...: a static_assert on it fails only when its template is instantiated.
template <class... T> constexpr bool always_false_v = false;

/// `a OP b` with operands of different element types (Int * Double); Op is the operator's
/// character ('l' for <=, 'g' for >=, '=' for ==, '!' for !=).
template <char Op, class... T> struct MixedOperands;
/// `v + s` or `v - s`: a vector, matrix or quaternion and a scalar.
template <class... T> struct AddScalarToVector;
/// `a += x` (or -=, *=, /=, %=) on a plain, immutable value.
template <char Op, class... T> struct CompoundNeedsVar;
/// `w += x` on a Var whose element type x does not have.
template <char Op, class... T> struct CompoundMixedTypes;
/// `While(k < 3, ...)`: a condition that would be evaluated once.
template <class... T> struct WhileNeedsLambda;
/// A device function whose body returns something other than DSL values (a C++ number).
template <class... T> struct FuncReturnsNoValue;
/// `Int tid = tid();`: the initializer calls the integer being declared.
template <class... T> struct CallsTheVariable;

}  // namespace kjit::dsl::detail
