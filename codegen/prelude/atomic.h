// kjit prelude: atomic read-modify-write on array elements (CUDA atomics, or compare-and-swap
// loops on the host); vectors and matrices are updated one component at a time.
//@chunk atomic requires core
namespace kj {
#if KJ_CUDA
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
KJ_FUNC float atomic_min(float* p, float v) {
  unsigned int* u = (unsigned int*)p;
  unsigned int old = *u, assumed;
  do { assumed = old; if (!(v < __uint_as_float(assumed))) break; old = atomicCAS(u, assumed, __float_as_uint(v)); } while (old != assumed);
  return __uint_as_float(old);
}
KJ_FUNC float atomic_max(float* p, float v) {
  unsigned int* u = (unsigned int*)p;
  unsigned int old = *u, assumed;
  do { assumed = old; if (!(__uint_as_float(assumed) < v)) break; old = atomicCAS(u, assumed, __float_as_uint(v)); } while (old != assumed);
  return __uint_as_float(old);
}
KJ_FUNC double atomic_min(double* p, double v) {
  unsigned long long* u = (unsigned long long*)p;
  unsigned long long old = *u, assumed;
  do { assumed = old; if (!(v < __longlong_as_double(assumed))) break; old = atomicCAS(u, assumed, __double_as_longlong(v)); } while (old != assumed);
  return __longlong_as_double(old);
}
KJ_FUNC double atomic_max(double* p, double v) {
  unsigned long long* u = (unsigned long long*)p;
  unsigned long long old = *u, assumed;
  do { assumed = old; if (!(__longlong_as_double(assumed) < v)) break; old = atomicCAS(u, assumed, __double_as_longlong(v)); } while (old != assumed);
  return __longlong_as_double(old);
}
#else
template <class T, class F> KJ_FUNC T atomic_update(T* p, F f) {
  T old;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  T next = f(old);
  while (!__atomic_compare_exchange(p, &old, &next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) next = f(old);
  return old;
}
template <class T> KJ_FUNC T atomic_add(T* p, T v) { return atomic_update(p, [v](T o) { return o + v; }); }
template <class T> KJ_FUNC T atomic_min(T* p, T v) { return atomic_update(p, [v](T o) { return v < o ? v : o; }); }
template <class T> KJ_FUNC T atomic_max(T* p, T v) { return atomic_update(p, [v](T o) { return o < v ? v : o; }); }
#endif
template <class T> KJ_FUNC T atomic_sub(T* p, T v) { return atomic_add(p, T(-v)); }
template <int N, class T> KJ_FUNC vec_t<N, T> atomic_add(vec_t<N, T>* p, const vec_t<N, T>& v) { vec_t<N, T> old; for (int i = 0; i < N; ++i) old.c[i] = atomic_add(&p->c[i], v.c[i]); return old; }
template <int N, class T> KJ_FUNC vec_t<N, T> atomic_sub(vec_t<N, T>* p, const vec_t<N, T>& v) { vec_t<N, T> old; for (int i = 0; i < N; ++i) old.c[i] = atomic_sub(&p->c[i], v.c[i]); return old; }
template <int N, class T> KJ_FUNC vec_t<N, T> atomic_min(vec_t<N, T>* p, const vec_t<N, T>& v) { vec_t<N, T> old; for (int i = 0; i < N; ++i) old.c[i] = atomic_min(&p->c[i], v.c[i]); return old; }
template <int N, class T> KJ_FUNC vec_t<N, T> atomic_max(vec_t<N, T>* p, const vec_t<N, T>& v) { vec_t<N, T> old; for (int i = 0; i < N; ++i) old.c[i] = atomic_max(&p->c[i], v.c[i]); return old; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> atomic_add(mat_t<R, C, T>* p, const mat_t<R, C, T>& v) { mat_t<R, C, T> old; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) old.c[i][j] = atomic_add(&p->c[i][j], v.c[i][j]); return old; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> atomic_sub(mat_t<R, C, T>* p, const mat_t<R, C, T>& v) { mat_t<R, C, T> old; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) old.c[i][j] = atomic_sub(&p->c[i][j], v.c[i][j]); return old; }
}  // namespace kj
