// kjit/dsl.hpp — everything a kernel header needs: value handles, arrays, math, geometry,
// random numbers, control flow, device functions, structs, launch indices and KJIT_KERNEL.
// Kernels use `using namespace kjit::dsl;`. Light on purpose: it includes no <string>, no
// containers, and none of the IR's headers (tests/lint measures it with the compiler).
#pragma once

#include "kjit/dsl/aliases.hpp"
#include "kjit/dsl/array.hpp"
#include "kjit/dsl/control_flow.hpp"
#include "kjit/dsl/functions.hpp"
#include "kjit/dsl/geometry.hpp"
#include "kjit/dsl/launch_index.hpp"
#include "kjit/dsl/linalg.hpp"
#include "kjit/dsl/math.hpp"
#include "kjit/dsl/operators.hpp"
#include "kjit/dsl/random.hpp"
#include "kjit/dsl/structs.hpp"
#include "kjit/dsl/utility.hpp"
#include "kjit/dsl/value.hpp"
#include "kjit/dsl/var.hpp"
#include "kjit/dsl/kernel_handle.hpp"
#include "kjit/types.hpp"

// The messages of kjit's compile-time advice (kjit/dsl/diagnostics.hpp says why they are here
// and not in a header of their own: each include level is one more line before the message).
namespace kjit::dsl::detail {
#define KJIT_DSL_MIXED(op, c, example)                                                          \
  template <class... T> struct MixedOperands<c, T...> {                                         \
    static_assert(always_false_v<T...>, "kjit: operands of " #op " have different element "      \
                                        "types; convert one explicitly, e.g. " example);        \
  };
KJIT_DSL_MIXED(+, '+', "Float(i) + x")
KJIT_DSL_MIXED(-, '-', "Float(i) - x")
KJIT_DSL_MIXED(*, '*', "Double(i) * x")
KJIT_DSL_MIXED(/, '/', "x / Double(n)")
KJIT_DSL_MIXED(%, '%', "Int(x) % n")
KJIT_DSL_MIXED(<, '<', "Float(i) < x")
KJIT_DSL_MIXED(<=, 'l', "Float(i) <= x")
KJIT_DSL_MIXED(>, '>', "Float(i) > x")
KJIT_DSL_MIXED(>=, 'g', "Float(i) >= x")
KJIT_DSL_MIXED(==, '=', "Float(i) == x")
KJIT_DSL_MIXED(!=, '!', "Float(i) != x")
#undef KJIT_DSL_MIXED
template <class... T> struct AddScalarToVector {
  static_assert(always_false_v<T...>,
                "kjit: cannot add a scalar to a vector or matrix (or subtract one); build a "
                "vector, e.g. v + Vec3f(s)");
};
template <char Op, class... T> struct CompoundNeedsVar {
  static_assert(always_false_v<T...>,
                "kjit: `+=` (and -=, *=, /=, %=) needs a Var<T>: declare `Var<Float> a = ...` "
                "(a plain Float is immutable; `a = a + x` rebinds it, outside loops and branches only)");
};
template <class... T> struct CallsTheVariable {
  static_assert(always_false_v<T...>,
                "kjit: `Int tid = tid();` calls the variable being declared (C++ puts a name in "
                "scope before its initializer): name it otherwise, `Int i = tid();`, or qualify "
                "the builtin, `Int tid = kjit::dsl::tid();`");
};
template <char Op, class... T> struct CompoundMixedTypes {
  static_assert(always_false_v<T...>,
                "kjit: the right side of `+=` (or -=, *=, /=, %=) has another element type than "
                "the Var; convert it explicitly, e.g. w += Double(i)");
};
template <class... T> struct WhileNeedsLambda {
  static_assert(always_false_v<T...>,
                "kjit: the While condition is a lambda returning a Bool, evaluated before every "
                "iteration: While([&] { return k < 3; }, [&] { ... })");
};
template <class... T> struct FuncReturnsNoValue {
  static_assert(always_false_v<T...>,
                "kjit: a device function returns nothing, a DSL value, or several of them as a "
                "std::tuple, std::pair or struct of DSL values (Float, Vec3f, ...)");
};
}  // namespace kjit::dsl::detail
