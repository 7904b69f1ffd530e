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
/// The double dot product: the componentwise products accumulated from 0 with muladd, as Warp.
template <int R, int C, class T> KJ_FUNC T ddot(const mat_t<R, C, T>& a, const mat_t<R, C, T>& b) { T s = T(0); for (int i = 0; i < R; ++i) for (int j = 0; j < C; ++j) s = muladd(a.c[i][j], b.c[i][j], s); return s; }
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

//@chunk determinant requires mat
namespace kj {
template <class T> KJ_FUNC T determinant(const mat_t<2, 2, T>& m) { return m.c[0][0] * m.c[1][1] - m.c[0][1] * m.c[1][0]; }
// row0 . (row1 x row2), in Warp's order of operations, so that signed zeros and rounding agree.
template <class T> KJ_FUNC T determinant(const mat_t<3, 3, T>& m) {
  return m.c[0][0] * (m.c[1][1] * m.c[2][2] - m.c[1][2] * m.c[2][1]) + m.c[0][1] * (m.c[1][2] * m.c[2][0] - m.c[1][0] * m.c[2][2]) +
         m.c[0][2] * (m.c[1][0] * m.c[2][1] - m.c[1][1] * m.c[2][0]);
}
/// The cofactors z[i][j] (d det / d m[i][j]) and the determinant of a 4x4 matrix, computed
/// as Warp does (USD's scheme), so that both agree with it bit for bit: the six 2x2 minors of
/// a pair of columns (products and difference in T, then kept in double), each 3x3 cofactor
/// as a double sum of element times minor, those of columns 0 and 1 rounded to T, and the
/// determinant the column-0 expansion summed in T from row 3 up. The rounded cofactors are
/// stored as T (a double rounded to T and widened again in one expression is what GCC 12's
/// SLP vectorizer drops the rounding of).
template <class T> struct cofactors44_t {
  T lo[4][2];       ///< columns 0 and 1, rounded to T
  double hi[4][2];  ///< columns 2 and 3
  T det;
  KJ_FUNC double z(int i, int j) const { return j < 2 ? double(lo[i][j]) : hi[i][j - 2]; }
};
template <class T> KJ_FUNC_BIG cofactors44_t<T> cofactors44(const mat_t<4, 4, T>& m) {
  cofactors44_t<T> r;
  // y[a][b]: the minor of rows a < b in columns (c0, c1); an unused slot stays unset.
  auto minors = [&](int c0, int c1, double (&y)[4][4]) {
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) y[a][b] = double(T(m.c[a][c0] * m.c[b][c1] - m.c[b][c0] * m.c[a][c1]));
  };
  // A cofactor from column `col`'s elements and the other column pair's minors y:
  // m[p][col] y(q, s) - m[q][col] y(p, s) +- m[s][col] y(p, q), rows p, q, s the other three
  // in the order Warp sums them, plus_last the last term's sign (a double sum).
  auto term3 = [&](const double (&y)[4][4], int col, int p, int q, int s, bool plus_last) {
    auto Y = [&](int a, int b) { return a < b ? y[a][b] : y[b][a]; };
    double t = double(m.c[p][col]) * Y(q, s) - double(m.c[q][col]) * Y(p, s);
    return plus_last ? t + double(m.c[s][col]) * Y(p, q) : t - double(m.c[s][col]) * Y(p, q);
  };
  double y[4][4];
  minors(0, 1, y);
  // Columns 2 and 3: element of column 2 (3) times minors of columns 0, 1.
  r.hi[3][1] = term3(y, 2, 0, 1, 2, true);
  r.hi[2][1] = term3(y, 2, 1, 3, 0, false);
  r.hi[1][1] = term3(y, 2, 0, 2, 3, true);
  r.hi[0][1] = term3(y, 2, 2, 3, 1, false);
  r.hi[3][0] = term3(y, 3, 1, 2, 0, false);
  r.hi[2][0] = term3(y, 3, 0, 1, 3, true);
  r.hi[1][0] = term3(y, 3, 2, 3, 0, false);
  r.hi[0][0] = term3(y, 3, 1, 2, 3, true);
  minors(2, 3, y);
  r.lo[3][0] = T(term3(y, 1, 1, 2, 0, false));
  r.lo[2][0] = T(term3(y, 1, 0, 1, 3, true));
  r.lo[1][0] = T(term3(y, 1, 2, 3, 0, false));
  r.lo[0][0] = T(term3(y, 1, 1, 2, 3, true));
  r.lo[3][1] = T(term3(y, 0, 0, 1, 2, true));
  r.lo[2][1] = T(term3(y, 0, 1, 3, 0, false));
  r.lo[1][1] = T(term3(y, 0, 0, 2, 3, true));
  r.lo[0][1] = T(term3(y, 0, 2, 3, 1, false));
  r.det = m.c[3][0] * r.lo[3][0] + m.c[2][0] * r.lo[2][0] + m.c[1][0] * r.lo[1][0] + m.c[0][0] * r.lo[0][0];
  return r;
}
template <class T> KJ_FUNC T determinant(const mat_t<4, 4, T>& m) { return cofactors44(m).det; }
/// d det / d A = the cofactor matrix (written out for 2x2 and 3x3).
template <class T> KJ_FUNC void adj_determinant(const mat_t<2, 2, T>& m, T ret, mat_t<2, 2, T>& adj_m, T g) {
  adj_m.c[0][0] += g * m.c[1][1]; adj_m.c[0][1] -= g * m.c[1][0]; adj_m.c[1][0] -= g * m.c[0][1]; adj_m.c[1][1] += g * m.c[0][0];
}
/// The 3x3 cofactor of element (i, j).
template <class T> KJ_FUNC T cofactor(const mat_t<3, 3, T>& m, int i, int j) {
  int i1 = (i + 1) % 3, i2 = (i + 2) % 3, j1 = (j + 1) % 3, j2 = (j + 2) % 3;
  return m.c[i1][j1] * m.c[i2][j2] - m.c[i1][j2] * m.c[i2][j1];
}
template <class T> KJ_FUNC void adj_determinant(const mat_t<3, 3, T>& m, T ret, mat_t<3, 3, T>& adj_m, T g) {
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) adj_m.c[i][j] += g * cofactor(m, i, j);
}
template <class T> KJ_FUNC void adj_determinant(const mat_t<4, 4, T>& m, T ret, mat_t<4, 4, T>& adj_m, T g) {
  cofactors44_t<T> c = cofactors44(m);
  for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) adj_m.c[i][j] += g * T(c.z(i, j));
}
}  // namespace kj

