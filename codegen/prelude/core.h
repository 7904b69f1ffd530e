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
#define KJ_HOST_UNROLL
#else
#define KJ_NO_UNROLL
/// Unrolls a short fixed-count loop on the host, where GCC's -O3 leaves nested small loops
/// rolled (noise's interpolation: a per-iteration test of the axis it steps along).
#define KJ_HOST_UNROLL _Pragma("GCC unroll 16")
// The C library functions the prelude calls, declared here instead of <math.h> and <stdio.h>:
// in C++, <math.h> brings <cmath>, 20,000 lines that took half of a small module's compile.
// They are the C functions (GCC and Clang also know them as builtins).
extern "C" {
float sinf(float); double sin(double);
float cosf(float); double cos(double);
float tanf(float); double tan(double);
float expf(float); double exp(double);
float logf(float); double log(double);
float sqrtf(float); double sqrt(double);
float floorf(float); double floor(double);
float ceilf(float); double ceil(double);
float asinf(float); double asin(double);
float acosf(float); double acos(double);
float atanf(float); double atan(double);
float sinhf(float); double sinh(double);
float coshf(float); double cosh(double);
float tanhf(float); double tanh(double);
float cbrtf(float); double cbrt(double);
float erff(float); double erf(double);
float erfcf(float); double erfc(double);
float log2f(float); double log2(double);
float log10f(float); double log10(double);
float truncf(float); double trunc(double);
float roundf(float); double round(double);
float rintf(float); double rint(double);
float lgammaf(float); double lgamma(double);
float powf(float, float); double pow(double, double);
float atan2f(float, float); double atan2(double, double);
float copysignf(float, float); double copysign(double, double);
float fmodf(float, float); double fmod(double, double);
int printf(const char*, ...);
}
#define KJ_FUNC inline __attribute__((always_inline))
#define KJ_FUNC_BIG inline
#define KJ_CUDA 0
#define KJ_EXPORT extern "C" __attribute__((visibility("default")))
#define KJ_NOINLINE __attribute__((noinline))
/// Before a loop over a launch's threads: their order is unspecified (they run concurrently
/// on the pool, and in lanes), so no iteration depends on another through memory, and GCC
/// need not version the loop for arrays that might overlap.
#define KJ_THREADS_INDEPENDENT _Pragma("GCC ivdep")
#endif

