// kjit prelude: matrix builtins and their adjoints, forward beside adjoint.
//@chunk transpose requires mat
namespace kj {
template <int R, int C, class T> KJ_FUNC mat_t<C, R, T> transpose(const mat_t<R, C, T>& m) { mat_t<C, R, T> t; for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) t.c[j][i] = m.c[i][j]; return t; }
template <int R, int C, class T> KJ_FUNC void adj_transpose(const mat_t<R, C, T>& m, const mat_t<C, R, T>& ret, mat_t<R, C, T>& adj_m, const mat_t<C, R, T>& adj_ret) { adj_m += transpose(adj_ret); }
}  // namespace kj

//@chunk trace requires mat
namespace kj {
// Starts from m[0][0], not 0, as Warp: an all -0 diagonal sums to -0.
template <int N, class T> KJ_FUNC T trace(const mat_t<N, N, T>& m) { T s = m.c[0][0]; for (int i = 1; i < N; ++i) s += m.c[i][i]; return s; }
template <int N, class T> KJ_FUNC void adj_trace(const mat_t<N, N, T>& m, T ret, mat_t<N, N, T>& adj_m, T adj_ret) { for (int i = 0; i < N; ++i) adj_m.c[i][i] += adj_ret; }
template <int N, class T> KJ_FUNC mat_t<N, N, T> diag(const vec_t<N, T>& v) { mat_t<N, N, T> m = {}; for (int i = 0; i < N; ++i) m.c[i][i] = v.c[i]; return m; }
template <int N, class T> KJ_FUNC void adj_diag(const vec_t<N, T>& v, const mat_t<N, N, T>& ret, vec_t<N, T>& adj_v, const mat_t<N, N, T>& adj_ret) { for (int i = 0; i < N; ++i) adj_v.c[i] += adj_ret.c[i][i]; }
template <int N, class T> KJ_FUNC vec_t<N, T> get_diag(const mat_t<N, N, T>& m) { vec_t<N, T> v; for (int i = 0; i < N; ++i) v.c[i] = m.c[i][i]; return v; }
template <int N, class T> KJ_FUNC void adj_get_diag(const mat_t<N, N, T>& m, const vec_t<N, T>& ret, mat_t<N, N, T>& adj_m, const vec_t<N, T>& adj_ret) { for (int i = 0; i < N; ++i) adj_m.c[i][i] += adj_ret.c[i]; }
/// The double dot product: sum of the componentwise products.
template <int R, int C, class T> KJ_FUNC T ddot(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { T s = T(0); for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) s += a.c[i][j] * b.c[i][j]; return s; }
template <int R, int C, class T> KJ_FUNC void adj_ddot(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b, T ret, mat_t<R, C, T>& adj_a, mat_t<R, C, T>& adj_b, T adj_ret) {
  for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) { adj_a.c[i][j] += b.c[i][j] * adj_ret; adj_b.c[i][j] += a.c[i][j] * adj_ret; }
}
/// The cross-product matrix: skew(a) * b == cross(a, b).
template <class T> KJ_FUNC mat_t<3, 3, T> skew(const vec_t<3, T>& a) { return mat_t<3, 3, T>{{{T(0), -a.c[2], a.c[1]}, {a.c[2], T(0), -a.c[0]}, {-a.c[1], a.c[0], T(0)}}}; }
template <class T> KJ_FUNC void adj_skew(const vec_t<3, T>& a, const mat_t<3, 3, T>& ret, vec_t<3, T>& adj_a, const mat_t<3, 3, T>& g) {
  adj_a.c[0] += g.c[2][1] - g.c[1][2]; adj_a.c[1] += g.c[0][2] - g.c[2][0]; adj_a.c[2] += g.c[1][0] - g.c[0][1];
}
}  // namespace kj

