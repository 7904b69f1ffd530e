// kjit/dsl/tuple.hpp — Tuple and FixedArray, the results of builtins with several outputs
// (svd3, quat_to_axis_angle, tid<N>, ...): `auto [U, sigma, V] = svd3(A);`. Lighter than
// <tuple> and <array>, which kernel headers do not include.
#pragma once

#include <cstddef>
#include <utility>  // std::tuple_size / std::tuple_element, std::index_sequence

namespace kjit::dsl {

namespace detail {
template <size_t I, class T> struct TupleLeaf { T value; };
template <class Seq, class... T> struct TupleBase;
template <size_t... I, class... T>
struct TupleBase<std::index_sequence<I...>, T...> : TupleLeaf<I, T>... {};
/// The type of element I (deduced from the leaf that holds it).
template <size_t I, class T> T tuple_leaf_type(const TupleLeaf<I, T>&);
}  // namespace detail

/// An aggregate of values of types T...: brace-initialised in order, left to right, each
/// element in place (no copy: a Var element stays the Var it was made as).
template <class... T>
struct Tuple : detail::TupleBase<std::index_sequence_for<T...>, T...> {};

template <size_t I, class... T>
auto& get(Tuple<T...>& t) { return static_cast<detail::TupleLeaf<I, decltype(detail::tuple_leaf_type<I>(t))>&>(t).value; }
template <size_t I, class... T>
const auto& get(const Tuple<T...>& t) {
  return static_cast<const detail::TupleLeaf<I, decltype(detail::tuple_leaf_type<I>(t))>&>(t).value;
}
template <size_t I, class... T>
auto&& get(Tuple<T...>&& t) { return static_cast<decltype(detail::tuple_leaf_type<I>(t))&&>(get<I>(t)); }

/// Calls f(elements...).
template <class F, class... T, size_t... I>
decltype(auto) apply_indexed(F&& f, Tuple<T...>& t, std::index_sequence<I...>) {
  return static_cast<F&&>(f)(get<I>(t)...);
}
template <class F, class... T>
decltype(auto) apply(F&& f, Tuple<T...>& t) {
  return apply_indexed(static_cast<F&&>(f), t, std::index_sequence_for<T...>{});
}

/// N values of type T: `auto [i, j] = tid<2>();`, or `idx[0]`.
template <class T, size_t N>
struct FixedArray {
  T items[N];
  T& operator[](size_t i) { return items[i]; }
  const T& operator[](size_t i) const { return items[i]; }
  static constexpr size_t size() { return N; }
};
template <size_t I, class T, size_t N> T& get(FixedArray<T, N>& a) { return a.items[I]; }
template <size_t I, class T, size_t N> const T& get(const FixedArray<T, N>& a) { return a.items[I]; }
template <size_t I, class T, size_t N> T&& get(FixedArray<T, N>&& a) { return static_cast<T&&>(a.items[I]); }

}  // namespace kjit::dsl

namespace std {
template <class... T>
struct tuple_size<kjit::dsl::Tuple<T...>> : integral_constant<size_t, sizeof...(T)> {};
template <size_t I, class... T>
struct tuple_element<I, kjit::dsl::Tuple<T...>> {
  using type = decltype(kjit::dsl::detail::tuple_leaf_type<I>(declval<const kjit::dsl::Tuple<T...>&>()));
};
template <class T, size_t N>
struct tuple_size<kjit::dsl::FixedArray<T, N>> : integral_constant<size_t, N> {};
template <size_t I, class T, size_t N>
struct tuple_element<I, kjit::dsl::FixedArray<T, N>> { using type = T; };
}  // namespace std