namespace kj {
template <int N, class T> struct vec_t;
template <int R, int C, class T> struct mat_t;
template <class T> struct quat_t;
template <class T> struct transform_t;
struct half;
struct bfloat16;

/// Copies `src`'s bytes into `dst` (the same size): the prelude's one way to read a value type's
/// scalars as an array and back. Not through a scalar pointer: reading quat_t {x, y, z, w}
/// through a pointer to x past x is undefined, and GCC -O3 miscompiled exactly that (float32
/// quat_to_rpy's adjoint). Both compilers turn the copy into register moves.
template <class D, class S> KJ_FUNC void copy_bytes(D& dst, const S& src) {
  static_assert(sizeof(D) == sizeof(S), "copy_bytes: the sizes differ");
#if KJ_CUDA
  memcpy(&dst, &src, sizeof(D));
#else
  __builtin_memcpy(&dst, &src, sizeof(D));
#endif
}

/// Whether an adjoint has a component that is not zero (NaN counts). The reverse sweep skips a
/// builtin's adjoint rule when its incoming adjoint is exactly zero: "strong zero" semantics,
/// so an inf or NaN partial on a dead path contributes 0, not 0 * inf = NaN. Scalars here
/// (float, double, half and bfloat16 through their ==); aggregates beside their types.
template <class T> KJ_FUNC bool adj_nonzero(const T& x) { return !(x == T(0)); }
/// The reverse sweep's strong zero around one adjoint rule (codegen's strong_zero):
///   KJ_SZ_IF(adj_ret) { KJ_SZ_NZ(adj_ret) KJ_SZ_SAVE(kj_s0, adj_a) ... rule; KJ_SZ_KEEP(adj_a, kj_s0) ... }
/// The host skips the rule when adj_ret is zero (the work saved is worth a branch, which costs
/// GCC little). CUDA always runs it and puts back what a zero adjoint added, the same bits
/// without a branch: NVVM's time grew with the square of the number of these branches.
/// (C++11: modules may be compiled with any -std kjit accepts.)
#if KJ_CUDA
#define KJ_SZ_IF(a)
#define KJ_SZ_NZ(a) const bool kj_nz = kj::adj_nonzero(a);
#define KJ_SZ_SAVE(saved, acc) const auto saved = acc;
#define KJ_SZ_KEEP(acc, saved) acc = kj_nz ? acc : saved;
#else
#define KJ_SZ_IF(a) if (kj::adj_nonzero(a))
#define KJ_SZ_NZ(a)
#define KJ_SZ_SAVE(saved, acc)
#define KJ_SZ_KEEP(acc, saved)
#endif

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

/// Division and remainder as the DSL defines them for integers, the same on both backends
/// (docs/DSL.md): x / 0 = 0 and x % 0 = x, so that (x / y) * y + x % y == x still holds, and
/// the one quotient that overflows, MIN / -1, wraps to MIN with remainder 0. The hardware
/// instruction traps (SIGFPE, killing the process) on the cpu and returns unspecified values
/// on CUDA. Other types divide as their operators do.
template <class T> KJ_FUNC T quot(T a, T b) { return a / b; }
template <class T> KJ_FUNC T rem(T a, T b) { return a % b; }
#define KJ_SIGNED_QUOT(T, U)                                                                 \
  KJ_FUNC T quot(T a, T b) { return b == 0 ? T(0) : b == T(-1) ? T(U(0) - U(a)) : T(a / b); } \
  KJ_FUNC T rem(T a, T b) { return b == 0 ? a : b == T(-1) ? T(0) : T(a % b); }
#define KJ_UNSIGNED_QUOT(T)                                          \
  KJ_FUNC T quot(T a, T b) { return b == 0 ? T(0) : T(a / b); } \
  KJ_FUNC T rem(T a, T b) { return b == 0 ? a : T(a % b); }
KJ_SIGNED_QUOT(kj_int8, kj_uint8)
KJ_SIGNED_QUOT(kj_int16, kj_uint16)
#if KJ_CUDA || defined(__FAST_MATH__)
KJ_SIGNED_QUOT(kj_int32, kj_uint32)
#else
/// int32 on the cpu: the truncated quotient through a float64 division, exact for every pair:
/// where a / b is not an integer it is at least 1 / |b| from one, and the division's rounding
/// error is at most 2^31 / |b| * 2^-53. Several times cheaper than the integer instruction,
/// pipelined and vectorizable (a periodic stencil's four `% n`: 35 -> 20 us per 64 x 64 launch).
/// Not under -ffast-math, whose reciprocal division is not exact.
KJ_FUNC kj_int32 quot(kj_int32 a, kj_int32 b) {
  return b == 0 ? 0 : (kj_int32)(kj_uint32)(kj_uint64)(kj_int64)((double)a / (double)b);  // MIN / -1 wraps
}
KJ_FUNC kj_int32 rem(kj_int32 a, kj_int32 b) {
  return b == 0 ? a : (kj_int32)((kj_int64)a - (kj_int64)b * (kj_int64)((double)a / (double)b));
}
#endif
KJ_SIGNED_QUOT(kj_int64, kj_uint64)
KJ_UNSIGNED_QUOT(kj_uint8)
KJ_UNSIGNED_QUOT(kj_uint16)
KJ_UNSIGNED_QUOT(kj_uint32)
KJ_UNSIGNED_QUOT(kj_uint64)
#undef KJ_SIGNED_QUOT
#undef KJ_UNSIGNED_QUOT

/// A value parameter's value (kjit/abi.h): read where `ptr` points when it is set (a traced
/// JAX scalar's buffer), else carried in the parameter itself.
template <class T> KJ_FUNC T value_of(const value_t<T>& v) { return v.ptr ? *v.ptr : v.value; }

/// Component k of the multi-dimensional launch index of flat index `index` (row-major:
/// the last dimension varies fastest).
KJ_FUNC kj_int32 launch_coord(const launch_bounds_t& dim, kj_int64 index, int k) {
  // Unsigned 32-bit division where the launch fits in it: a 64-bit one costs several times as
  // much on the cpu and is a software routine on GPUs. The outermost coordinate needs no
  // modulo: index < size.
  if (dim.size <= 0x7fffffff) {
    kj_uint32 i = (kj_uint32)index;
    // A 2-D launch's coordinates are a quotient and its remainder: written so, the compiler
    // finds both in one division.
    if (dim.ndim == 2) return (kj_int32)(k == 0 ? i / (kj_uint32)dim.shape[1] : i % (kj_uint32)dim.shape[1]);
    for (int d = dim.ndim - 1; d > k; --d) i /= (kj_uint32)dim.shape[d];
    return (kj_int32)(k == 0 ? i : i % (kj_uint32)dim.shape[k]);
  }
  for (int d = dim.ndim - 1; d > k; --d) index /= dim.shape[d];
  return (kj_int32)(k == 0 ? index : index % dim.shape[k]);
}
}  // namespace kj

