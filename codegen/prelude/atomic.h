// kjit prelude: atomic read-modify-write on array elements. CUDA's native atomics where they
// exist, else a compare-and-swap loop on the element's bits (any 1-, 2-, 4- or 8-byte type);
// on the host the compiler's __atomic builtins. Vectors, matrices, quaternions and transforms
// are updated one component at a time.
//@chunk atomic requires core
namespace kj {
#if KJ_CUDA
template <class To, class From> KJ_FUNC To bitcast(const From& f) { union { From f; To t; } u; u.f = f; return u.t; }
/// Replaces *p by f(*p) atomically; returns the previous value.
template <class T, class F> KJ_FUNC T atomic_update(T* p, F f) {
  if constexpr (sizeof(T) == 8) {
    unsigned long long* u = (unsigned long long*)p;
    unsigned long long old = *u, assumed;
    do { assumed = old; old = atomicCAS(u, assumed, bitcast<unsigned long long>(f(bitcast<T>(assumed)))); } while (old != assumed);
    return bitcast<T>(old);
  } else if constexpr (sizeof(T) == 4) {
    unsigned int* u = (unsigned int*)p;
    unsigned int old = *u, assumed;
    do { assumed = old; old = atomicCAS(u, assumed, bitcast<unsigned int>(f(bitcast<T>(assumed)))); } while (old != assumed);
    return bitcast<T>(old);
  } else if constexpr (sizeof(T) == 2) {
    unsigned short int* u = (unsigned short int*)p;
    unsigned short int old = *u, assumed;
    do { assumed = old; old = atomicCAS(u, assumed, bitcast<unsigned short int>(f(bitcast<T>(assumed)))); } while (old != assumed);
    return bitcast<T>(old);
  } else {  // one byte: CAS on the aligned word that holds it
    unsigned int* w = (unsigned int*)((unsigned long long)p & ~3ull);
    unsigned int shift = (unsigned int)((unsigned long long)p & 3ull) * 8u;
    unsigned int old = *w, assumed;
    do {
      assumed = old;
      unsigned char next = bitcast<unsigned char>(f(bitcast<T>((unsigned char)(assumed >> shift))));
      old = atomicCAS(w, assumed, (assumed & ~(0xffu << shift)) | ((unsigned int)next << shift));
    } while (old != assumed);
    return bitcast<T>((unsigned char)(old >> shift));
  }
}
template <class T> KJ_FUNC bool same_bits(const T& a, const T& b) {
  const unsigned char *x = (const unsigned char*)&a, *y = (const unsigned char*)&b;
  for (int i = 0; i < int(sizeof(T)); ++i) if (x[i] != y[i]) return false;
  return true;
}
/// Stores `value` when *p holds `compare` (bitwise); returns the previous value.
template <class T> KJ_FUNC T atomic_cas(T* p, T compare, T value) {
  return atomic_update(p, [&](T o) { return same_bits(o, compare) ? value : o; });
}
KJ_FUNC float atomic_add(float* p, float v) { return atomicAdd(p, v); }
KJ_FUNC double atomic_add(double* p, double v) { return atomicAdd(p, v); }
KJ_FUNC kj_int32 atomic_add(kj_int32* p, kj_int32 v) { return atomicAdd(p, v); }
KJ_FUNC kj_uint32 atomic_add(kj_uint32* p, kj_uint32 v) { return atomicAdd(p, v); }
KJ_FUNC kj_int64 atomic_add(kj_int64* p, kj_int64 v) { return (kj_int64)atomicAdd((unsigned long long*)p, (unsigned long long)v); }
KJ_FUNC kj_uint64 atomic_add(kj_uint64* p, kj_uint64 v) { return atomicAdd((unsigned long long*)p, (unsigned long long)v); }
KJ_FUNC kj_int32 atomic_min(kj_int32* p, kj_int32 v) { return atomicMin(p, v); }
KJ_FUNC kj_int32 atomic_max(kj_int32* p, kj_int32 v) { return atomicMax(p, v); }
KJ_FUNC kj_uint32 atomic_min(kj_uint32* p, kj_uint32 v) { return atomicMin(p, v); }
KJ_FUNC kj_uint32 atomic_max(kj_uint32* p, kj_uint32 v) { return atomicMax(p, v); }
KJ_FUNC kj_int64 atomic_min(kj_int64* p, kj_int64 v) { return atomicMin((long long*)p, (long long)v); }
KJ_FUNC kj_int64 atomic_max(kj_int64* p, kj_int64 v) { return atomicMax((long long*)p, (long long)v); }
KJ_FUNC kj_int32 atomic_and(kj_int32* p, kj_int32 v) { return atomicAnd(p, v); }
KJ_FUNC kj_uint32 atomic_and(kj_uint32* p, kj_uint32 v) { return atomicAnd(p, v); }
KJ_FUNC kj_int32 atomic_or(kj_int32* p, kj_int32 v) { return atomicOr(p, v); }
KJ_FUNC kj_uint32 atomic_or(kj_uint32* p, kj_uint32 v) { return atomicOr(p, v); }
KJ_FUNC kj_int32 atomic_xor(kj_int32* p, kj_int32 v) { return atomicXor(p, v); }
KJ_FUNC kj_uint32 atomic_xor(kj_uint32* p, kj_uint32 v) { return atomicXor(p, v); }
KJ_FUNC kj_int32 atomic_exch(kj_int32* p, kj_int32 v) { return atomicExch(p, v); }
KJ_FUNC kj_uint32 atomic_exch(kj_uint32* p, kj_uint32 v) { return atomicExch(p, v); }
KJ_FUNC float atomic_exch(float* p, float v) { return atomicExch(p, v); }
KJ_FUNC kj_int32 atomic_cas(kj_int32* p, kj_int32 c, kj_int32 v) { return atomicCAS(p, c, v); }
KJ_FUNC kj_uint32 atomic_cas(kj_uint32* p, kj_uint32 c, kj_uint32 v) { return atomicCAS(p, c, v); }
KJ_FUNC kj_uint64 atomic_cas(kj_uint64* p, kj_uint64 c, kj_uint64 v) { return atomicCAS((unsigned long long*)p, c, v); }
#else
template <class T, class F> KJ_FUNC T atomic_update(T* p, F f) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  T next = f(old);
  while (!__atomic_compare_exchange(p, &old, &next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) next = f(old);
  return old;
}
template <class T> KJ_FUNC T atomic_cas(T* p, T compare, T value) {
  __atomic_compare_exchange(p, &compare, &value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;
}
// Integers have read-modify-write instructions (lock xadd, lock and/or/xor, xchg): one
// instruction instead of a compare-exchange loop. Floats keep the loop (x86 has no float add).
#define KJ_HOST_INT_ATOMICS(T)                                                                           \
  KJ_FUNC T atomic_add(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }                 \
  KJ_FUNC T atomic_sub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }                 \
  KJ_FUNC T atomic_and(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }                 \
  KJ_FUNC T atomic_or(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }                   \
  KJ_FUNC T atomic_xor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }                 \
  KJ_FUNC T atomic_exch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
