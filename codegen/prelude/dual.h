// kjit prelude: forward-mode dual numbers, used to write the adjoints of the larger builtins
// (matrix decompositions, quaternion and transform functions) from the very same templated
// code as their forward: for each input lane l, the function runs once on duals seeded at l,
// and adj_input[l] += <d output / d lane l, adj_output>. Forward and adjoint cannot drift.
// The tangents of the same builtins are one run on duals seeded with the direction.
//@chunk dual requires math
namespace kj {
template <class T>
struct dual {
  T v, d;
  dual() = default;
  KJ_FUNC dual(T value, T tangent) : v(value), d(tangent) {}
  KJ_FUNC dual(double c) : v(T(c)), d(T(0)) {}
  KJ_FUNC dual(int c) : v(T(c)), d(T(0)) {}
};
template <class T> KJ_FUNC dual<T> operator+(dual<T> a, dual<T> b) { return dual<T>(a.v + b.v, a.d + b.d); }
template <class T> KJ_FUNC dual<T> operator-(dual<T> a, dual<T> b) { return dual<T>(a.v - b.v, a.d - b.d); }
template <class T> KJ_FUNC dual<T> operator*(dual<T> a, dual<T> b) { return dual<T>(a.v * b.v, a.d * b.v + a.v * b.d); }
template <class T> KJ_FUNC dual<T> operator/(dual<T> a, dual<T> b) { T r = a.v / b.v; return dual<T>(r, (a.d - r * b.d) / b.v); }
template <class T> KJ_FUNC dual<T> operator-(dual<T> a) { return dual<T>(-a.v, -a.d); }
template <class T> KJ_FUNC dual<T>& operator+=(dual<T>& a, dual<T> b) { return a = a + b; }
template <class T> KJ_FUNC dual<T>& operator-=(dual<T>& a, dual<T> b) { return a = a - b; }
template <class T> KJ_FUNC dual<T>& operator*=(dual<T>& a, dual<T> b) { return a = a * b; }
template <class T> KJ_FUNC dual<T>& operator/=(dual<T>& a, dual<T> b) { return a = a / b; }
template <class T> KJ_FUNC bool operator<(dual<T> a, dual<T> b) { return a.v < b.v; }
template <class T> KJ_FUNC bool operator>(dual<T> a, dual<T> b) { return a.v > b.v; }
template <class T> KJ_FUNC bool operator<=(dual<T> a, dual<T> b) { return a.v <= b.v; }
template <class T> KJ_FUNC bool operator>=(dual<T> a, dual<T> b) { return a.v >= b.v; }
template <class T> KJ_FUNC bool operator==(dual<T> a, dual<T> b) { return a.v == b.v; }
template <class T> KJ_FUNC bool operator!=(dual<T> a, dual<T> b) { return a.v != b.v; }
template <class T> KJ_FUNC dual<T> sqrt(dual<T> a) { T r = sqrt(a.v); return dual<T>(r, r > T(0) ? a.d / (T(2) * r) : T(0)); }
template <class T> KJ_FUNC dual<T> sin(dual<T> a) { return dual<T>(sin(a.v), cos(a.v) * a.d); }
template <class T> KJ_FUNC dual<T> cos(dual<T> a) { return dual<T>(cos(a.v), -sin(a.v) * a.d); }
template <class T> KJ_FUNC dual<T> exp(dual<T> a) { T e = exp(a.v); return dual<T>(e, e * a.d); }
template <class T> KJ_FUNC dual<T> log(dual<T> a) { return dual<T>(log(a.v), a.d / a.v); }
template <class T> KJ_FUNC dual<T> acos(dual<T> a) { return dual<T>(acos(a.v), -a.d / sqrt(T(1) - a.v * a.v)); }
template <class T> KJ_FUNC dual<T> asin(dual<T> a) { return dual<T>(asin(a.v), a.d / sqrt(T(1) - a.v * a.v)); }
template <class T> KJ_FUNC dual<T> atan2(dual<T> y, dual<T> x) {
  T r2 = x.v * x.v + y.v * y.v;
  return dual<T>(atan2(y.v, x.v), r2 > T(0) ? (x.v * y.d - y.v * x.d) / r2 : T(0));
}
template <class T> KJ_FUNC dual<T> abs(dual<T> a) { return a.v < T(0) ? -a : a; }

/// The scalar type of a prelude value type (float for vec_t<3, float>).
template <class X> struct scalar_of { using type = X; };
template <int N, class T> struct scalar_of<vec_t<N, T>> { using type = T; };
template <int R, int C, class T> struct scalar_of<mat_t<R, C, T>> { using type = T; };
template <template <class> class Tm, class T> struct scalar_of<Tm<T>> { using type = T; };
/// The same value type over scalar U (vec_t<3, dual<float>> for vec_t<3, float>).
template <class X, class U> struct rebind { using type = U; };
template <int N, class T, class U> struct rebind<vec_t<N, T>, U> { using type = vec_t<N, U>; };
template <int R, int C, class T, class U> struct rebind<mat_t<R, C, T>, U> { using type = mat_t<R, C, U>; };
template <template <class> class Tm, class T, class U> struct rebind<Tm<T>, U> { using type = Tm<U>; };

/// The dual-number version of value type X. (The adjoints' lambdas name their parameter
/// types: NVRTC rejects generic lambdas in device code.)
template <class X> using dual_of = typename rebind<X, dual<typename scalar_of<X>::type>>::type;

template <class X> KJ_FUNC constexpr int lanes_of() { return int(sizeof(X) / sizeof(typename scalar_of<X>::type)); }

/// `x` over duals, with tangent 1 at lane `lane` (none when lane < 0). Every prelude value
/// type is its scalars in order, read as an array through copy_bytes.
template <class X>
KJ_FUNC typename rebind<X, dual<typename scalar_of<X>::type>>::type seed(const X& x, int lane) {
  using T = typename scalar_of<X>::type;
  typename rebind<X, dual<T>>::type r;
  T in[lanes_of<X>()];
  dual<T> out[lanes_of<X>()];
  copy_bytes(in, x);
  for (int i = 0; i < lanes_of<X>(); ++i) out[i] = dual<T>(in[i], i == lane ? T(1) : T(0));
  copy_bytes(r, out);
  return r;
}
/// Sum over lanes of (tangent of `rd`) * `adj`. A lane whose adjoint is exactly zero adds
/// nothing, even through an inf or NaN tangent (strong zero, as adj_nonzero in core).
template <class R, class D>
KJ_FUNC typename scalar_of<R>::type tangent_dot(const D& rd, const R& adj) {
  using T = typename scalar_of<R>::type;
  dual<T> d[lanes_of<R>()];
  T a[lanes_of<R>()];
  copy_bytes(d, rd);
  copy_bytes(a, adj);
  T s = T(0);
  for (int i = 0; i < lanes_of<R>(); ++i)
    if (a[i] != T(0)) s += d[i].d * a[i];
  return s;
}
/// Adds `v` to lane `l` of `x`.
template <class X> KJ_FUNC void lane_add(X& x, int l, typename scalar_of<X>::type v) {
  typename scalar_of<X>::type lanes[lanes_of<X>()];
  copy_bytes(lanes, x);
  lanes[l] += v;
  copy_bytes(x, lanes);
}

/// `x` over duals with tangent `dx`, lane by lane: what a tangent kernel passes to the
/// forward function of a builtin whose tangent is one dual evaluation (TangentCall).
template <class X>
KJ_FUNC dual_of<X> make_dual(const X& x, const X& dx) {
  using T = typename scalar_of<X>::type;
  dual_of<X> r;
  T a[lanes_of<X>()], b[lanes_of<X>()];
  dual<T> out[lanes_of<X>()];
  copy_bytes(a, x);
  copy_bytes(b, dx);
  for (int i = 0; i < lanes_of<X>(); ++i) out[i] = dual<T>(a[i], b[i]);
  copy_bytes(r, out);
  return r;
}
/// The tangents of a dual-valued result `d`, as the plain value type R.
template <class R, class D>
KJ_FUNC R tangent_part(const D& d) {
  using T = typename scalar_of<R>::type;
  R r;
  dual<T> in[lanes_of<R>()];
  T out[lanes_of<R>()];
  copy_bytes(in, d);
  for (int i = 0; i < lanes_of<R>(); ++i) out[i] = in[i].d;
  copy_bytes(r, out);
  return r;
}

/// Adjoints of f(a), f(a, b), f(a, b, c) by forward-mode sweeps over the input lanes.
template <class F, class A, class R>
KJ_FUNC_BIG void adj_dual(F f, const A& a, A& adj_a, const R& adj_ret) {
  KJ_NO_UNROLL for (int l = 0; l < lanes_of<A>(); ++l) lane_add(adj_a, l, tangent_dot(f(seed(a, l)), adj_ret));
}
template <class F, class A, class B, class R>
KJ_FUNC_BIG void adj_dual(F f, const A& a, const B& b, A& adj_a, B& adj_b, const R& adj_ret) {
  KJ_NO_UNROLL for (int l = 0; l < lanes_of<A>(); ++l) lane_add(adj_a, l, tangent_dot(f(seed(a, l), seed(b, -1)), adj_ret));
  KJ_NO_UNROLL for (int l = 0; l < lanes_of<B>(); ++l) lane_add(adj_b, l, tangent_dot(f(seed(a, -1), seed(b, l)), adj_ret));
}
template <class F, class A, class B, class C, class R>
KJ_FUNC_BIG void adj_dual(F f, const A& a, const B& b, const C& c, A& adj_a, B& adj_b, C& adj_c, const R& adj_ret) {
  KJ_NO_UNROLL for (int l = 0; l < lanes_of<A>(); ++l) lane_add(adj_a, l, tangent_dot(f(seed(a, l), seed(b, -1), seed(c, -1)), adj_ret));
  KJ_NO_UNROLL for (int l = 0; l < lanes_of<B>(); ++l) lane_add(adj_b, l, tangent_dot(f(seed(a, -1), seed(b, l), seed(c, -1)), adj_ret));
  KJ_NO_UNROLL for (int l = 0; l < lanes_of<C>(); ++l) lane_add(adj_c, l, tangent_dot(f(seed(a, -1), seed(b, -1), seed(c, l)), adj_ret));
}
}  // namespace kj
