// kjit prelude: core — compiler portability, the kernel ABI, aggregate type declarations,
// conversions and launch coordinates. Every module carries this chunk.
//@chunk core requires abi
#if defined(__CUDACC__)
#define KJ_FUNC __device__ __forceinline__
#define KJ_FUNC_BIG __device__ __noinline__
#define KJ_CUDA 1
/// Keeps NVVM from unrolling a loop: unrolled bodies of the larger builtins (lane sweeps of
/// dual-number adjoints, Jacobi sweeps, noise corners) make ptxas slow for no run-time gain.
#define KJ_NO_UNROLL _Pragma("unroll 1")
#else
#define KJ_NO_UNROLL
#include <math.h>
#include <stdio.h>
#define KJ_FUNC inline __attribute__((always_inline))
#define KJ_FUNC_BIG inline
#define KJ_CUDA 0
#define KJ_EXPORT extern "C" __attribute__((visibility("default")))
#endif

namespace kj {
template <int N, class T> struct vec_t;
template <int R, int C, class T> struct mat_t;
template <class T> struct quat_t;
template <class T> struct transform_t;
struct half;
struct bfloat16;

/// The bits of a float or double (for classification that fast-math cannot fold away).
KJ_FUNC kj_uint32 bits_of(float x) { union { float f; kj_uint32 u; } c; c.f = x; return c.u; }
KJ_FUNC kj_uint64 bits_of(double x) { union { double f; kj_uint64 u; } c; c.f = x; return c.u; }
KJ_FUNC float float_of_bits(kj_uint32 u) { union { float f; kj_uint32 u; } c; c.u = u; return c.f; }

/// Conversion between element types (the DSL's casts): scalars by static_cast, vectors,
/// matrices and quaternions componentwise (their chunks specialise caster).
template <class To> struct caster {
  template <class From> static KJ_FUNC To go(const From& v) { return static_cast<To>(v); }
};
template <class To, class From>
KJ_FUNC To cast(const From& v) { return caster<To>::go(v); }
template <class To, class From>
KJ_FUNC void adj_cast(const From& v, const To& ret, From& adj_v, const To& adj_ret) { adj_v += cast<From>(adj_ret); }

/// Component k of the multi-dimensional launch index of flat index `index` (row-major:
/// the last dimension varies fastest).
KJ_FUNC kj_int32 launch_coord(const launch_bounds_t& dim, kj_int64 index, int k) {
  for (int d = dim.ndim - 1; d > k; --d) index /= dim.shape[d];
  return (kj_int32)(index % dim.shape[k]);
}
}  // namespace kj

//@chunk array requires core
namespace kj {
/// The element of `a` at the given indices (a reference into the array's memory).
template <class T>
KJ_FUNC T& elem(const array_t<T>& a, kj_int64 i) {
  return *(T*)((char*)a.data + i * a.strides[0]);
}
template <class T>
KJ_FUNC T& elem(const array_t<T>& a, kj_int64 i, kj_int64 j) {
  return *(T*)((char*)a.data + i * a.strides[0] + j * a.strides[1]);
}
template <class T>
KJ_FUNC T& elem(const array_t<T>& a, kj_int64 i, kj_int64 j, kj_int64 k) {
  return *(T*)((char*)a.data + i * a.strides[0] + j * a.strides[1] + k * a.strides[2]);
}
template <class T>
KJ_FUNC T& elem(const array_t<T>& a, kj_int64 i, kj_int64 j, kj_int64 k, kj_int64 l) {
  return *(T*)((char*)a.data + i * a.strides[0] + j * a.strides[1] + k * a.strides[2] +
               l * a.strides[3]);
}
/// A contiguous row-major array over `address` (the DSL's array(address, n...)); it has no
/// gradient buffer.
template <class T>
KJ_FUNC array_t<T> make_array(kj_uint64 address, kj_int32 n0, kj_int32 n1 = 0, kj_int32 n2 = 0, kj_int32 n3 = 0) {
  array_t<T> a = {};
  a.data = (T*)address;
  kj_int32 n[4] = {n0, n1, n2, n3};
  a.ndim = n3 ? 4 : n2 ? 3 : n1 ? 2 : 1;
  kj_int64 stride = sizeof(T);
  for (int d = a.ndim - 1; d >= 0; --d) { a.shape[d] = n[d]; a.strides[d] = stride; stride *= n[d]; }
  return a;
}
}  // namespace kj

//@chunk status requires core
// The module's status word: 0, or the code of the first failure a thread reported (a
// dynamic loop of an adjoint that exceeded its checkpoint bound reports its loop id + 1).
// The runtime reads and clears it after adjoint launches.
#if KJ_CUDA
extern "C" __device__ kj_int32 kjit_status = 0;
namespace kj {
KJ_FUNC void report_status(kj_int32 code) { atomicCAS(&kjit_status, 0, code); }
}  // namespace kj
#else
extern "C" {
__attribute__((visibility("default"))) kj_int32 kjit_status = 0;
}
namespace kj {
KJ_FUNC void report_status(kj_int32 code) {
  kj_int32 expected = 0;
  __atomic_compare_exchange_n(&kjit_status, &expected, code, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}
}  // namespace kj
#endif