//@chunk array requires core
namespace kj {
/// An array element written: vectors and matrices overload this (and read with load_of)
/// component by component (vec.h), as the vectorizer cannot split a whole-struct copy, and GCC
/// copies a vec3 through the stack as 8 + 4 bytes, whose read of two 4-byte stores stalls store
/// forwarding.
template <class T> KJ_FUNC void store_to(T& dst, const T& x) { dst = x; }
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
/// The gradient buffer of `a` as an array of its own (the adjoint of an array a struct field
/// holds: its gradients go where the array's own grad points; no data when it has none).
template <class T>
KJ_FUNC array_t<T> grad_view(const array_t<T>& a) {
  array_t<T> g = a;
  g.data = a.grad;
  g.grad = 0;
  return g;
}
/// An array known to be dense row-major (each stride the element size times the extents
/// inside it): elem() indexes it without reading strides, so that loops over it vectorize.
/// The cpu entry points pass every array as one when all of a launch's arrays are dense
/// (kj::is_dense); anything taking an array_t still accepts it.
template <class T>
struct dense_array_t : array_t<T> {};
template <class T>
KJ_FUNC T& elem(const dense_array_t<T>& a, kj_int64 i) {
  return a.data[i];
}
template <class T>
KJ_FUNC T& elem(const dense_array_t<T>& a, kj_int64 i, kj_int64 j) {
  return a.data[i * a.shape[1] + j];
}
template <class T>
KJ_FUNC T& elem(const dense_array_t<T>& a, kj_int64 i, kj_int64 j, kj_int64 k) {
  return a.data[(i * a.shape[1] + j) * a.shape[2] + k];
}
template <class T>
KJ_FUNC T& elem(const dense_array_t<T>& a, kj_int64 i, kj_int64 j, kj_int64 k, kj_int64 l) {
  return a.data[((i * a.shape[1] + j) * a.shape[2] + k) * a.shape[3] + l];
}
/// The array type of a body instantiated for dense (true) or strided (false) arrays.
template <bool Dense> struct array_layout { template <class T> using array = array_t<T>; };
template <> struct array_layout<true> { template <class T> using array = dense_array_t<T>; };
template <bool Dense, class T>
using array_of = typename array_layout<Dense>::template array<T>;
/// Whether the array at `data` with elements of `elem_bytes` is dense row-major (an absent
/// array counts as dense: nothing indexes it). Out of line on the host: called once per array
/// and chunk, and inlined into every entry its loop took GCC about 15 % of a small module's
/// compile (it threaded the dense and strided paths through it).
#if KJ_CUDA
KJ_FUNC
#else
__attribute__((noinline)) inline
#endif
bool dense_layout(const void* data, const kj_int32* shape, const kj_int64* strides, int ndim, kj_int64 elem_bytes) {
  kj_int64 s = elem_bytes;
  for (int d = ndim - 1; d >= 0; --d) {
    if (strides[d] != s) return data == 0;
    s *= shape[d];
  }
  return true;
}
/// Whether `a` is dense row-major (see dense_layout).
template <class T>
KJ_FUNC bool is_dense(const array_t<T>& a) {
  return dense_layout(a.data, a.shape, a.strides, a.ndim, (kj_int64)sizeof(T));
}

#if !KJ_CUDA
/// Threads per block of the cpu's lane functions (codegen/src/lane_emitter.hpp): 16 floats
/// fill an AVX-512 register, two AVX2 ones.
#define KJ_LANES 16
/// Threads per block of the adjoint lane functions of kernels whose values are all 32 bits or
/// narrower (codegen/src/adjoint_lanes.hpp): with AVX-512, two vectors per value, as doubles
/// take at 16, so that a dependent chain (a division feeding a square root, an adjoint through
/// a loop) overlaps with a second one instead of waiting on its latency.
#if defined(__AVX512F__)
#define KJ_WIDE_LANES 32
#else
#define KJ_WIDE_LANES KJ_LANES
#endif
/// On an adjoint lane function (GCC only): no partial-redundancy elimination and no sinking.
/// Both undo what the lane code is written for: sinking moved a rule's division (normalize's,
/// length's adjoint) back under its condition, where the vectorizer may not execute it for
/// every lane, and PRE turned one strong-zero bit into a select of another that GCC 12's
/// vectorizer cannot convert between mask widths; either left damp's reverse sweep scalar,
/// mispredicting one branch per lane.
#if defined(__GNUC__) && !defined(__clang__)
#define KJ_ADJOINT_LANES_OPT __attribute__((optimize("no-tree-pre", "no-tree-sink")))
#else
#define KJ_ADJOINT_LANES_OPT
#endif
/// The loop over a block's n lanes. Not unrolled: GCC would unroll its iterations before the
/// loop vectorizer sees them, and vectorizes the straight-line copies much less well.
#define KJ_LANE_LOOP_N(n) _Pragma("GCC unroll 1") KJ_THREADS_INDEPENDENT for (kj_int32 kj_l = 0; kj_l < (n); ++kj_l)
#define KJ_LANE_LOOP KJ_LANE_LOOP_N(KJ_LANES)
/// Whether any lane of a mask of N lanes is on. Masks are int32 0/1, not bool: GCC's
/// vectorizer does not negate vectors of bool, and a mask as wide as a float keeps one vector
/// length.
template <int N = KJ_LANES>
KJ_FUNC bool lanes_any(const kj_int32* m) {
  bool any = false;
  for (int l = 0; l < N; ++l) any |= m[l];
  return any;
}
/// A value of type T per lane (N lanes). Vectors and matrices specialize it as one array per
/// component (vec.h), so that each component of the lanes is one contiguous vector; other
/// types are stored whole.
template <class T, int N = KJ_LANES>
struct lanes {
  T v[N];
  KJ_FUNC T get(int l) const { return v[l]; }
  KJ_FUNC void set(int l, const T& x) { v[l] = x; }
  /// Lane l becomes x where `on`, else keeps its value.
  KJ_FUNC void select(int l, bool on, const T& x) { v[l] = on ? x : v[l]; }
};
/// A lane function's loop state (a checkpoint, or the live lanes it restores) copied as bytes:
/// GCC's scalar replacement split a whole-struct assignment of lanes into one scalar per lane
/// and component, and the lane loops beside it were then not vectorized (damp's adjoint ran
/// its replay one lane at a time).
template <class T>
KJ_FUNC void copy_lanes(T& dst, const T& src) { __builtin_memcpy(&dst, &src, sizeof(T)); }
/// Bools per lane are int32 0/1, as masks are.
template <int N>
struct lanes<bool, N> {
  kj_int32 v[N];
  KJ_FUNC bool get(int l) const { return v[l] != 0; }
  KJ_FUNC void set(int l, bool x) { v[l] = x; }
  KJ_FUNC void select(int l, bool on, bool x) { v[l] = on ? x : v[l]; }
};
/// Arrays of at least this many bytes that a lane function writes in whole blocks (each thread
/// its own element, and nothing else done with the array: lane_emitter.cpp's block stores) get
/// non-temporal stores, which do not read the lines first and keep them out of the caches (as
/// Dr.Jit writes its outputs); smaller ones stay in cache for whoever reads them next (up to
/// 4 MiB, streaming lost even without a reader on the development VM: docs/BENCHMARKS.md).
#define KJ_STREAM_MIN_BYTES ((kj_int64)1 << 23)
template <class T> KJ_FUNC bool streams(const array_t<T>& a) {
  return (kj_int64)a.shape[0] * (kj_int64)sizeof(T) >= KJ_STREAM_MIN_BYTES;
}
/// Copies one cache line from `src` to 64-byte aligned `dst` with non-temporal stores.
KJ_FUNC void stream_line(void* dst, const void* src) {
#if defined(__clang__) && defined(__SSE2__)
  typedef long long v8 __attribute__((vector_size(64)));
  v8 v; __builtin_memcpy(&v, src, 64); __builtin_nontemporal_store(v, (v8*)dst);
#elif defined(__AVX512F__)
  typedef long long v8 __attribute__((vector_size(64)));
  v8 v; __builtin_memcpy(&v, src, 64); __builtin_ia32_movntdq512((v8*)dst, v);
#elif defined(__AVX__)
  typedef long long v4 __attribute__((vector_size(32)));
  for (int i = 0; i < 2; ++i) { v4 v; __builtin_memcpy(&v, (const char*)src + 32 * i, 32); __builtin_ia32_movntdq256((v4*)((char*)dst + 32 * i), v); }
#elif defined(__SSE2__)
  typedef long long v2 __attribute__((vector_size(16)));
  for (int i = 0; i < 4; ++i) { v2 v; __builtin_memcpy(&v, (const char*)src + 16 * i, 16); __builtin_ia32_movntdq((v2*)((char*)dst + 16 * i), v); }
#else
  __builtin_memcpy(dst, src, 64);
#endif
}
/// Writes a block's N elements `src` to `dst`: with non-temporal stores when `stream`
/// and `dst` starts a cache line (the pool's chunks start at multiples of 64 threads), else
/// plainly. Elements are whole 4-byte words, so the block is whole cache lines.
template <class T, int N> KJ_FUNC void store_block(T* dst, const T (&src)[N], bool stream) {
  static_assert(sizeof(src) % 64 == 0, "a block of stores is whole cache lines");
  if (stream && ((kj_uint64)dst & 63) == 0) {
    for (int i = 0; i < int(sizeof(src) / 64); ++i) stream_line((char*)dst + 64 * i, (const char*)src + 64 * i);
  } else {
    __builtin_memcpy((void*)dst, (const void*)src, sizeof(src));
  }
}
/// Adds a block's N elements `src` into `dst`, each element once, in an unmasked loop (the
/// adjoint lane function's block adds: a Vec3's interleaved components vectorize here, not
/// under the per-lane test of the adjoint array's presence).
template <class T, int N> KJ_FUNC void add_block(T* dst, const T (&src)[N]) {
  for (int i = 0; i < N; ++i) dst[i] += src[i];
}
/// Orders a cpu entry's non-temporal stores before whatever the thread does next (they are
/// weakly ordered on x86): the pool's hand-back then publishes them.
KJ_FUNC void stream_fence() {
#if defined(__SSE2__)
  __builtin_ia32_sfence();
#endif
}
/// Adjoints under a lane bit (the adjoint's lane function): `acc` += / -= x, or zeroed, where
/// `on`, else unchanged, written as selects so that the lane loop stays one vector loop.
/// Vectors and matrices overload them component by component (vec.h).
template <class T> KJ_FUNC void add_if(T& acc, bool on, const T& x) { T t = acc; t += x; acc = on ? t : acc; }
template <class T> KJ_FUNC void sub_if(T& acc, bool on, const T& x) { T t = acc; t -= x; acc = on ? t : acc; }
template <class T> KJ_FUNC void zero_if(T& acc, bool on) { acc = on ? T{} : acc; }
/// adj_nonzero without branches (a vector's components or'ed bitwise, not with ||): a bit that
/// is a branch's result stops GCC 12 vectorizing the lane loop around it.
template <class T> KJ_FUNC bool lane_nonzero(const T& x) { return adj_nonzero(x); }
#endif

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
// Failures a thread reports go to the launch's own status slot (launch_bounds_t::status), so
// concurrent launches of one module never see each other's: a dynamic loop of an adjoint that
// exceeded its checkpoint bound reports its loop id + 1; checks and bounds use the codes below
// (kjit::detail::kStatus* in the runtime). The first report wins; the runtime reads the slot
// after the launch. A null slot (a launch captured into a CUDA graph) drops reports.
namespace kj {
constexpr kj_int32 kStatusCheckFailed = 0x7fff0001;  ///< expect_near failed
constexpr kj_int32 kStatusOutOfBounds = 0x7fff0002;  ///< bounds mode: an index past its extent
constexpr kj_int32 kStatusDivByZero = 0x7fff0003;    ///< bounds mode: integer / or % by zero

/// Claims `dim`'s status slot for `code`; true when this thread's report is the first.
KJ_FUNC bool claim_status(const launch_bounds_t& dim, kj_int32 code) {
  if (!dim.status) return false;
#if KJ_CUDA
  return atomicCAS(&dim.status->code, 0, code) == 0;
#else
  kj_int32 expected = 0;
  return __atomic_compare_exchange_n(&dim.status->code, &expected, code, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
}
KJ_FUNC void report_status(const launch_bounds_t& dim, kj_int32 code) { claim_status(dim, code); }
/// Reports a fault with its details: the winner writes them after claiming, and the runtime
/// reads them only after every thread of the launch finished.
KJ_FUNC void report_fault(const launch_bounds_t& dim, kj_int32 code, kj_int64 thread, int line, int axis,
                          kj_int64 index, kj_int64 extent) {
  if (!claim_status(dim, code)) return;
  dim.status->line = line;
  dim.status->axis = axis;
  dim.status->thread = thread;
  dim.status->index = index;
  dim.status->extent = extent;
}
}  // namespace kj
