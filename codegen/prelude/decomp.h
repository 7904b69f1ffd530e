// kjit prelude: matrix decompositions (svd3, svd2, qr3, eig3). Each is templated code run for
// a fixed number of Jacobi sweeps, so that the adjoint differentiates exactly the computed
// function with dual numbers (see dual.h); results come back as small structs.
//@chunk jacobi requires mat dual
namespace kj {
/// One-sided Jacobi on the columns of `b` (R x N): rotates pairs of columns until they are
/// orthogonal, accumulating the rotations in v (N x N). A fixed sweep count keeps the result
/// a smooth function of the input.
template <int R, int N, class T>
KJ_FUNC_BIG void jacobi_columns(mat_t<R, N, T>& b, mat_t<N, N, T>& v) {
  for (int i = 0; i < N; ++i) for (int j = 0; j < N; ++j) v.c[i][j] = T(i == j ? 1 : 0);
  KJ_NO_UNROLL for (int sweep = 0; sweep < 8; ++sweep) {
    for (int p = 0; p < N - 1; ++p) {
      for (int q = p + 1; q < N; ++q) {
        T alpha = T(0), beta = T(0), gamma = T(0);
        for (int i = 0; i < R; ++i) { alpha += b.c[i][p] * b.c[i][p]; beta += b.c[i][q] * b.c[i][q]; gamma += b.c[i][p] * b.c[i][q]; }
        if (gamma == T(0) && sweep > 0) continue;
        T theta = T(0.5) * atan2(T(2) * gamma, alpha - beta);
        T c = cos(theta), s = sin(theta);
        for (int i = 0; i < R; ++i) { T x = b.c[i][p], y = b.c[i][q]; b.c[i][p] = c * x + s * y; b.c[i][q] = c * y - s * x; }
        for (int i = 0; i < N; ++i) { T x = v.c[i][p], y = v.c[i][q]; v.c[i][p] = c * x + s * y; v.c[i][q] = c * y - s * x; }
      }
    }
  }
}
}  // namespace kj

//@chunk svd3 requires jacobi cross
namespace kj {
template <class T> struct svd3_t { mat_t<3, 3, T> U; vec_t<3, T> sigma; mat_t<3, 3, T> V; };
template <class T> KJ_FUNC svd3_t<T>& operator+=(svd3_t<T>& a, const svd3_t<T>& b) { a.U += b.U; a.sigma += b.sigma; a.V += b.V; return a; }
/// A = U diag(sigma) V^T with sigma descending and non-negative, U and V orthogonal.
template <class T> KJ_FUNC_BIG svd3_t<T> svd3(const mat_t<3, 3, T>& a) {
  svd3_t<T> r;
  mat_t<3, 3, T> b = a;
  jacobi_columns(b, r.V);
  for (int j = 0; j < 3; ++j) { T s = T(0); for (int i = 0; i < 3; ++i) s += b.c[i][j] * b.c[i][j]; r.sigma.c[j] = sqrt(s); }
  // Sort descending (columns of b and V move with their singular values).
  for (int k = 0; k < 2; ++k) for (int j = 0; j < 2 - k; ++j) if (r.sigma.c[j] < r.sigma.c[j + 1]) {
    T t = r.sigma.c[j]; r.sigma.c[j] = r.sigma.c[j + 1]; r.sigma.c[j + 1] = t;
    for (int i = 0; i < 3; ++i) { t = b.c[i][j]; b.c[i][j] = b.c[i][j + 1]; b.c[i][j + 1] = t; t = r.V.c[i][j]; r.V.c[i][j] = r.V.c[i][j + 1]; r.V.c[i][j + 1] = t; }
  }
  vec_t<3, T> u[3];
  for (int j = 0; j < 3; ++j) for (int i = 0; i < 3; ++i) u[j].c[i] = r.sigma.c[j] > T(0) ? b.c[i][j] / r.sigma.c[j] : T(0);
  if (!(r.sigma.c[2] > T(0))) u[2] = cross(u[0], u[1]);  // complete a rank-deficient basis
  for (int j = 0; j < 3; ++j) for (int i = 0; i < 3; ++i) r.U.c[i][j] = u[j].c[i];
  return r;
}
template <class T> KJ_FUNC void adj_svd3(const mat_t<3, 3, T>& a, const svd3_t<T>& ret, mat_t<3, 3, T>& adj_a, const svd3_t<T>& adj_ret) {
  adj_dual([](const dual_of<mat_t<3, 3, T>>& x) { return svd3(x); }, a, adj_a, adj_ret);
}
}  // namespace kj

//@chunk svd2 requires jacobi
namespace kj {
template <class T> struct svd2_t { mat_t<2, 2, T> U; vec_t<2, T> sigma; mat_t<2, 2, T> V; };
template <class T> KJ_FUNC svd2_t<T>& operator+=(svd2_t<T>& a, const svd2_t<T>& b) { a.U += b.U; a.sigma += b.sigma; a.V += b.V; return a; }
/// A = U diag(sigma) V^T with sigma descending and non-negative.
template <class T> KJ_FUNC_BIG svd2_t<T> svd2(const mat_t<2, 2, T>& a) {
  svd2_t<T> r;
  mat_t<2, 2, T> b = a;
  jacobi_columns(b, r.V);
  for (int j = 0; j < 2; ++j) r.sigma.c[j] = sqrt(b.c[0][j] * b.c[0][j] + b.c[1][j] * b.c[1][j]);
  if (r.sigma.c[0] < r.sigma.c[1]) {
    T t = r.sigma.c[0]; r.sigma.c[0] = r.sigma.c[1]; r.sigma.c[1] = t;
    for (int i = 0; i < 2; ++i) { t = b.c[i][0]; b.c[i][0] = b.c[i][1]; b.c[i][1] = t; t = r.V.c[i][0]; r.V.c[i][0] = r.V.c[i][1]; r.V.c[i][1] = t; }
  }
  for (int j = 0; j < 2; ++j) for (int i = 0; i < 2; ++i) r.U.c[i][j] = r.sigma.c[j] > T(0) ? b.c[i][j] / r.sigma.c[j] : T(0);
  if (!(r.sigma.c[1] > T(0))) { r.U.c[0][1] = -r.U.c[1][0]; r.U.c[1][1] = r.U.c[0][0]; }
  return r;
}
template <class T> KJ_FUNC void adj_svd2(const mat_t<2, 2, T>& a, const svd2_t<T>& ret, mat_t<2, 2, T>& adj_a, const svd2_t<T>& adj_ret) {
  adj_dual([](const dual_of<mat_t<2, 2, T>>& x) { return svd2(x); }, a, adj_a, adj_ret);
}
}  // namespace kj

