// kjit prelude: Perlin gradient noise in 1 to 4 dimensions, periodic noise and curl noise,
// computed as Warp computes them (its lattice hash and gradients, the same interpolation
// order), so that a float32 port gives Warp's values. One routine gives the value and, when
// asked, the exact gradient and Hessian; the state selects the field and is not advanced.
//@chunk noise requires random vec
namespace kj {
/// Value, and per `Order` the gradient (1) and Hessian (2) of noise at a point (arrays of
/// the orders not asked for have one unused element: copies stay small).
template <int N, class T, int Order> struct perlin_t { T v; T g[Order >= 1 ? N : 1]; T h[Order >= 2 ? N : 1][Order >= 2 ? N : 1]; };

/// The gradient at lattice point `cell`: Warp's hash of the cell (each coordinate times its
/// prime, xor-ed, the state added to the last product, as Warp's expression groups them),
/// then 2*randf - 1 in one dimension and a normalized sample of the unit square, cube or
/// hypercube in more. Computed in float32 as Warp's; float64 noise converts it.
template <int N> KJ_FUNC void lattice_gradient(kj_uint32 state, const kj_int32* cell, float* g) {
  const kj_uint32 primes[4] = {73856093u, 19349663u, 53471161u, 10000019u};
  kj_uint32 s = (kj_uint32)cell[N - 1] * primes[N - 1] + state;
  for (int d = 0; d < N - 1; ++d) s ^= (kj_uint32)cell[d] * primes[d];
  if (N == 1) {
    g[0] = 2.0f * unit_float(pcg(s)) + -1.0f;
    return;
  }
  for (int d = 0; d < N; ++d) {
    s = pcg(s);
    g[d] = unit_float(s) - 0.5f;
  }
  float l2 = g[0] * g[0];
  for (int d = 1; d < N; ++d) l2 = l2 + g[d] * g[d];
  float l = sqrt(l2);
  for (int d = 0; d < N; ++d) g[d] = l > 0.0f ? g[d] / l : 0.0f;
}

/// Warp's quintic fade 6t^5 - 15t^4 + 10t^3 and its first and second derivatives.
template <class T> KJ_FUNC T fade(T t) { return t * t * t * (t * (t * T(6) - T(15)) + T(10)); }
template <class T> KJ_FUNC T fade_d1(T t) { return T(30) * t * t * (t * (t - T(2)) + T(1)); }
template <class T> KJ_FUNC T fade_d2(T t) { return T(60) * t * (t * (t * T(2) - T(3)) + T(1)); }

/// Noise at the point whose cell has lower corner `lo` and upper corner `hi` (the periodic
/// form wraps them) and fractional position `t`. The 2^N corner values are interpolated
/// along x, then y, ..., each step (a1 - a0) * fade(t) + a0 as Warp's; the gradient follows
/// Warp's chain rule step by step, so float32 results are Warp's bit for bit on one libm.
template <int N, int Order, class T>
KJ_FUNC_BIG perlin_t<N, T, Order> perlin_cell(kj_uint32 state, const kj_int32* lo, const kj_int32* hi, const T* t) {
  constexpr int C = 1 << N, G = Order >= 1 ? N : 1, H = Order >= 2 ? N : 1;
  // Per corner, as structures of arrays; corner bit N-1-d says upper or lower along axis d,
  // so the pairs step d interpolates (along x first, as Warp) are the slots k and k + half:
  // contiguous, each step one vector operation. The first `half` slots keep the results.
  T v[C], g[G][C], h[H][H][C];
  KJ_NO_UNROLL for (int corner = 0; corner < C; ++corner) {
    kj_int32 cell[N];
    T off[N];
    for (int d = 0; d < N; ++d) {
      bool upper = (corner >> (N - 1 - d)) & 1;
      cell[d] = upper ? hi[d] : lo[d];
      off[d] = upper ? t[d] - T(1) : t[d];
    }
    float lg[N];
    lattice_gradient<N>(state, cell, lg);
    T dot = off[0] * T(lg[0]);
    for (int d = 1; d < N; ++d) dot = dot + off[d] * T(lg[d]);
    v[corner] = dot;
    if constexpr (Order >= 1)
      for (int a = 0; a < N; ++a) g[a][corner] = T(lg[a]);
    if constexpr (Order >= 2)
      for (int a = 0; a < N; ++a)
        for (int b = 0; b < N; ++b) h[a][b][corner] = T(0);
  }
  KJ_HOST_UNROLL for (int d = 0; d < N; ++d) {
    const int half = C >> (d + 1);
    const T s = fade(t[d]);
    T s1 = T(0), s2 = T(0);
    if constexpr (Order >= 1) s1 = fade_d1(t[d]);
    if constexpr (Order >= 2) s2 = fade_d2(t[d]);
    if constexpr (Order >= 2)
      for (int k = 0; k < half; ++k)
        for (int a = 0; a < N; ++a)
          for (int b = 0; b < N; ++b) {
            T x = (h[a][b][k + half] - h[a][b][k]) * s + h[a][b][k];
            if (a == d) x += (g[b][k + half] - g[b][k]) * s1;
            if (b == d) x += (g[a][k + half] - g[a][k]) * s1;
            if (a == d && b == d) x += (v[k + half] - v[k]) * s2;
            h[a][b][k] = x;
          }
    if constexpr (Order >= 1)
      KJ_HOST_UNROLL for (int a = 0; a < N; ++a) {
        const T e = T(a == d ? 1 : 0);  // Warp's direction vector of the step
        for (int k = 0; k < half; ++k)
          g[a][k] = ((g[a][k + half] - g[a][k]) * s + ((v[k + half] - v[k]) * s1) * e) + g[a][k];
      }
    for (int k = 0; k < half; ++k) v[k] = (v[k + half] - v[k]) * s + v[k];
  }
  perlin_t<N, T, Order> r;
  r.v = v[0];
  if constexpr (Order >= 1)
    for (int a = 0; a < N; ++a) r.g[a] = g[a][0];
  if constexpr (Order >= 2)
    for (int a = 0; a < N; ++a)
      for (int b = 0; b < N; ++b) r.h[a][b] = h[a][b][0];
  return r;
}
/// Noise at x; `period` (or null) wraps the lattice with Warp's remainder (which keeps the
/// sign: Warp's periodic noise repeats for coordinates >= 0).
template <int N, int Order, class T> KJ_FUNC perlin_t<N, T, Order> perlin(kj_uint32 state, const T* x, const kj_int32* period) {
  kj_int32 lo[N], hi[N];
  T t[N];
  for (int d = 0; d < N; ++d) {
    T fl = floor(x[d]);
    t[d] = x[d] - fl;
    lo[d] = (kj_int32)fl;
    hi[d] = lo[d] + 1;
    if (period) {
      lo[d] = rem(lo[d], period[d]);
      hi[d] = rem(lo[d] + 1, period[d]);
    }
  }
  return perlin_cell<N, Order, T>(state, lo, hi, t);
}
template <class T> KJ_FUNC const T* coords(const T& x) { return &x; }
template <int N, class T> KJ_FUNC const T* coords(const vec_t<N, T>& x) { return x.c; }
template <class T> KJ_FUNC T* coords(T& x) { return &x; }
template <int N, class T> KJ_FUNC T* coords(vec_t<N, T>& x) { return x.c; }
template <class X> struct dims_of { static constexpr int value = 1; };
template <int N, class T> struct dims_of<vec_t<N, T>> { static constexpr int value = N; };

template <class X> KJ_FUNC auto noise(kj_uint32 state, const X& x) { return perlin<dims_of<X>::value, 0>(state, coords(x), (const kj_int32*)nullptr).v; }
/// Adds the gradient of noise at x (periodic when `period` is set) times g to adj_x.
template <int N, class T> KJ_FUNC void add_noise_gradient(kj_uint32 state, const T* x, const kj_int32* period, T* adj_x, T g) {
  auto r = perlin<N, 1>(state, x, period);
  for (int d = 0; d < N; ++d) adj_x[d] += r.g[d] * g;
}
template <class X, class T> KJ_FUNC void adj_noise(kj_uint32 state, const X& x, T ret, X& adj_x, T adj_ret) {
  add_noise_gradient<dims_of<X>::value>(state, coords(x), (const kj_int32*)nullptr, coords(adj_x), adj_ret);
}
/// Tangents (forward mode): the gradient perlin() computes, dotted with the direction.
template <class X> KJ_FUNC auto tangent_noise(kj_uint32 state, const X& x, const X& dx) {
  auto r = perlin<dims_of<X>::value, 1>(state, coords(x), (const kj_int32*)nullptr);
  auto s = r.g[0] * coords(dx)[0];
  for (int d = 1; d < dims_of<X>::value; ++d) s += r.g[d] * coords(dx)[d];
  return s;
}
template <class T> KJ_FUNC T pnoise(kj_uint32 state, T x, kj_int32 px) { kj_int32 p[1] = {px}; return perlin<1, 0>(state, &x, p).v; }
template <class T> KJ_FUNC T pnoise(kj_uint32 state, const vec_t<2, T>& x, kj_int32 px, kj_int32 py) { kj_int32 p[2] = {px, py}; return perlin<2, 0>(state, x.c, p).v; }
template <class T> KJ_FUNC T pnoise(kj_uint32 state, const vec_t<3, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz) { kj_int32 p[3] = {px, py, pz}; return perlin<3, 0>(state, x.c, p).v; }
template <class T> KJ_FUNC T pnoise(kj_uint32 state, const vec_t<4, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, kj_int32 pt) { kj_int32 p[4] = {px, py, pz, pt}; return perlin<4, 0>(state, x.c, p).v; }
template <class T> KJ_FUNC void adj_pnoise(kj_uint32 state, T x, kj_int32 px, T, T& adj_x, T g) { kj_int32 p[1] = {px}; add_noise_gradient<1>(state, &x, p, &adj_x, g); }
template <class T> KJ_FUNC void adj_pnoise(kj_uint32 state, const vec_t<2, T>& x, kj_int32 px, kj_int32 py, T, vec_t<2, T>& adj_x, T g) { kj_int32 p[2] = {px, py}; add_noise_gradient<2>(state, x.c, p, adj_x.c, g); }
template <class T> KJ_FUNC void adj_pnoise(kj_uint32 state, const vec_t<3, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, T, vec_t<3, T>& adj_x, T g) { kj_int32 p[3] = {px, py, pz}; add_noise_gradient<3>(state, x.c, p, adj_x.c, g); }
template <class T> KJ_FUNC void adj_pnoise(kj_uint32 state, const vec_t<4, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, kj_int32 pt, T, vec_t<4, T>& adj_x, T g) { kj_int32 p[4] = {px, py, pz, pt}; add_noise_gradient<4>(state, x.c, p, adj_x.c, g); }
template <class T> KJ_FUNC T tangent_pnoise(kj_uint32 state, T x, kj_int32 px, T dx) { T g = T(0); adj_pnoise(state, x, px, T(0), g, T(1)); return g * dx; }
template <class T> KJ_FUNC T tangent_pnoise(kj_uint32 state, const vec_t<2, T>& x, kj_int32 px, kj_int32 py, const vec_t<2, T>& dx) { vec_t<2, T> g = {}; adj_pnoise(state, x, px, py, T(0), g, T(1)); return dot(g, dx); }
template <class T> KJ_FUNC T tangent_pnoise(kj_uint32 state, const vec_t<3, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, const vec_t<3, T>& dx) { vec_t<3, T> g = {}; adj_pnoise(state, x, px, py, pz, T(0), g, T(1)); return dot(g, dx); }
template <class T> KJ_FUNC T tangent_pnoise(kj_uint32 state, const vec_t<4, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, kj_int32 pt, const vec_t<4, T>& dx) { vec_t<4, T> g = {}; adj_pnoise(state, x, px, py, pz, pt, T(0), g, T(1)); return dot(g, dx); }

/// Curl noise as Warp defines it. Octave o samples noise gradients at frequency
/// lacunarity^o with weight gain^o (the gradient at the scaled point, not the gradient of the
/// scaled potential: no factor of the frequency). 2-D: the rotated sum (-s_y, s_x) of one
/// field's gradients. 3-D and 4-D: three fields whose states follow Warp's chain (the second
/// and third from rand_init(state, 10019689) and rand_init(., 13112221), the next octave's
/// first from the third), their weighted sums combined into a curl after the last octave.
template <int N, class T> KJ_FUNC_BIG vec_t<(N == 2 ? 2 : 3), T> curlnoise(kj_uint32 state, const vec_t<N, T>& x, kj_uint32 octaves, T lacunarity, T gain) {
  constexpr int M = N == 2 ? 2 : 3, F = M == 2 ? 1 : 3;  // components, fields
  T sum[F][N] = {};
  T freq = T(1), amp = T(1);
  KJ_NO_UNROLL for (kj_uint32 o = 0; o < octaves; ++o) {
    T pt[N];
    for (int k = 0; k < N; ++k) pt[k] = freq * x.c[k];
    // Unrolled on the host: the three fields' independent hash-sqrt-divide chains overlap.
    KJ_NO_UNROLL KJ_HOST_UNROLL for (int f = 0; f < F; ++f) {
      if (f > 0) state = rand_init(state, f == 1 ? 10019689u : 13112221u);
      auto r = perlin<N, 1>(state, pt, (const kj_int32*)nullptr);
      for (int k = 0; k < N; ++k) sum[f][k] += amp * r.g[k];
    }
    amp = amp * gain;
    freq = freq * lacunarity;
  }
  vec_t<M, T> out = {};
  if (M == 2) {
    out.c[0] = -sum[0][1];
    out.c[M - 1] = sum[0][0];
  } else {
    out.c[0] = sum[2 % F][1] - sum[1 % F][2];
    out.c[1] = sum[0][2] - sum[2 % F][0];
    out.c[M - 1] = sum[1 % F][0] - sum[0][1];
  }
  return out;
}
/// Adds adj_ret's pull-back through curlnoise to the adjoints of x, lacunarity and gain
/// (exact: the fields' Hessians give the x and lacunarity terms).
template <int N, class T, int M>
KJ_FUNC_BIG void curl_adjoint(kj_uint32 state, const vec_t<N, T>& x, kj_uint32 octaves, T lacunarity, T gain,
                              const vec_t<M, T>& adj_ret, vec_t<N, T>& adj_x, T& adj_lac, T& adj_gain) {
  constexpr int F = M == 2 ? 1 : 3;
  // The 3-D curl's component c is sum[fa[c]][ca[c]] - sum[fb[c]][cb[c]].
  const int fa[3] = {2, 0, 1}, ca[3] = {1, 2, 0}, fb[3] = {1, 2, 0}, cb[3] = {2, 0, 1};
  T freq = T(1), amp = T(1), dfreq = T(0), damp = T(0);  // d freq / d lacunarity, d amp / d gain
  KJ_NO_UNROLL for (kj_uint32 o = 0; o < octaves; ++o) {
    T pt[N];
    for (int k = 0; k < N; ++k) pt[k] = freq * x.c[k];
    KJ_NO_UNROLL for (int f = 0; f < F; ++f) {
      if (f > 0) state = rand_init(state, f == 1 ? 10019689u : 13112221u);
      auto r = perlin<N, 2>(state, pt, (const kj_int32*)nullptr);
      // d out_c / d g[f][k] = amp * w(c, f, k), with w the curl's +-1 pattern
      for (int c = 0; c < M; ++c) {
        T a = adj_ret.c[c];
        for (int k = 0; k < N; ++k) {
          T w = T(0);
          if (M == 2) w = (c == 0 && k == 1) ? T(-1) : (c == 1 && k == 0) ? T(1) : T(0);
          else w = (fa[c] == f && ca[c] == k ? T(1) : T(0)) - (fb[c] == f && cb[c] == k ? T(1) : T(0));
          if (w == T(0)) continue;
          T hx = T(0);
          for (int j = 0; j < N; ++j) {
            adj_x.c[j] += a * w * amp * freq * r.h[k][j];
            hx += r.h[k][j] * x.c[j];
          }
          adj_lac += a * w * amp * hx * dfreq;
          adj_gain += a * w * r.g[k] * damp;
        }
      }
    }
    dfreq = dfreq * lacunarity + freq;  // d(lac^(o+1)) = lac d(lac^o) + lac^o
    damp = damp * gain + amp;
    amp = amp * gain;
    freq = freq * lacunarity;
  }
}
template <int N, class T, int M> KJ_FUNC void adj_curlnoise(kj_uint32 state, const vec_t<N, T>& x, kj_uint32 octaves, T lacunarity, T gain, const vec_t<M, T>&,
                                                            vec_t<N, T>& adj_x, T& adj_lac, T& adj_gain, const vec_t<M, T>& adj_ret) {
  curl_adjoint<N, T, M>(state, x, octaves, lacunarity, gain, adj_ret, adj_x, adj_lac, adj_gain);
}
}  // namespace kj

//@chunk noise_tangent requires noise
namespace kj {
/// The tangent of curl noise: one adjoint sweep per output component (2 or 3), each row of
/// the Jacobian dotted with the direction (x, lacunarity, gain).
template <int N, class T> KJ_FUNC_BIG vec_t<(N == 2 ? 2 : 3), T> tangent_curlnoise(kj_uint32 state, const vec_t<N, T>& x, kj_uint32 octaves, T lacunarity, T gain,
                                                                               const vec_t<N, T>& dx, T dlac, T dgain) {
  constexpr int M = N == 2 ? 2 : 3;
  vec_t<M, T> out = {};
  KJ_NO_UNROLL for (int m = 0; m < M; ++m) {
    vec_t<M, T> e = {};
    e.c[m] = T(1);
    vec_t<N, T> gx = {};
    T gl = T(0), gg = T(0);
    curl_adjoint<N, T, M>(state, x, octaves, lacunarity, gain, e, gx, gl, gg);
    out.c[m] = dot(gx, dx) + gl * dlac + gg * dgain;
  }
  return out;
}
}  // namespace kj