//@chunk inverse requires mat determinant div_approx transpose abs
namespace kj {
// Warp's inverses, in its order of operations (results agree bit for bit): the adjugate times
// the reciprocal of the determinant, and a zero matrix where the determinant is 0 or NaN
// (for 3x3: where it is 0; a NaN determinant gives NaNs). `approx` takes the reciprocal with
// the fast approximate division on CUDA.
template <class T, bool approx> KJ_FUNC mat_t<1, 1, T> inverse_impl(const mat_t<1, 1, T>& m) {
  T d = m.c[0][0];
  return (d > T(0) || d < T(0)) ? mat_t<1, 1, T>{{{approx ? div_approx(T(1), d) : T(1) / d}}} : mat_t<1, 1, T>{};
}
template <class T, bool approx> KJ_FUNC mat_t<2, 2, T> inverse_impl(const mat_t<2, 2, T>& m) {
  T d = determinant(m);
  if (!(d > T(0) || d < T(0))) return mat_t<2, 2, T>{};
  T r = approx ? div_approx(T(1), d) : T(1) / d;
  return mat_t<2, 2, T>{{{m.c[1][1] * r, -m.c[0][1] * r}, {-m.c[1][0] * r, m.c[0][0] * r}}};
}
template <class T, bool approx> KJ_FUNC mat_t<3, 3, T> inverse_impl(const mat_t<3, 3, T>& m) {
  T d = determinant(m);
  if (d == T(0)) return mat_t<3, 3, T>{};
  T r = approx ? div_approx(T(1), d) : T(1) / d;
  mat_t<3, 3, T> inv;
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 3; ++j) inv.c[j][i] = cofactor(m, i, j) * r;
  return inv;
}
// The 4x4 reciprocal and products are in double, as Warp's.
template <class T, bool approx> KJ_FUNC_BIG mat_t<4, 4, T> inverse_impl(const mat_t<4, 4, T>& m) {
  cofactors44_t<T> c = cofactors44(m);
  double d = double(c.det);
  if (!(abs(d) > 0.0)) return mat_t<4, 4, T>{};
  double r = approx ? div_approx(1.0, d) : 1.0 / d;
  mat_t<4, 4, T> inv;
  for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) inv.c[j][i] = T(c.z(i, j) * r);
  return inv;
}
template <int N, class T> KJ_FUNC mat_t<N, N, T> inverse(const mat_t<N, N, T>& m) { return inverse_impl<T, false>(m); }
template <int N, class T> KJ_FUNC mat_t<N, N, T> inverse_approx(const mat_t<N, N, T>& m) { return inverse_impl<T, true>(m); }
/// d(A^-1) = -A^-1 dA A^-1, so adj_A -= A^-T adj_ret A^-T. Where the forward gives the zero
/// matrix (a singular A), so does the derivative: the result is constant there.
template <int N, class T> KJ_FUNC void adj_inverse(const mat_t<N, N, T>& m, const mat_t<N, N, T>& ret, mat_t<N, N, T>& adj_m, const mat_t<N, N, T>& adj_ret) {
  mat_t<N, N, T> rt = transpose(ret);
  adj_m -= rt * adj_ret * rt;
}
template <int N, class T> KJ_FUNC void adj_inverse_approx(const mat_t<N, N, T>& m, const mat_t<N, N, T>& ret, mat_t<N, N, T>& adj_m, const mat_t<N, N, T>& adj_ret) { adj_inverse(m, ret, adj_m, adj_ret); }
}  // namespace kj
