// kjit/dsl/structs.hpp — user structs in kernels: KJIT_STRUCT declares a plain C++ struct
// (what host code fills and arrays hold) together with its kernel-side field accessors.
//
//   KJIT_STRUCT(Particle, (Float, mass), (Vec3f, pos), (Int, id));
//
// Fields are written with DSL or host element types (Float or float); a type with a comma
// needs an alias (Mat33f, not mat<3, 3, float>). A field may be an array, `(Array<Int>, buffer)`
// (Warp's array member): the host struct holds a kjit::ArrayRef set from an NdArray, and
// `q.buffer()` in a kernel is an Array handle. Declare structs at namespace scope. In a
// kernel, `p.mass()` reads a field of a Value<Particle> (a parameter, an array element, a
// Var); on a Var, `p.mass() = m` and `p.pos().y() += d` store into the variable. Gradients
// flow field by field (a struct of adjoints); the layout is C's, checked against the host's
// in the generated code.
#pragma once

#include <cstddef>
#include <initializer_list>

#include "kjit/dsl/array.hpp"
#include "kjit/dsl/preprocessor.hpp"
#include "kjit/dsl/value.hpp"

namespace kjit::dsl::detail {

/// What a struct's field accessor returns for a field of host type F: a Ref (assignable on a
/// Var), or for an array field the Array handle itself (read-only: its elements are not).
template <class F> struct field_handle { using type = Ref<F>; };
template <class T, int N> struct field_handle<ArrayRef<T, N>> { using type = ArrayHandle<T, N>; };
template <class F> using field_handle_t = typename field_handle<F>::type;

/// Field `name` of struct handle `self` (KJIT_STRUCT's accessors).
template <class F>
field_handle_t<F> field_access(const ValueBase& self, const ir::Type& struct_type, const char* name, Loc loc) {
  if constexpr (std::is_same_v<field_handle_t<F>, Ref<F>>) {
    return field_ref<F>(self, struct_type, name, loc);
  } else {
    PathStep step;
    step.kind = PathStep::Field;
    step.field = struct_field_index(struct_type, name, loc);
    return field_handle_t<F>(BoundTag{}, extract_step(self.use(loc), step, loc));
  }
}

/// One field of a KJIT_STRUCT as the host compiler lays it out.
struct HostField {
  const char* name;
  ir::Type type;
  size_t offset;
};
/// Registers the struct declared in the scope `pretty_function` names (its qualified name is
/// read from it); checks that the host layout is the C layout codegen assumes.
uint16_t register_user_struct(const char* pretty_function, size_t size, size_t align,
                              std::initializer_list<HostField> fields);

}  // namespace kjit::dsl::detail

// Preprocessor iteration over up to 24 (type, name) pairs.
#define KJIT_PP_COUNT(...) KJIT_PP_COUNT_(__VA_ARGS__, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define KJIT_PP_COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, N, ...) N
#define KJIT_PP_EACH(M, C, ...) KJIT_PP_CAT(KJIT_PP_EACH_, KJIT_PP_COUNT(__VA_ARGS__))(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_1(M, C, x) M(C, x)
#define KJIT_PP_EACH_2(M, C, x, ...) M(C, x) KJIT_PP_EACH_1(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_3(M, C, x, ...) M(C, x) KJIT_PP_EACH_2(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_4(M, C, x, ...) M(C, x) KJIT_PP_EACH_3(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_5(M, C, x, ...) M(C, x) KJIT_PP_EACH_4(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_6(M, C, x, ...) M(C, x) KJIT_PP_EACH_5(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_7(M, C, x, ...) M(C, x) KJIT_PP_EACH_6(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_8(M, C, x, ...) M(C, x) KJIT_PP_EACH_7(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_9(M, C, x, ...) M(C, x) KJIT_PP_EACH_8(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_10(M, C, x, ...) M(C, x) KJIT_PP_EACH_9(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_11(M, C, x, ...) M(C, x) KJIT_PP_EACH_10(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_12(M, C, x, ...) M(C, x) KJIT_PP_EACH_11(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_13(M, C, x, ...) M(C, x) KJIT_PP_EACH_12(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_14(M, C, x, ...) M(C, x) KJIT_PP_EACH_13(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_15(M, C, x, ...) M(C, x) KJIT_PP_EACH_14(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_16(M, C, x, ...) M(C, x) KJIT_PP_EACH_15(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_17(M, C, x, ...) M(C, x) KJIT_PP_EACH_16(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_18(M, C, x, ...) M(C, x) KJIT_PP_EACH_17(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_19(M, C, x, ...) M(C, x) KJIT_PP_EACH_18(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_20(M, C, x, ...) M(C, x) KJIT_PP_EACH_19(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_21(M, C, x, ...) M(C, x) KJIT_PP_EACH_20(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_22(M, C, x, ...) M(C, x) KJIT_PP_EACH_21(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_23(M, C, x, ...) M(C, x) KJIT_PP_EACH_22(M, C, __VA_ARGS__)
#define KJIT_PP_EACH_24(M, C, x, ...) M(C, x) KJIT_PP_EACH_23(M, C, __VA_ARGS__)

