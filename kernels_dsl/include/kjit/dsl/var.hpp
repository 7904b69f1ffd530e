// kjit/dsl/var.hpp — Var<T>: a mutable local variable whose changes inside If, For and While
// regions are traced as loads and stores, and are differentiated correctly.
#pragma once

#include "kjit/dsl/value.hpp"

namespace kjit::dsl {

/// A mutable local. Reading it (in any expression, or by copying it into a Value<T>) reads
/// its current value; assigning it stores. Declare one before a region and assign it inside
/// to carry state through branches and loop iterations.
template <class T>
class VarHandle : public Value<T> {
  using Base = Value<T>;

 public:
  /// A variable holding zero.
  explicit VarHandle(Loc loc = Loc::here()) {
    this->declare_var(Base::ir_type(), detail::emit(ir::Op::Construct, Base::ir_type(), {}, 0, loc), loc);
  }
  /// A variable holding `init`'s current value.
  VarHandle(const Value<T>& init, Loc loc = Loc::here()) {
    ir::ValueId v = init.use(loc);
    this->declare_var(Base::ir_type(), v, loc);
  }
  /// A variable holding a literal.
  template <class P, std::enable_if_t<detail::is_literal_for_v<T, P>, int> = 0>
  VarHandle(P literal, Loc loc = Loc::here()) {
    this->declare_var(Base::ir_type(), detail::make_literal<T>(literal, loc), loc);
  }
  /// A new variable holding `o`'s current value (C++ value semantics).
  VarHandle(const VarHandle& o, Loc loc = Loc::here()) : Base() {  // a new variable: nothing of o's handle
    this->declare_var(Base::ir_type(), o.use(loc), loc);
  }

  /// Stores a new value.
  VarHandle& operator=(const Value<T>& v) {
    Loc loc = detail::last_loc();
    this->store(v.use(loc), loc);
    return *this;
  }
  VarHandle& operator=(const VarHandle& v) { return *this = static_cast<const Value<T>&>(v); }
  template <class P, std::enable_if_t<detail::is_literal_for_v<T, P>, int> = 0>
  VarHandle& operator=(P literal) {
    Loc loc = detail::last_loc();
    this->store(detail::make_literal<T>(literal, loc), loc);
    return *this;
  }
  template <class U, std::enable_if_t<!std::is_same_v<U, T>, int> = 0>
  VarHandle& operator=(const Value<U>&) {
    static_assert(std::is_same_v<U, T>,
                  "kjit: cannot assign a value of another element type to this Var; convert "
                  "it first, e.g. Float(i) or Int(x)");
    return *this;
  }
};

/// Var<Float>, Var<Vec3f>: a mutable local of the handle's element type.
template <class T>
using Var = VarHandle<detail::element_of_t<T>>;

/// Deduces the element type: `auto w = var(v[i]);`
template <class T>
VarHandle<T> var(const Value<T>& init, Loc loc = Loc::here()) {
  return VarHandle<T>(init, loc);
}

}  // namespace kjit::dsl
