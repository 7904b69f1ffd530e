// kjit/dsl/results.hpp — the several results of a device function (Warp's multi-valued
// @wp.func): a tuple-like value (std::tuple, std::pair, dsl::Tuple) or an aggregate struct
// of DSL values, taken apart field by field with structured bindings.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "kjit/dsl/tuple.hpp"
#include "kjit/dsl/value.hpp"

namespace kjit::dsl::detail {

/// The most fields an aggregate result struct may have (tuples have no limit but this one).
constexpr size_t kMaxResults = 8;

/// Whether std::tuple_size<R> is defined: R is tuple-like.
template <class R, class = void> struct is_tuple_like : std::false_type {};
template <class R>
struct is_tuple_like<R, std::void_t<decltype(std::tuple_size<R>::value)>> : std::true_type {};

/// Converts to anything: probes how many initializers an aggregate takes.
struct AnyField {
  template <class T> operator T() const;  // NOLINT: implicit by design; never defined
};
template <class R, class Seq, class = void> struct takes_fields : std::false_type {};
template <class R, size_t... I>
struct takes_fields<R, std::index_sequence<I...>, std::void_t<decltype(R{(void(I), AnyField{})...})>>
    : std::true_type {};
/// The number of fields of aggregate R (at most kMaxResults), 0 when R is not one.
template <class R, size_t N = kMaxResults>
constexpr size_t aggregate_fields() {
  if constexpr (N == 0) {
    return 0;
  } else if constexpr (takes_fields<R, std::make_index_sequence<N>>::value) {
    return N;
  } else {
    return aggregate_fields<R, N - 1>();
  }
}

/// How many results a device function's body value of type R stands for: 0 for none (void or
/// not decomposable), else the number of its fields.
template <class R>
constexpr size_t result_fields() {
  if constexpr (std::is_void_v<R> || std::is_base_of_v<ValueBase, R>) {
    return 0;
  } else if constexpr (is_tuple_like<R>::value) {
    return std::tuple_size<R>::value;
  } else if constexpr (std::is_aggregate_v<R>) {
    return aggregate_fields<R>();
  } else {
    return 0;
  }
}

/// Calls f(fields of r...) through a structured binding of N names.
template <size_t N, class R, class F>
decltype(auto) with_fields(R& r, F&& f) {
  static_assert(N >= 1 && N <= kMaxResults, "kjit: a device function returns 1 to 8 results");
  if constexpr (N == 1) { auto& [a] = r; return f(a); }
  else if constexpr (N == 2) { auto& [a, b] = r; return f(a, b); }
  else if constexpr (N == 3) { auto& [a, b, c] = r; return f(a, b, c); }
  else if constexpr (N == 4) { auto& [a, b, c, d] = r; return f(a, b, c, d); }
  else if constexpr (N == 5) { auto& [a, b, c, d, e] = r; return f(a, b, c, d, e); }
  else if constexpr (N == 6) { auto& [a, b, c, d, e, g] = r; return f(a, b, c, d, e, g); }
  else if constexpr (N == 7) { auto& [a, b, c, d, e, g, h] = r; return f(a, b, c, d, e, g, h); }
  else { auto& [a, b, c, d, e, g, h, k] = r; return f(a, b, c, d, e, g, h, k); }
}

/// The element types of the fields, as a Tuple of their handle types (for decltype).
struct FieldHandles {
  template <class... F>
  Tuple<Value<typename std::decay_t<F>::element_type>...> operator()(F&...) const {
    static_assert((std::is_base_of_v<ValueBase, std::decay_t<F>> && ...),
                  "kjit: each result of a device function is a DSL value (Float, Vec3f, ...)");
    return {};
  }
};
template <class R>
using field_handles_t = decltype(with_fields<result_fields<R>()>(std::declval<R&>(), FieldHandles{}));

/// What a call returns for a body value of type R: the same tuple template over plain
/// handles (a Var or an array element in the body's tuple is a value at the call), or R
/// itself for an aggregate, whose fields must then be plain handles.
template <class E, class = void> struct plain_handle { using type = E; };
template <class E>
struct plain_handle<E, std::enable_if_t<std::is_base_of_v<ValueBase, E>>> { using type = Value<typename E::element_type>; };
template <class R, class = void> struct result_handle { using type = R; };
template <template <class...> class TT, class... E>
struct result_handle<TT<E...>, std::enable_if_t<is_tuple_like<TT<E...>>::value>> {
  using type = TT<typename plain_handle<std::decay_t<E>>::type...>;
};
template <class R> using result_handle_t = typename result_handle<R>::type;

/// The IR struct type that carries results of `types` (registered once per type list).
ir::Type results_type(const ir::Type* types, size_t count);

/// The IR struct type carrying the results of a body value of type R (a tuple or struct).
template <class... F>
ir::Type results_type_of(Tuple<F...>*) {
  const ir::Type types[] = {F::ir_type()...};
  return results_type(types, sizeof...(F));
}
template <class R>
ir::Type results_ir_type() {
  return results_type_of(static_cast<field_handles_t<R>*>(nullptr));
}

/// Builds the call's results of type H from the struct value `results`, field by field.
template <class H, class... F, size_t... I>
H unpack_results(ir::ValueId results, Tuple<F...>*, std::index_sequence<I...>, Loc loc) {
  PathStep step[sizeof...(I) + 1];
  for (size_t k = 0; k < sizeof...(I); ++k) {
    step[k].kind = PathStep::Field;
    step[k].field = int(k);
  }
  return H{F(BoundTag{}, extract_step(results, step[I], loc))...};
}
template <class R>
result_handle_t<R> unpack_results(ir::ValueId results, Loc loc) {
  using Fields = field_handles_t<R>;
  return unpack_results<result_handle_t<R>>(results, static_cast<Fields*>(nullptr),
                                            std::make_index_sequence<std::tuple_size<Fields>::value>{}, loc);
}

/// The IR value of the struct holding the fields of `r`.
template <class R>
ir::ValueId pack_results(R& r, const ir::Type& type, Loc loc) {
  return with_fields<result_fields<R>()>(r, [&](auto&... field) {
    const ir::ValueId ids[] = {field.use(loc)...};
    return construct_struct(type, ids, sizeof...(field), loc);
  });
}

}  // namespace kjit::dsl::detail