//@chunk from_vectors requires mat
namespace kj {
// matrix_from_cols(v0, v1, ...) places the vectors as columns; matrix_from_rows as rows.
template <int N, class T> KJ_FUNC mat_t<N, 2, T> matrix_from_cols(const vec_t<N, T>& a, const vec_t<N, T>& b) { mat_t<N, 2, T> m; for (int i = 0; i < N; ++i) { m.c[i][0] = a.c[i]; m.c[i][1] = b.c[i]; } return m; }
template <int N, class T> KJ_FUNC mat_t<N, 3, T> matrix_from_cols(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& c) { mat_t<N, 3, T> m; for (int i = 0; i < N; ++i) { m.c[i][0] = a.c[i]; m.c[i][1] = b.c[i]; m.c[i][2] = c.c[i]; } return m; }
template <int N, class T> KJ_FUNC mat_t<N, 4, T> matrix_from_cols(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& c, const vec_t<N, T>& d) { mat_t<N, 4, T> m; for (int i = 0; i < N; ++i) { m.c[i][0] = a.c[i]; m.c[i][1] = b.c[i]; m.c[i][2] = c.c[i]; m.c[i][3] = d.c[i]; } return m; }
template <int N, class T> KJ_FUNC mat_t<2, N, T> matrix_from_rows(const vec_t<N, T>& a, const vec_t<N, T>& b) { mat_t<2, N, T> m; for (int i = 0; i < N; ++i) { m.c[0][i] = a.c[i]; m.c[1][i] = b.c[i]; } return m; }
template <int N, class T> KJ_FUNC mat_t<3, N, T> matrix_from_rows(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& c) { mat_t<3, N, T> m; for (int i = 0; i < N; ++i) { m.c[0][i] = a.c[i]; m.c[1][i] = b.c[i]; m.c[2][i] = c.c[i]; } return m; }
template <int N, class T> KJ_FUNC mat_t<4, N, T> matrix_from_rows(const vec_t<N, T>& a, const vec_t<N, T>& b, const vec_t<N, T>& c, const vec_t<N, T>& d) { mat_t<4, N, T> m; for (int i = 0; i < N; ++i) { m.c[0][i] = a.c[i]; m.c[1][i] = b.c[i]; m.c[2][i] = c.c[i]; m.c[3][i] = d.c[i]; } return m; }
template <int N, class T> KJ_FUNC void adj_matrix_from_cols(const vec_t<N, T>&, const vec_t<N, T>&, const mat_t<N, 2, T>&, vec_t<N, T>& a, vec_t<N, T>& b, const mat_t<N, 2, T>& g) { for (int i = 0; i < N; ++i) { a.c[i] += g.c[i][0]; b.c[i] += g.c[i][1]; } }
template <int N, class T> KJ_FUNC void adj_matrix_from_cols(const vec_t<N, T>&, const vec_t<N, T>&, const vec_t<N, T>&, const mat_t<N, 3, T>&, vec_t<N, T>& a, vec_t<N, T>& b, vec_t<N, T>& c, const mat_t<N, 3, T>& g) { for (int i = 0; i < N; ++i) { a.c[i] += g.c[i][0]; b.c[i] += g.c[i][1]; c.c[i] += g.c[i][2]; } }
template <int N, class T> KJ_FUNC void adj_matrix_from_cols(const vec_t<N, T>&, const vec_t<N, T>&, const vec_t<N, T>&, const vec_t<N, T>&, const mat_t<N, 4, T>&, vec_t<N, T>& a, vec_t<N, T>& b, vec_t<N, T>& c, vec_t<N, T>& d, const mat_t<N, 4, T>& g) { for (int i = 0; i < N; ++i) { a.c[i] += g.c[i][0]; b.c[i] += g.c[i][1]; c.c[i] += g.c[i][2]; d.c[i] += g.c[i][3]; } }
template <int N, class T> KJ_FUNC void adj_matrix_from_rows(const vec_t<N, T>&, const vec_t<N, T>&, const mat_t<2, N, T>&, vec_t<N, T>& a, vec_t<N, T>& b, const mat_t<2, N, T>& g) { for (int i = 0; i < N; ++i) { a.c[i] += g.c[0][i]; b.c[i] += g.c[1][i]; } }
template <int N, class T> KJ_FUNC void adj_matrix_from_rows(const vec_t<N, T>&, const vec_t<N, T>&, const vec_t<N, T>&, const mat_t<3, N, T>&, vec_t<N, T>& a, vec_t<N, T>& b, vec_t<N, T>& c, const mat_t<3, N, T>& g) { for (int i = 0; i < N; ++i) { a.c[i] += g.c[0][i]; b.c[i] += g.c[1][i]; c.c[i] += g.c[2][i]; } }
template <int N, class T> KJ_FUNC void adj_matrix_from_rows(const vec_t<N, T>&, const vec_t<N, T>&, const vec_t<N, T>&, const vec_t<N, T>&, const mat_t<4, N, T>&, vec_t<N, T>& a, vec_t<N, T>& b, vec_t<N, T>& c, vec_t<N, T>& d, const mat_t<4, N, T>& g) { for (int i = 0; i < N; ++i) { a.c[i] += g.c[0][i]; b.c[i] += g.c[1][i]; c.c[i] += g.c[2][i]; d.c[i] += g.c[3][i]; } }
}  // namespace kj

