// kjit prelude: bounds — the checked twins of element, component and integer-division
// accesses that a module built with ModuleOptions::bounds_check calls instead (docs/DSL.md).
//@chunk bounds requires status array
namespace kj {
/// What a faulting access reads and writes instead of memory outside its array: per thread on
/// the cpu (threads of a pool would race), shared garbage on CUDA (its value is never used:
/// the launch reports an error).
template <class T> KJ_FUNC T& fault_scratch() {
#if KJ_CUDA
  static __device__ __align__(64) unsigned char bytes[sizeof(T)];
#else
  alignas(64) static thread_local unsigned char bytes[sizeof(T)];
#endif
  return *(T*)bytes;
}

/// Whether index `i` of dimension `axis` of `a` lies inside its extent; reports it otherwise.
template <class T>
KJ_FUNC bool index_ok(const launch_bounds_t& dim, kj_int64 thread, int line, const array_t<T>& a, int axis, kj_int64 i) {
  if (i >= 0 && i < a.shape[axis] && a.data) return true;
  report_fault(dim, kStatusOutOfBounds, thread, line, axis, i, a.data ? a.shape[axis] : 0);
  return false;
}
template <class T>
KJ_FUNC T& elem_checked(const launch_bounds_t& dim, kj_int64 t, int line, const array_t<T>& a, kj_int64 i) {
  return index_ok(dim, t, line, a, 0, i) ? elem(a, i) : fault_scratch<T>();
}
template <class T>
KJ_FUNC T& elem_checked(const launch_bounds_t& dim, kj_int64 t, int line, const array_t<T>& a, kj_int64 i, kj_int64 j) {
  return index_ok(dim, t, line, a, 0, i) && index_ok(dim, t, line, a, 1, j) ? elem(a, i, j) : fault_scratch<T>();
}
template <class T>
KJ_FUNC T& elem_checked(const launch_bounds_t& dim, kj_int64 t, int line, const array_t<T>& a, kj_int64 i, kj_int64 j,
                        kj_int64 k) {
  return index_ok(dim, t, line, a, 0, i) && index_ok(dim, t, line, a, 1, j) && index_ok(dim, t, line, a, 2, k)
             ? elem(a, i, j, k)
             : fault_scratch<T>();
}
template <class T>
KJ_FUNC T& elem_checked(const launch_bounds_t& dim, kj_int64 t, int line, const array_t<T>& a, kj_int64 i, kj_int64 j,
                        kj_int64 k, kj_int64 l) {
  return index_ok(dim, t, line, a, 0, i) && index_ok(dim, t, line, a, 1, j) && index_ok(dim, t, line, a, 2, k) &&
                 index_ok(dim, t, line, a, 3, l)
             ? elem(a, i, j, k, l)
             : fault_scratch<T>();
}

/// Components: the number of valid indices at position `axis` of a vector (or local array),
/// matrix, quaternion or transform.
template <int N, class T> KJ_FUNC int components(const vec_t<N, T>&, int) { return N; }
template <int R, int C, class T> KJ_FUNC int components(const mat_t<R, C, T>&, int axis) { return axis ? C : R; }
template <class T> KJ_FUNC int components(const quat_t<T>&, int) { return 4; }
template <class T> KJ_FUNC int components(const transform_t<T>&, int) { return 7; }
/// `i` when it is a valid component index, else 0 after reporting it (axes 16 and up in the
/// status tell components from array dimensions).
KJ_FUNC kj_int32 component(const launch_bounds_t& dim, kj_int64 t, int line, int axis, kj_int32 i, int n) {
  if (i >= 0 && i < n) return i;
  report_fault(dim, kStatusOutOfBounds, t, line, 16 + axis, i, n);
  return 0;
}
// One index, any aggregate: the index follows the aggregate, the rest passes through.
template <class V, class... R>
KJ_FUNC auto extract_checked(const launch_bounds_t& dim, kj_int64 t, int line, const V& v, kj_int32 i, R&&... r)
    -> decltype(extract(v, i, static_cast<R&&>(r)...)) {
  return extract(v, component(dim, t, line, 0, i, components(v, 0)), static_cast<R&&>(r)...);
}
template <class V, class... R>
KJ_FUNC auto insert_checked(const launch_bounds_t& dim, kj_int64 t, int line, const V& v, kj_int32 i, R&&... r)
    -> decltype(insert(v, i, static_cast<R&&>(r)...)) {
  return insert(v, component(dim, t, line, 0, i, components(v, 0)), static_cast<R&&>(r)...);
}
template <class V, class... R>
KJ_FUNC void adj_extract_checked(const launch_bounds_t& dim, kj_int64 t, int line, const V& v, kj_int32 i, R&&... r) {
  adj_extract(v, component(dim, t, line, 0, i, components(v, 0)), static_cast<R&&>(r)...);
}
template <class V, class... R>
KJ_FUNC void adj_insert_checked(const launch_bounds_t& dim, kj_int64 t, int line, const V& v, kj_int32 i, R&&... r) {
  adj_insert(v, component(dim, t, line, 0, i, components(v, 0)), static_cast<R&&>(r)...);
}
// Two indices: matrix elements.
template <int Rn, int C, class T>
KJ_FUNC T extract_checked(const launch_bounds_t& dim, kj_int64 t, int line, const mat_t<Rn, C, T>& m, kj_int32 i, kj_int32 j) {
  return extract(m, component(dim, t, line, 0, i, Rn), component(dim, t, line, 1, j, C));
}
template <int Rn, int C, class T>
KJ_FUNC mat_t<Rn, C, T> insert_checked(const launch_bounds_t& dim, kj_int64 t, int line, const mat_t<Rn, C, T>& m, kj_int32 i,
                                       kj_int32 j, T x) {
  return insert(m, component(dim, t, line, 0, i, Rn), component(dim, t, line, 1, j, C), x);
}
template <int Rn, int C, class T>
KJ_FUNC void adj_extract_checked(const launch_bounds_t& dim, kj_int64 t, int line, const mat_t<Rn, C, T>& m, kj_int32 i,
                                 kj_int32 j, T ret, mat_t<Rn, C, T>& adj_m, T adj_ret) {
  adj_extract(m, component(dim, t, line, 0, i, Rn), component(dim, t, line, 1, j, C), ret, adj_m, adj_ret);
}
template <int Rn, int C, class T>
KJ_FUNC void adj_insert_checked(const launch_bounds_t& dim, kj_int64 t, int line, const mat_t<Rn, C, T>& m, kj_int32 i,
                                kj_int32 j, T x, const mat_t<Rn, C, T>& ret, mat_t<Rn, C, T>& adj_m, T& adj_x,
                                const mat_t<Rn, C, T>& adj_ret) {
  adj_insert(m, component(dim, t, line, 0, i, Rn), component(dim, t, line, 1, j, C), x, ret, adj_m, adj_x, adj_ret);
}

/// Integer division and remainder that also report a zero divisor (their value stays
/// defined: quot and rem in core.h).
template <class T> KJ_FUNC T quot_checked(const launch_bounds_t& dim, kj_int64 t, int line, T a, T b) {
  if (b == T(0)) report_fault(dim, kStatusDivByZero, t, line, 0, (kj_int64)a, 0);
  return quot(a, b);
}
template <class T> KJ_FUNC T rem_checked(const launch_bounds_t& dim, kj_int64 t, int line, T a, T b) {
  if (b == T(0)) report_fault(dim, kStatusDivByZero, t, line, 0, (kj_int64)a, 0);
  return rem(a, b);
}
}  // namespace kj
