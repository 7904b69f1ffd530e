// kjit prelude: vectors and matrices — storage types and componentwise arithmetic.
//@chunk vec requires core
namespace kj {
/// N components of T, packed (no padding), as kjit::vec<N, T> on the host.
template <int N, class T>
struct vec_t {
  T c[N];
  KJ_FUNC T& operator[](int i) { return c[i]; }
  KJ_FUNC const T& operator[](int i) const { return c[i]; }
};
template <int N, class T> KJ_FUNC bool adj_nonzero(const vec_t<N, T>& a) { for (int i = 0; i < N; ++i) if (adj_nonzero(a.c[i])) return true; return false; }
template <int N, class T> KJ_FUNC vec_t<N, T> operator+(vec_t<N, T> a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] += b.c[i]; return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> operator-(vec_t<N, T> a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] -= b.c[i]; return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> operator-(vec_t<N, T> a) { for (int i = 0; i < N; ++i) a.c[i] = -a.c[i]; return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> operator+(const vec_t<N, T>& a) { return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> operator*(vec_t<N, T> a, T s) { for (int i = 0; i < N; ++i) a.c[i] *= s; return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> operator*(T s, vec_t<N, T> a) { for (int i = 0; i < N; ++i) a.c[i] = s * a.c[i]; return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> operator/(vec_t<N, T> a, T s) { for (int i = 0; i < N; ++i) a.c[i] = quot(a.c[i], s); return a; }
template <int N, class T> KJ_FUNC vec_t<N, T> operator/(T s, vec_t<N, T> a) { for (int i = 0; i < N; ++i) a.c[i] = quot(s, a.c[i]); return a; }
template <int N, class T> KJ_FUNC vec_t<N, T>& operator+=(vec_t<N, T>& a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] += b.c[i]; return a; }
template <int N, class T> KJ_FUNC vec_t<N, T>& operator-=(vec_t<N, T>& a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] -= b.c[i]; return a; }
/// As Warp's: 2- and 3-vectors sum from the first product (all -0 products give -0), other
/// lengths from 0.
template <int N, class T> KJ_FUNC T dot(const vec_t<N, T>& a, const vec_t<N, T>& b) {
  constexpr int f = (N == 2 || N == 3) ? 1 : 0;
  T s = f ? a.c[0] * b.c[0] : T(0);
  for (int i = f; i < N; ++i) s += a.c[i] * b.c[i];
  return s;
}
template <int N, class T> KJ_FUNC bool operator==(const vec_t<N, T>& a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) if (!(a.c[i] == b.c[i])) return false; return true; }
template <int N, class T> KJ_FUNC bool operator!=(const vec_t<N, T>& a, const vec_t<N, T>& b) { return !(a == b); }

template <int N, class T> struct caster<vec_t<N, T>> {
  template <class U> static KJ_FUNC vec_t<N, T> go(const vec_t<N, U>& v) { vec_t<N, T> r; for (int i = 0; i < N; ++i) r.c[i] = static_cast<T>(v.c[i]); return r; }
};
template <int N, class T> KJ_FUNC vec_t<N, T> operator/(vec_t<N, T> a, const vec_t<N, T>& b) { for (int i = 0; i < N; ++i) a.c[i] = quot(a.c[i], b.c[i]); return a; }
template <int N, class T> KJ_FUNC vec_t<N, T>& operator*=(vec_t<N, T>& a, T s) { for (int i = 0; i < N; ++i) a.c[i] *= s; return a; }

template <int N, class T> KJ_FUNC vec_t<N, T> load_of(const vec_t<N, T>& x) { vec_t<N, T> r; for (int i = 0; i < N; ++i) r.c[i] = x.c[i]; return r; }
template <int N, class T> KJ_FUNC void store_to(vec_t<N, T>& dst, const vec_t<N, T>& x) { for (int i = 0; i < N; ++i) dst.c[i] = x.c[i]; }
#if !KJ_CUDA
/// A vector per lane, one array per component.
template <int N, class T, int L>
struct lanes<vec_t<N, T>, L> {
  T c[N][L];
  KJ_FUNC vec_t<N, T> get(int l) const { vec_t<N, T> r; for (int i = 0; i < N; ++i) r.c[i] = c[i][l]; return r; }
  KJ_FUNC void set(int l, const vec_t<N, T>& x) { for (int i = 0; i < N; ++i) c[i][l] = x.c[i]; }
  KJ_FUNC void select(int l, bool on, const vec_t<N, T>& x) { for (int i = 0; i < N; ++i) c[i][l] = on ? x.c[i] : c[i][l]; }
};
template <int N, class T> KJ_FUNC void add_if(vec_t<N, T>& a, bool on, const vec_t<N, T>& x) { for (int i = 0; i < N; ++i) a.c[i] = on ? a.c[i] + x.c[i] : a.c[i]; }
template <int N, class T> KJ_FUNC void sub_if(vec_t<N, T>& a, bool on, const vec_t<N, T>& x) { for (int i = 0; i < N; ++i) a.c[i] = on ? a.c[i] - x.c[i] : a.c[i]; }
template <int N, class T> KJ_FUNC bool lane_nonzero(const vec_t<N, T>& a) { bool r = false; for (int i = 0; i < N; ++i) r = r | adj_nonzero(a.c[i]); return r; }
template <int N, class T> KJ_FUNC void zero_if(vec_t<N, T>& a, bool on) { for (int i = 0; i < N; ++i) a.c[i] = on ? T{} : a.c[i]; }
#endif

template <int N, class T> KJ_FUNC T extract(const vec_t<N, T>& v, kj_int32 i) { return v.c[i]; }
template <int N, class T> KJ_FUNC void adj_extract(const vec_t<N, T>& v, kj_int32 i, T ret, vec_t<N, T>& adj_v, T adj_ret) { adj_v.c[i] += adj_ret; }
template <int N, class T> KJ_FUNC vec_t<N, T> insert(vec_t<N, T> v, kj_int32 i, T x) { v.c[i] = x; return v; }
template <int N, class T> KJ_FUNC void adj_insert(const vec_t<N, T>& v, kj_int32 i, T x, const vec_t<N, T>& ret, vec_t<N, T>& adj_v, T& adj_x, vec_t<N, T> adj_ret) {
  adj_x += adj_ret.c[i];
  adj_ret.c[i] = T(0);
  adj_v += adj_ret;
}
}  // namespace kj

//@chunk mat requires vec
namespace kj {
/// R x C components of T, row-major, as kjit::mat<R, C, T> on the host.
template <int R, int C, class T>
struct mat_t {
  T c[R][C];
};
template <int R, int C, class T> KJ_FUNC bool adj_nonzero(const mat_t<R, C, T>& a) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) if (adj_nonzero(a.c[i][j])) return true; return false; }
template <int R, int C, class T> struct caster<mat_t<R, C, T>> {
  template <class U> static KJ_FUNC mat_t<R, C, T> go(const mat_t<R, C, U>& m) { mat_t<R, C, T> r; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) r.c[i][j] = static_cast<T>(m.c[i][j]); return r; }
};
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> operator+(mat_t<R, C, T> a, const mat_t<R, C, T>& b) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] += b.c[i][j]; return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> operator-(mat_t<R, C, T> a, const mat_t<R, C, T>& b) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] -= b.c[i][j]; return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> operator-(mat_t<R, C, T> a) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] = -a.c[i][j]; return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> operator+(const mat_t<R, C, T>& a) { return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> operator*(mat_t<R, C, T> a, T s) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] *= s; return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> operator*(T s, mat_t<R, C, T> a) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] = s * a.c[i][j]; return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> operator/(mat_t<R, C, T> a, T s) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] = quot(a.c[i][j], s); return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T>& operator+=(mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] += b.c[i][j]; return a; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T>& operator-=(mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] -= b.c[i][j]; return a; }
template <int R, int C, class T> KJ_FUNC bool operator==(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) if (!(a.c[i][j] == b.c[i][j])) return false; return true; }
template <int R, int C, class T> KJ_FUNC bool operator!=(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { return !(a == b); }
/// a * b + c: fused (one rounding) for float and double on every target, as Warp's matrix
/// product; other types multiply, then add.
template <class T> KJ_FUNC T muladd(T a, T b, T c) { c += a * b; return c; }
#if KJ_CUDA
KJ_FUNC float muladd(float a, float b, float c) { return ::fmaf(a, b, c); }
KJ_FUNC double muladd(double a, double b, double c) { return ::fma(a, b, c); }
#else
KJ_FUNC float muladd(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
KJ_FUNC double muladd(double a, double b, double c) { return __builtin_fma(a, b, c); }
#endif
// Warp's products, operation for operation: matrix times vector sums the columns scaled by the
// vector's components, vector times matrix the rows, each from its first term (a sum of -0
// terms stays -0); a matrix product accumulates each entry from 0 with muladd.
template <int R, int C, class T> KJ_FUNC vec_t<R, T> operator*(const mat_t<R, C, T>& m, const vec_t<C, T>& v) { vec_t<R, T> r; for (int i = 0; i < R; ++i) { T s = m.c[i][0] * v.c[0]; for (int j = 1; j < C; ++j) s += m.c[i][j] * v.c[j]; r.c[i] = s; } return r; }
template <int R, int C, class T> KJ_FUNC vec_t<C, T> operator*(const vec_t<R, T>& v, const mat_t<R, C, T>& m) { vec_t<C, T> r; for (int j = 0; j < C; ++j) { T s = m.c[0][j] * v.c[0]; for (int i = 1; i < R; ++i) s += m.c[i][j] * v.c[i]; r.c[j] = s; } return r; }
template <int R, int C, int K, class T> KJ_FUNC mat_t<R, K, T> operator*(const mat_t<R, C, T>& a, const mat_t<C, K, T>& b) { mat_t<R, K, T> r; for (int i = 0; i < R; ++i) for (int k = 0; k < K; ++k) { T s = T(0); for (int j = 0; j < C; ++j) s = muladd(a.c[i][j], b.c[j][k], s); r.c[i][k] = s; } return r; }

template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> load_of(const mat_t<R, C, T>& x) { mat_t<R, C, T> r; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) r.c[i][j] = x.c[i][j]; return r; }
template <int R, int C, class T> KJ_FUNC void store_to(mat_t<R, C, T>& dst, const mat_t<R, C, T>& x) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) dst.c[i][j] = x.c[i][j]; }
#if !KJ_CUDA
/// A matrix per lane, one array per component.
template <int R, int C, class T, int L>
struct lanes<mat_t<R, C, T>, L> {
  T c[R][C][L];
  KJ_FUNC mat_t<R, C, T> get(int l) const { mat_t<R, C, T> r; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) r.c[i][j] = c[i][j][l]; return r; }
  KJ_FUNC void set(int l, const mat_t<R, C, T>& x) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) c[i][j][l] = x.c[i][j]; }
  KJ_FUNC void select(int l, bool on, const mat_t<R, C, T>& x) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) c[i][j][l] = on ? x.c[i][j] : c[i][j][l]; }
};
template <int R, int C, class T> KJ_FUNC void add_if(mat_t<R, C, T>& a, bool on, const mat_t<R, C, T>& x) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] = on ? a.c[i][j] + x.c[i][j] : a.c[i][j]; }
template <int R, int C, class T> KJ_FUNC void sub_if(mat_t<R, C, T>& a, bool on, const mat_t<R, C, T>& x) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] = on ? a.c[i][j] - x.c[i][j] : a.c[i][j]; }
template <int R, int C, class T> KJ_FUNC bool lane_nonzero(const mat_t<R, C, T>& a) { bool r = false; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) r = r | adj_nonzero(a.c[i][j]); return r; }
template <int R, int C, class T> KJ_FUNC void zero_if(mat_t<R, C, T>& a, bool on) { for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) a.c[i][j] = on ? T{} : a.c[i][j]; }
#endif