//@chunk determinant requires mat dual
namespace kj {
template <class T> KJ_FUNC T determinant(const mat_t<2, 2, T>& m) { return m.c[0][0] * m.c[1][1] - m.c[0][1] * m.c[1][0]; }
// row0 . (row1 x row2), in Warp's order of operations, so that signed zeros and rounding agree.
template <class T> KJ_FUNC T determinant(const mat_t<3, 3, T>& m) {
  return m.c[0][0] * (m.c[1][1] * m.c[2][2] - m.c[1][2] * m.c[2][1]) + m.c[0][1] * (m.c[1][2] * m.c[2][0] - m.c[1][0] * m.c[2][2]) +
         m.c[0][2] * (m.c[1][0] * m.c[2][1] - m.c[1][1] * m.c[2][0]);
}
template <class T> KJ_FUNC T determinant(const mat_t<4, 4, T>& m) {
  T s = T(0);
  for (int k = 0; k < 4; ++k) {  // expansion along the first row
    mat_t<3, 3, T> minor;
    for (int i = 1; i < 4; ++i) for (int j = 0, c = 0; j < 4; ++j) if (j != k) minor.c[i - 1][c++] = m.c[i][j];
    T d = m.c[0][k] * determinant(minor);
    s = (k % 2) ? s - d : s + d;
  }
  return s;
}
/// d det / d A = the cofactor matrix (written out for 2x2 and 3x3; 4x4 through dual numbers).
template <class T> KJ_FUNC void adj_determinant(const mat_t<2, 2, T>& m, T ret, mat_t<2, 2, T>& adj_m, T g) {
  adj_m.c[0][0] += g * m.c[1][1]; adj_m.c[0][1] -= g * m.c[1][0]; adj_m.c[1][0] -= g * m.c[0][1]; adj_m.c[1][1] += g * m.c[0][0];
}
template <class T> KJ_FUNC void adj_determinant(const mat_t<3, 3, T>& m, T ret, mat_t<3, 3, T>& adj_m, T g) {
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) {
    int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
    adj_m.c[i][j] += g * (m.c[i1][j1] * m.c[i2][j2] - m.c[i1][j2] * m.c[i2][j1]);
  }
}
template <class T> KJ_FUNC void adj_determinant(const mat_t<4, 4, T>& m, T ret, mat_t<4, 4, T>& adj_m, T adj_ret) {
  adj_dual([&](const dual_of<mat_t<4, 4, T>>& x) { return determinant(x); }, m, adj_m, adj_ret);
}
}  // namespace kj

//@chunk inverse requires mat determinant div_approx transpose abs
namespace kj {
/// The inverse by Gauss-Jordan elimination with partial pivoting; a singular matrix gives
/// zeros (as Warp). `approx` divides with the fast approximate division on CUDA.
template <int N, class T, bool approx = false> KJ_FUNC_BIG mat_t<N, N, T> inverse_impl(mat_t<N, N, T> a) {
  mat_t<N, N, T> inv = {};
  for (int i = 0; i < N; ++i) inv.c[i][i] = T(1);
  KJ_NO_UNROLL for (int col = 0; col < N; ++col) {
    int p = col;
    for (int r = col + 1; r < N; ++r) if (abs(a.c[r][col]) > abs(a.c[p][col])) p = r;
    if (a.c[p][col] == T(0)) { mat_t<N, N, T> z = {}; return z; }
    for (int j = 0; j < N; ++j) { T t = a.c[col][j]; a.c[col][j] = a.c[p][j]; a.c[p][j] = t; t = inv.c[col][j]; inv.c[col][j] = inv.c[p][j]; inv.c[p][j] = t; }
    T s = approx ? div_approx(T(1), a.c[col][col]) : T(1) / a.c[col][col];
    for (int j = 0; j < N; ++j) { a.c[col][j] *= s; inv.c[col][j] *= s; }
    for (int r = 0; r < N; ++r) {
      if (r == col) continue;
      T f = a.c[r][col];
      for (int j = 0; j < N; ++j) { a.c[r][j] -= f * a.c[col][j]; inv.c[r][j] -= f * inv.c[col][j]; }
    }
  }
  return inv;
}
template <int N, class T> KJ_FUNC mat_t<N, N, T> inverse(const mat_t<N, N, T>& m) { return inverse_impl<N, T, false>(m); }
template <int N, class T> KJ_FUNC mat_t<N, N, T> inverse_approx(const mat_t<N, N, T>& m) { return inverse_impl<N, T, true>(m); }
/// d(A^-1) = -A^-1 dA A^-1, so adj_A -= A^-T adj_ret A^-T.
template <int N, class T> KJ_FUNC void adj_inverse(const mat_t<N, N, T>& m, const mat_t<N, N, T>& ret, mat_t<N, N, T>& adj_m, const mat_t<N, N, T>& adj_ret) {
  mat_t<N, N, T> rt = transpose(ret);
  adj_m -= rt * adj_ret * rt;
}
template <int N, class T> KJ_FUNC void adj_inverse_approx(const mat_t<N, N, T>& m, const mat_t<N, N, T>& ret, mat_t<N, N, T>& adj_m, const mat_t<N, N, T>& adj_ret) { adj_inverse(m, ret, adj_m, adj_ret); }
}  // namespace kj