KJ_HOST_INT_ATOMICS(kj_int32)
KJ_HOST_INT_ATOMICS(kj_uint32)
KJ_HOST_INT_ATOMICS(kj_int64)
KJ_HOST_INT_ATOMICS(kj_uint64)
#undef KJ_HOST_INT_ATOMICS
#endif
// Everything else through atomic_update (non-templates above win where they apply).
template <class T> KJ_FUNC T atomic_add(T* p, T v) { return atomic_update(p, [v](T o) { return T(o + v); }); }
template <class T> KJ_FUNC T atomic_min(T* p, T v) { return atomic_update(p, [v](T o) { return v < o ? v : o; }); }
template <class T> KJ_FUNC T atomic_max(T* p, T v) { return atomic_update(p, [v](T o) { return o < v ? v : o; }); }
template <class T> KJ_FUNC T atomic_and(T* p, T v) { return atomic_update(p, [v](T o) { return T(o & v); }); }
template <class T> KJ_FUNC T atomic_or(T* p, T v) { return atomic_update(p, [v](T o) { return T(o | v); }); }
template <class T> KJ_FUNC T atomic_xor(T* p, T v) { return atomic_update(p, [v](T o) { return T(o ^ v); }); }
template <class T> KJ_FUNC T atomic_exch(T* p, T v) { return atomic_update(p, [v](T) { return v; }); }
template <class T> KJ_FUNC T atomic_sub(T* p, T v) { return atomic_add(p, T(-v)); }
/// An exchange whose previous value nothing reads (codegen writes it so): on the host an
/// atomic store, which takes the exchange's place in the element's order of writes without
/// the locked instruction (a spin lock's release and write-back: 18 -> 10 us for 1024
/// threads); CUDA keeps the exchange.
#if KJ_CUDA
template <class T> KJ_FUNC T atomic_exch_unread(T* p, T v) { atomic_exch(p, v); return T(); }
#else
template <class T> KJ_FUNC T atomic_exch_unread(T* p, T v) {
  __atomic_store(p, &v, __ATOMIC_RELAXED);
  return T();
}
#endif
template <int N, class T> KJ_FUNC vec_t<N, T> atomic_add(vec_t<N, T>* p, const vec_t<N, T>& v) { vec_t<N, T> old; for (int i = 0; i < N; ++i) old.c[i] = atomic_add(&p->c[i], v.c[i]); return old; }
template <int N, class T> KJ_FUNC vec_t<N, T> atomic_sub(vec_t<N, T>* p, const vec_t<N, T>& v) { vec_t<N, T> old; for (int i = 0; i < N; ++i) old.c[i] = atomic_sub(&p->c[i], v.c[i]); return old; }
template <int N, class T> KJ_FUNC vec_t<N, T> atomic_min(vec_t<N, T>* p, const vec_t<N, T>& v) { vec_t<N, T> old; for (int i = 0; i < N; ++i) old.c[i] = atomic_min(&p->c[i], v.c[i]); return old; }
template <int N, class T> KJ_FUNC vec_t<N, T> atomic_max(vec_t<N, T>* p, const vec_t<N, T>& v) { vec_t<N, T> old; for (int i = 0; i < N; ++i) old.c[i] = atomic_max(&p->c[i], v.c[i]); return old; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> atomic_add(mat_t<R, C, T>* p, const mat_t<R, C, T>& v) { mat_t<R, C, T> old; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) old.c[i][j] = atomic_add(&p->c[i][j], v.c[i][j]); return old; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> atomic_sub(mat_t<R, C, T>* p, const mat_t<R, C, T>& v) { mat_t<R, C, T> old; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) old.c[i][j] = atomic_sub(&p->c[i][j], v.c[i][j]); return old; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> atomic_min(mat_t<R, C, T>* p, const mat_t<R, C, T>& v) { mat_t<R, C, T> old; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) old.c[i][j] = atomic_min(&p->c[i][j], v.c[i][j]); return old; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> atomic_max(mat_t<R, C, T>* p, const mat_t<R, C, T>& v) { mat_t<R, C, T> old; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) old.c[i][j] = atomic_max(&p->c[i][j], v.c[i][j]); return old; }
/// The adjoint of atomic_min/atomic_max(p, v) on one component: the element's final value
/// came from `v` when they are equal. Exactly one contributor takes the element's adjoint:
/// the first to exchange it for zero (of tying threads, an unspecified one); when no thread's
/// operand equals the result, it stays with the element's prior value.
template <class T> KJ_FUNC void adj_atomic_select(const T& final_value, const T& v, T& adj_v, T* adj_elem) {
  if (final_value == v) adj_v += atomic_exch(adj_elem, T(0));
}
// Vectors and matrices: per component, as the forward min/max works.
template <int N, class T> KJ_FUNC void adj_atomic_select(const vec_t<N, T>& f, const vec_t<N, T>& v, vec_t<N, T>& adj_v, vec_t<N, T>* adj_elem) {
  for (int i = 0; i < N; ++i) adj_atomic_select(f.c[i], v.c[i], adj_v.c[i], &adj_elem->c[i]);
}
template <int R, int C, class T> KJ_FUNC void adj_atomic_select(const mat_t<R, C, T>& f, const mat_t<R, C, T>& v, mat_t<R, C, T>& adj_v, mat_t<R, C, T>* adj_elem) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) adj_atomic_select(f.c[i][j], v.c[i][j], adj_v.c[i][j], &adj_elem->c[i][j]);
}
/// Componentwise adds for the other aggregates (quaternions, transforms), lane by lane.
template <template <class> class X, class T> KJ_FUNC X<T> atomic_add(X<T>* p, const X<T>& v) {
  T lanes[sizeof(X<T>) / sizeof(T)], old[sizeof(X<T>) / sizeof(T)];
  copy_bytes(lanes, v);
  for (int i = 0; i < int(sizeof(X<T>) / sizeof(T)); ++i) old[i] = atomic_add((T*)p + i, lanes[i]);
  X<T> r;
  copy_bytes(r, old);
  return r;
}
template <template <class> class X, class T> KJ_FUNC X<T> atomic_sub(X<T>* p, const X<T>& v) {
  T lanes[sizeof(X<T>) / sizeof(T)], old[sizeof(X<T>) / sizeof(T)];
  copy_bytes(lanes, v);
  for (int i = 0; i < int(sizeof(X<T>) / sizeof(T)); ++i) old[i] = atomic_sub((T*)p + i, lanes[i]);
  X<T> r;
  copy_bytes(r, old);
  return r;
}
/// atomic_add / atomic_sub into an element of array `a`, as codegen writes them for the element
/// kinds the runtime can privatize (codegen/src/private_adds.hpp): atomic, unless the runtime
/// gave this cpu thread a private zeroed copy of the array (kArrayPrivate), where plain adds
/// are race-free. The private adds are relaxed atomic loads and stores, plain moves on x86
/// that no vectorizer turns into a scatter (two lanes of a GCC ivdep lane loop may add to one
/// element).
/// The reverse sweep's add into an adjoint array at the thread's own element (no other thread of
/// the launch adds there): plain, unless the launch found another argument sharing the array's
/// memory (CUDA: kArrayShared; the cpu runs such a launch in index order instead).
#if KJ_CUDA
template <class A, class T> KJ_FUNC void own_add(const A& a, T& e, const T& v) {
  if (a.flags & kArrayShared) atomic_add(&e, v);
  else e += v;
}
#else
template <class A, class T> KJ_FUNC void own_add(const A&, T& e, const T& v) { e += v; }
#endif
#if KJ_CUDA
template <class A, class T> KJ_FUNC T array_add(const A&, T* p, const T& v) { return atomic_add(p, v); }
template <class A, class T> KJ_FUNC T array_sub(const A&, T* p, const T& v) { return atomic_sub(p, v); }
#else
template <class S> KJ_FUNC S private_add(S* p, S v, bool sub) {
  S old, next;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  next = sub ? S(old - v) : S(old + v);
  __atomic_store(p, &next, __ATOMIC_RELAXED);
  return old;
}
// Aggregates component by component, unrolled (GCC leaves a loop of atomic accesses rolled,
// with the operand spilled to the stack).
template <int N, class S> KJ_FUNC vec_t<N, S> private_add(vec_t<N, S>* p, const vec_t<N, S>& v, bool sub) {
  vec_t<N, S> old;
  _Pragma("GCC unroll 16") for (int i = 0; i < N; ++i) old.c[i] = private_add(&p->c[i], v.c[i], sub);
  return old;
}
template <int R, int C, class S> KJ_FUNC mat_t<R, C, S> private_add(mat_t<R, C, S>* p, const mat_t<R, C, S>& v, bool sub) {
  mat_t<R, C, S> old;
  _Pragma("GCC unroll 16") for (int i = 0; i < R * C; ++i) old.c[i / C][i % C] = private_add(&p->c[i / C][i % C], v.c[i / C][i % C], sub);
  return old;
}
template <template <class> class X, class S> KJ_FUNC X<S> private_add(X<S>* p, const X<S>& v, bool sub) {
  S lanes[sizeof(X<S>) / sizeof(S)], old[sizeof(X<S>) / sizeof(S)];
  copy_bytes(lanes, v);
  _Pragma("GCC unroll 16") for (int i = 0; i < int(sizeof(X<S>) / sizeof(S)); ++i) old[i] = private_add((S*)p + i, lanes[i], sub);
  X<S> r;
  copy_bytes(r, old);
  return r;
}
template <class A, class T> KJ_FUNC T array_add(const A& a, T* p, const T& v) { return (a.flags & kArrayPrivate) ? private_add(p, v, false) : atomic_add(p, v); }
template <class A, class T> KJ_FUNC T array_sub(const A& a, T* p, const T& v) { return (a.flags & kArrayPrivate) ? private_add(p, v, true) : atomic_sub(p, v); }
#endif
}  // namespace kj