template <int R, int C, class T> KJ_FUNC vec_t<C, T> extract(const mat_t<R, C, T>& m, kj_int32 i) { vec_t<C, T> r; for (int j = 0; j < C; ++j) r.c[j] = m.c[i][j]; return r; }
template <int R, int C, class T> KJ_FUNC void adj_extract(const mat_t<R, C, T>& m, kj_int32 i, const vec_t<C, T>& ret, mat_t<R, C, T>& adj_m, const vec_t<C, T>& adj_ret) { for (int j = 0; j < C; ++j) adj_m.c[i][j] += adj_ret.c[j]; }
template <int R, int C, class T> KJ_FUNC T extract(const mat_t<R, C, T>& m, kj_int32 i, kj_int32 j) { return m.c[i][j]; }
template <int R, int C, class T> KJ_FUNC void adj_extract(const mat_t<R, C, T>& m, kj_int32 i, kj_int32 j, T ret, mat_t<R, C, T>& adj_m, T adj_ret) { adj_m.c[i][j] += adj_ret; }
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> insert(mat_t<R, C, T> m, kj_int32 i, const vec_t<C, T>& x) { for (int j = 0; j < C; ++j) m.c[i][j] = x.c[j]; return m; }
template <int R, int C, class T> KJ_FUNC void adj_insert(const mat_t<R, C, T>& m, kj_int32 i, const vec_t<C, T>& x, const mat_t<R, C, T>& ret, mat_t<R, C, T>& adj_m, vec_t<C, T>& adj_x, mat_t<R, C, T> adj_ret) {
  for (int j = 0; j < C; ++j) { adj_x.c[j] += adj_ret.c[i][j]; adj_ret.c[i][j] = T(0); }
  adj_m += adj_ret;
}
template <int R, int C, class T> KJ_FUNC mat_t<R, C, T> insert(mat_t<R, C, T> m, kj_int32 i, kj_int32 j, T x) { m.c[i][j] = x; return m; }
template <int R, int C, class T> KJ_FUNC void adj_insert(const mat_t<R, C, T>& m, kj_int32 i, kj_int32 j, T x, const mat_t<R, C, T>& ret, mat_t<R, C, T>& adj_m, T& adj_x, mat_t<R, C, T> adj_ret) {
  adj_x += adj_ret.c[i][j];
  adj_ret.c[i][j] = T(0);
  adj_m += adj_ret;
}
}  // namespace kj