//@chunk qr3 requires mat dual
namespace kj {
template <class T> struct qr3_t { mat_t<3, 3, T> Q; mat_t<3, 3, T> R; };
template <class T> KJ_FUNC qr3_t<T>& operator+=(qr3_t<T>& a, const qr3_t<T>& b) { a.Q += b.Q; a.R += b.R; return a; }
/// A = Q R with Q orthogonal and R upper triangular with a non-negative diagonal (modified
/// Gram-Schmidt on the columns).
template <class T> KJ_FUNC_BIG qr3_t<T> qr3(const mat_t<3, 3, T>& a) {
  qr3_t<T> r = {};
  mat_t<3, 3, T> v = a;
  for (int j = 0; j < 3; ++j) {
    for (int k = 0; k < j; ++k) {
      T d = T(0);
      for (int i = 0; i < 3; ++i) d += r.Q.c[i][k] * v.c[i][j];
      r.R.c[k][j] = d;
      for (int i = 0; i < 3; ++i) v.c[i][j] -= d * r.Q.c[i][k];
    }
    T n = T(0);
    for (int i = 0; i < 3; ++i) n += v.c[i][j] * v.c[i][j];
    n = sqrt(n);
    r.R.c[j][j] = n;
    for (int i = 0; i < 3; ++i) r.Q.c[i][j] = n > T(0) ? v.c[i][j] / n : T(0);
  }
  return r;
}
template <class T> KJ_FUNC void adj_qr3(const mat_t<3, 3, T>& a, const qr3_t<T>& ret, mat_t<3, 3, T>& adj_a, const qr3_t<T>& adj_ret) {
  adj_dual([](const dual_of<mat_t<3, 3, T>>& x) { return qr3(x); }, a, adj_a, adj_ret);
}
}  // namespace kj

//@chunk eig3 requires mat dual
namespace kj {
template <class T> struct eig3_t { mat_t<3, 3, T> Q; vec_t<3, T> d; };
template <class T> KJ_FUNC eig3_t<T>& operator+=(eig3_t<T>& a, const eig3_t<T>& b) { a.Q += b.Q; a.d += b.d; return a; }
/// Eigen-decomposition of a symmetric matrix, A = Q diag(d) Q^T, with d ascending (cyclic
/// Jacobi on the upper triangle; the lower one is taken to mirror it).
template <class T> KJ_FUNC_BIG eig3_t<T> eig3(const mat_t<3, 3, T>& m) {
  eig3_t<T> r;
  mat_t<3, 3, T> a;
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) a.c[i][j] = i <= j ? m.c[i][j] : m.c[j][i];
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) r.Q.c[i][j] = T(i == j ? 1 : 0);
  KJ_NO_UNROLL for (int sweep = 0; sweep < 8; ++sweep) {
    for (int p = 0; p < 2; ++p) for (int q = p + 1; q < 3; ++q) {
      if (a.c[p][q] == T(0) && sweep > 0) continue;
      T theta = T(0.5) * atan2(T(2) * a.c[p][q], a.c[q][q] - a.c[p][p]);
      T c = cos(theta), s = sin(theta);
      // a <- J^T a J with J the rotation in the (p, q) plane.
      for (int k = 0; k < 3; ++k) { T x = a.c[k][p], y = a.c[k][q]; a.c[k][p] = c * x - s * y; a.c[k][q] = s * x + c * y; }
      for (int k = 0; k < 3; ++k) { T x = a.c[p][k], y = a.c[q][k]; a.c[p][k] = c * x - s * y; a.c[q][k] = s * x + c * y; }
      for (int k = 0; k < 3; ++k) { T x = r.Q.c[k][p], y = r.Q.c[k][q]; r.Q.c[k][p] = c * x - s * y; r.Q.c[k][q] = s * x + c * y; }
    }
  }
  for (int i = 0; i < 3; ++i) r.d.c[i] = a.c[i][i];
  for (int k = 0; k < 2; ++k) for (int j = 0; j < 2 - k; ++j) if (r.d.c[j + 1] < r.d.c[j]) {
    T t = r.d.c[j]; r.d.c[j] = r.d.c[j + 1]; r.d.c[j + 1] = t;
    for (int i = 0; i < 3; ++i) { t = r.Q.c[i][j]; r.Q.c[i][j] = r.Q.c[i][j + 1]; r.Q.c[i][j + 1] = t; }
  }
  return r;
}
template <class T> KJ_FUNC void adj_eig3(const mat_t<3, 3, T>& a, const eig3_t<T>& ret, mat_t<3, 3, T>& adj_a, const eig3_t<T>& adj_ret) {
  adj_dual([](const dual_of<mat_t<3, 3, T>>& x) { return eig3(x); }, a, adj_a, adj_ret);
}
}  // namespace kj