#define KJIT_STRUCT_HOST_TYPE(TYPE) ::kjit::dsl::detail::element_of_t<TYPE>
#define KJIT_STRUCT_MEMBER(C, PAIR) KJIT_STRUCT_MEMBER_ PAIR
#define KJIT_STRUCT_MEMBER_(TYPE, NAME) KJIT_STRUCT_HOST_TYPE(TYPE) NAME;
#define KJIT_STRUCT_FIELD(C, PAIR) KJIT_STRUCT_FIELD_ PAIR
#define KJIT_STRUCT_FIELD_(TYPE, NAME) \
  ::kjit::dsl::detail::HostField{#NAME, ::kjit::ir_type_of<KJIT_STRUCT_HOST_TYPE(TYPE)>(), offsetof(kjit_self, NAME)},
#define KJIT_STRUCT_ACCESSOR(C, PAIR) KJIT_STRUCT_ACCESSOR_ PAIR
#define KJIT_STRUCT_ACCESSOR_(TYPE, NAME)                                                            \
  ::kjit::dsl::detail::field_handle_t<KJIT_STRUCT_HOST_TYPE(TYPE)> NAME(                            \
      ::kjit::dsl::Loc loc = ::kjit::dsl::Loc::here()) const {                                           \
    const auto& self = static_cast<const Self&>(*this);                                                  \
    return ::kjit::dsl::detail::field_access<KJIT_STRUCT_HOST_TYPE(TYPE)>(self, Self::ir_type(), #NAME, loc); \
  }

/// Declares struct NAME with fields (type, name)...: a host struct laid out as C lays it
/// out, and its kernel type (Value<NAME>, Array<NAME>, Var<NAME>) with one accessor per field.
#define KJIT_STRUCT(NAME, ...)                                                                     \
  struct NAME {                                                                                    \
    KJIT_PP_EACH(KJIT_STRUCT_MEMBER, NAME, __VA_ARGS__)                                            \
    /** The struct's id in kjit's struct registry (registered on first use). */                    \
    static uint16_t kjit_struct_id() {                                                             \
      using kjit_self = NAME;                                                                      \
      static const uint16_t id = ::kjit::dsl::detail::register_user_struct(                        \
          kjit_where(), sizeof(NAME), alignof(NAME), {KJIT_PP_EACH(KJIT_STRUCT_FIELD, NAME, __VA_ARGS__)}); \
      return id;                                                                                   \
    }                                                                                              \
    static const char* kjit_where() { return __PRETTY_FUNCTION__; }                                \
    template <class Self>                                                                          \
    struct kjit_accessors {                                                                        \
      KJIT_PP_EACH(KJIT_STRUCT_ACCESSOR, NAME, __VA_ARGS__)                                        \
    };                                                                                             \
  }
