// kjit prelude: utility builtins (lerp, fma, smoothstep, lower_bound, block_dim, breakpoint) and
// the device-side check expect_near, which reports failures through the status word.
//@chunk lerp requires core
namespace kj {
/// a (1 - t) + b t (Warp's form: exact at t = 0 and t = 1), for any floating value type
/// with a scalar t.
template <class X, class T> KJ_FUNC X lerp(const X& a, const X& b, T t) { return a * (T(1) - t) + b * t; }
template <class X, class T> KJ_FUNC void adj_lerp(const X& a, const X& b, T t, const X& ret, X& adj_a, X& adj_b, T& adj_t, const X& adj_ret) {
  adj_a += adj_ret * (T(1) - t);
  adj_b += adj_ret * t;
  T pa[sizeof(X) / sizeof(T)], pb[sizeof(X) / sizeof(T)], g[sizeof(X) / sizeof(T)];
  copy_bytes(pa, a);
  copy_bytes(pb, b);
  copy_bytes(g, adj_ret);
  for (int i = 0; i < int(sizeof(X) / sizeof(T)); ++i) adj_t += (pb[i] - pa[i]) * g[i];
}
}  // namespace kj

//@chunk fma requires core
namespace kj {
/// a * b + c with one rounding, for a float or double b: of each component of a and c.
/// The rounding is the same on every target (a cpu without FMA instructions calls the math
/// library's fma), unlike the compilers' contraction of a * b + c, which kjit's host compile
/// turns off.
template <class X, class T> KJ_FUNC X fma(const X& a, T b, const X& c) {
  X r;
  T pa[sizeof(X) / sizeof(T)], pc[sizeof(X) / sizeof(T)], pr[sizeof(X) / sizeof(T)];
  copy_bytes(pa, a);
  copy_bytes(pc, c);
  _Pragma("GCC unroll 36") for (int i = 0; i < int(sizeof(X) / sizeof(T)); ++i) {
#if KJ_CUDA
    pr[i] = ::fma(pa[i], b, pc[i]);
#else
    if constexpr (sizeof(T) == 4) pr[i] = __builtin_fmaf(pa[i], b, pc[i]);
    else pr[i] = __builtin_fma(pa[i], b, pc[i]);
#endif
  }
  copy_bytes(r, pr);
  return r;
}
template <class X, class T> KJ_FUNC void adj_fma(const X& a, T b, const X& c, const X& ret, X& adj_a, T& adj_b, X& adj_c, const X& adj_ret) {
  adj_a += adj_ret * b;
  adj_c += adj_ret;
  T pa[sizeof(X) / sizeof(T)], g[sizeof(X) / sizeof(T)];
  copy_bytes(pa, a);
  copy_bytes(g, adj_ret);
  for (int i = 0; i < int(sizeof(X) / sizeof(T)); ++i) adj_b += pa[i] * g[i];
}
}  // namespace kj

//@chunk smoothstep requires clamp
namespace kj {
/// Hermite step from 0 (x <= a) to 1 (x >= b): t^2 (3 - 2t) with t = clamp((x - a) / (b - a))
/// (clamp's NaN rule: a NaN t is 0, as Warp's).
template <class T> KJ_FUNC T smoothstep(T a, T b, T x) {
  T t = clamp((x - a) / (b - a), T(0), T(1));
  return t * t * (T(3) - T(2) * t);
}
template <class T> KJ_FUNC void adj_smoothstep(T a, T b, T x, T ret, T& adj_a, T& adj_b, T& adj_x, T adj_ret) {
  T d = b - a, t = (x - a) / d;
  if (!(t > T(0) && t < T(1))) return;
  T ds = T(6) * t * (T(1) - t) * adj_ret;
  adj_x += ds / d;
  adj_a += ds * (x - b) / (d * d);
  adj_b -= ds * t / d;
}
}  // namespace kj

//@chunk lower_bound requires array
namespace kj {
/// The first index in [lo, hi) whose element is not less than `value` (hi when none).
template <class T> KJ_FUNC kj_int32 lower_bound(const array_t<T>& a, kj_int32 lo, kj_int32 hi, T value) {
  while (lo < hi) {
    kj_int32 mid = lo + (hi - lo) / 2;
    if (elem(a, mid) < value) lo = mid + 1; else hi = mid;
  }
  return lo;
}
template <class T> KJ_FUNC kj_int32 lower_bound(const array_t<T>& a, T value) { return lower_bound(a, 0, a.shape[0], value); }
}  // namespace kj

//@chunk launch_info requires core
namespace kj {
/// Threads per block of the launch (CUDA); 1 on the cpu, where each thread runs alone.
KJ_FUNC kj_int32 block_dim() {
#if KJ_CUDA
  return (kj_int32)blockDim.x;
#else
  return 1;
#endif
}
/// Stops in an attached debugger (CUDA __brkpt, x86 int3); without one the process receives
/// SIGTRAP.
KJ_FUNC void breakpoint() {
#if KJ_CUDA
  __brkpt();
#elif defined(__x86_64__) || defined(__i386__)
  __asm__ volatile("int3");
#else
  __builtin_trap();
#endif
}
}  // namespace kj

//@chunk expect requires status
namespace kj {
template <class X, class T>
KJ_FUNC void expect_near(const X& a, const X& b, T tol, const launch_bounds_t& dim, kj_int64 thread, const char* where) {
  const int n = int(sizeof(X) / sizeof(T));
  T pa[n], pb[n];
  copy_bytes(pa, a);
  copy_bytes(pb, b);
  bool ok = true;
  for (int i = 0; i < n; ++i) {
    double d = (double)pa[i] - (double)pb[i];
    if (!(d <= (double)tol && -d <= (double)tol)) ok = false;
  }
  if (ok) return;
  printf("kjit: expect_near failed at %s, thread %lld:", where, (long long)thread);
  for (int i = 0; i < n; ++i) printf(" %.9g vs %.9g;", (double)pa[i], (double)pb[i]);
  printf(" tolerance %.9g\n", (double)tol);
  report_status(dim, kStatusCheckFailed);
}
}  // namespace kj

//@chunk opaque requires core
// A span of a long adjoint swept in a function of its own (codegen's emit_span_functions):
// kept out of line, so that each compiles as the short function it is.
#if KJ_CUDA
#define KJ_SPAN_FUNC static __device__ __noinline__
#else
#define KJ_SPAN_FUNC static __attribute__((noinline))
#endif
namespace kj {
/// `x`, read through a pointer the optimizer cannot follow. A long adjoint runs each span of
/// its body a second time (codegen's reverse_spans) from such reads of the span's checkpoint
/// and inputs: seen as the same values, the second run would be merged into the first, and
/// the first run's values would live through the whole sweep again. The address taken keeps
/// the checkpoints in memory, not in registers across the sweep (asm on values in registers,
/// or volatile copies, compiled slower with GCC and NVVM).
template <class T> KJ_FUNC T opaque(const T& x) {
  const T* p = &x;
#if KJ_CUDA
  asm volatile("" : "+l"(p));
#else
  __asm__ volatile("" : "+r"(p));
#endif
  return *p;
}
}  // namespace kj
