// kjit prelude: Perlin-style gradient noise in 1 to 4 dimensions, periodic noise, and curl
// noise. One routine computes the value with its exact gradient and Hessian, so that the
// forward functions and their adjoints (the gradient of noise; the Hessian-vector product of
// curl noise) come from the same code. The state selects the field and is not advanced.
//@chunk noise requires math vec
namespace kj {
template <int N, class T> struct perlin_t { T v; T g[N]; T h[N][N]; };

/// The pseudo-random gradient at lattice point `cell`: components in [-1, 1] from 8 hash
/// bits each.
template <int N, class T> KJ_FUNC void lattice_gradient(kj_uint32 seed, const kj_int32* cell, T* g) {
  kj_uint32 h = seed * 0x9E3779B9u + 0x7F4A7C15u;
  for (int d = 0; d < N; ++d) {
    h ^= (kj_uint32)cell[d] + 0x9E3779B9u + (h << 6) + (h >> 2);
    h = h * 747796405u + 2891336453u;
    h = ((h >> ((h >> 28u) + 4u)) ^ h) * 277803737u;
    h = (h >> 22u) ^ h;
  }
  for (int d = 0; d < N; ++d) g[d] = T((float)((h >> (8 * d)) & 0xffu) * (2.0f / 255.0f) - 1.0f);
}

/// Value, gradient and Hessian of noise at x; `period` (positive, or null) wraps the lattice.
template <int N, class T> KJ_FUNC_BIG perlin_t<N, T> perlin(kj_uint32 seed, const T* x, const kj_int32* period) {
  perlin_t<N, T> r = {};
  kj_int32 base[N];
  T t[N], w1[N], d1[N], s1[N];  // fade f(t), f'(t), f''(t) per dimension
  for (int d = 0; d < N; ++d) {
    T fl = floor(x[d]);
    base[d] = (kj_int32)fl;
    t[d] = x[d] - fl;
    T u = t[d];
    w1[d] = u * u * u * (u * (u * T(6) - T(15)) + T(10));
    d1[d] = T(30) * u * u * (u * (u - T(2)) + T(1));
    s1[d] = T(60) * u * (u * (T(2) * u - T(3)) + T(1));
  }
  KJ_NO_UNROLL for (int corner = 0; corner < (1 << N); ++corner) {
    kj_int32 cell[N];
    T off[N], w[N], dw[N], ddw[N];
    for (int d = 0; d < N; ++d) {
      int bit = (corner >> d) & 1;
      cell[d] = base[d] + bit;
      if (period) { kj_int32 p = period[d]; cell[d] = ((cell[d] % p) + p) % p; }
      off[d] = t[d] - T(bit);
      w[d] = bit ? w1[d] : T(1) - w1[d];
      dw[d] = bit ? d1[d] : -d1[d];
      ddw[d] = bit ? s1[d] : -s1[d];
    }
    T g[N];
    lattice_gradient<N, T>(seed, cell, g);
    T L = T(0);
    for (int d = 0; d < N; ++d) L += g[d] * off[d];
    T W = T(1), gradW[N], hessW[N][N];
    for (int d = 0; d < N; ++d) W *= w[d];
    for (int a = 0; a < N; ++a) {
      T p = dw[a];
      for (int d = 0; d < N; ++d) if (d != a) p *= w[d];
      gradW[a] = p;
      for (int b = 0; b < N; ++b) {
        T q = a == b ? ddw[a] : dw[a] * dw[b];
        for (int d = 0; d < N; ++d) if (d != a && d != b) q *= w[d];
        hessW[a][b] = q;
      }
    }
    r.v += W * L;
    for (int a = 0; a < N; ++a) {
      r.g[a] += gradW[a] * L + W * g[a];
      for (int b = 0; b < N; ++b) r.h[a][b] += hessW[a][b] * L + gradW[a] * g[b] + g[a] * gradW[b];
    }
  }
  return r;
}
template <class T> KJ_FUNC const T* coords(const T& x) { return &x; }
template <int N, class T> KJ_FUNC const T* coords(const vec_t<N, T>& x) { return x.c; }
template <class T> KJ_FUNC T* coords(T& x) { return &x; }
template <int N, class T> KJ_FUNC T* coords(vec_t<N, T>& x) { return x.c; }
template <class X> struct dims_of { static constexpr int value = 1; };
template <int N, class T> struct dims_of<vec_t<N, T>> { static constexpr int value = N; };

template <class X> KJ_FUNC auto noise(kj_uint32 state, const X& x) { return perlin<dims_of<X>::value>(state, coords(x), (const kj_int32*)nullptr).v; }
template <class X, class T> KJ_FUNC void adj_noise(kj_uint32 state, const X& x, T ret, X& adj_x, T adj_ret) {
  auto r = perlin<dims_of<X>::value>(state, coords(x), (const kj_int32*)nullptr);
  for (int d = 0; d < dims_of<X>::value; ++d) coords(adj_x)[d] += r.g[d] * adj_ret;
}
/// Tangents (forward mode): the gradient perlin() computes, dotted with the direction.
template <class X> KJ_FUNC auto tangent_noise(kj_uint32 state, const X& x, const X& dx) {
  auto r = perlin<dims_of<X>::value>(state, coords(x), (const kj_int32*)nullptr);
  auto s = r.g[0] * coords(dx)[0];
  for (int d = 1; d < dims_of<X>::value; ++d) s += r.g[d] * coords(dx)[d];
  return s;
}
template <class T> KJ_FUNC T pnoise(kj_uint32 state, T x, kj_int32 px) { kj_int32 p[1] = {px}; return perlin<1>(state, &x, p).v; }
template <class T> KJ_FUNC T pnoise(kj_uint32 state, const vec_t<2, T>& x, kj_int32 px, kj_int32 py) { kj_int32 p[2] = {px, py}; return perlin<2>(state, x.c, p).v; }
template <class T> KJ_FUNC T pnoise(kj_uint32 state, const vec_t<3, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz) { kj_int32 p[3] = {px, py, pz}; return perlin<3>(state, x.c, p).v; }
template <class T> KJ_FUNC T pnoise(kj_uint32 state, const vec_t<4, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, kj_int32 pt) { kj_int32 p[4] = {px, py, pz, pt}; return perlin<4>(state, x.c, p).v; }
template <class T> KJ_FUNC void adj_pnoise(kj_uint32 state, T x, kj_int32 px, T, T& adj_x, T g) { kj_int32 p[1] = {px}; adj_x += perlin<1>(state, &x, p).g[0] * g; }
template <class T> KJ_FUNC void adj_pnoise(kj_uint32 state, const vec_t<2, T>& x, kj_int32 px, kj_int32 py, T, vec_t<2, T>& adj_x, T g) { kj_int32 p[2] = {px, py}; auto r = perlin<2>(state, x.c, p); for (int d = 0; d < 2; ++d) adj_x.c[d] += r.g[d] * g; }
template <class T> KJ_FUNC void adj_pnoise(kj_uint32 state, const vec_t<3, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, T, vec_t<3, T>& adj_x, T g) { kj_int32 p[3] = {px, py, pz}; auto r = perlin<3>(state, x.c, p); for (int d = 0; d < 3; ++d) adj_x.c[d] += r.g[d] * g; }
template <class T> KJ_FUNC void adj_pnoise(kj_uint32 state, const vec_t<4, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, kj_int32 pt, T, vec_t<4, T>& adj_x, T g) { kj_int32 p[4] = {px, py, pz, pt}; auto r = perlin<4>(state, x.c, p); for (int d = 0; d < 4; ++d) adj_x.c[d] += r.g[d] * g; }
template <class T> KJ_FUNC T tangent_pnoise(kj_uint32 state, T x, kj_int32 px, T dx) { T g = T(0); adj_pnoise(state, x, px, T(0), g, T(1)); return g * dx; }
template <class T> KJ_FUNC T tangent_pnoise(kj_uint32 state, const vec_t<2, T>& x, kj_int32 px, kj_int32 py, const vec_t<2, T>& dx) { vec_t<2, T> g = {}; adj_pnoise(state, x, px, py, T(0), g, T(1)); return dot(g, dx); }
template <class T> KJ_FUNC T tangent_pnoise(kj_uint32 state, const vec_t<3, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, const vec_t<3, T>& dx) { vec_t<3, T> g = {}; adj_pnoise(state, x, px, py, pz, T(0), g, T(1)); return dot(g, dx); }
template <class T> KJ_FUNC T tangent_pnoise(kj_uint32 state, const vec_t<4, T>& x, kj_int32 px, kj_int32 py, kj_int32 pz, kj_int32 pt, const vec_t<4, T>& dx) { vec_t<4, T> g = {}; adj_pnoise(state, x, px, py, pz, pt, T(0), g, T(1)); return dot(g, dx); }

/// Curl noise: for 2-D input the rotated gradient (dn/dy, -dn/dx) of a noise potential; for
/// 3-D and 4-D input the curl (in x, y, z) of three noise potentials (seeds state, state+1,
/// state+2). Octave o samples at frequency lacunarity^o with weight gain^o (the curl of the
/// summed potential). When `adj_ret` is set, the adjoints of x, lacunarity and gain are added.
template <int N, class T, int M>
KJ_FUNC_BIG vec_t<M, T> curl_impl(kj_uint32 state, const vec_t<N, T>& x, kj_uint32 octaves, T lacunarity, T gain,
                                  const vec_t<M, T>* adj_ret, vec_t<N, T>* adj_x, T* adj_lac, T* adj_gain) {
  vec_t<M, T> out = {};
  T freq = T(1), amp = T(1), dfreq = T(0), damp = T(0);  // d freq / d lacunarity, d amp / d gain
  KJ_NO_UNROLL for (kj_uint32 o = 0; o < octaves; ++o) {
    vec_t<N, T> xs = x * freq;
    T C[M], J[M][N];  // the curl at xs and its Jacobian in xs
    if (N == 2) {
      auto r = perlin<N>(state, xs.c, (const kj_int32*)nullptr);
      C[0] = r.g[1];
      C[M - 1] = -r.g[0];
      for (int a = 0; a < N; ++a) { J[0][a] = r.h[1][a]; J[M - 1][a] = -r.h[0][a]; }
    } else {
      perlin_t<N, T> p[3];
      for (int k = 0; k < 3; ++k) p[k] = perlin<N>(state + kj_uint32(k), xs.c, (const kj_int32*)nullptr);
      // curl of (p0, p1, p2): (d_y p2 - d_z p1, d_z p0 - d_x p2, d_x p1 - d_y p0)
      const int pa[3] = {2, 0, 1}, da[3] = {1, 2, 0}, pb[3] = {1, 2, 0}, db[3] = {2, 0, 1};
      for (int c = 0; c < M; ++c) {
        C[c] = p[pa[c]].g[da[c]] - p[pb[c]].g[db[c]];
        for (int a = 0; a < N; ++a) J[c][a] = p[pa[c]].h[da[c]][a] - p[pb[c]].h[db[c]][a];
      }
    }
    for (int c = 0; c < M; ++c) out.c[c] += amp * freq * C[c];
    if (adj_ret) {
      T g_freq = T(0), g_amp = T(0);
      for (int c = 0; c < M; ++c) {
        T a = adj_ret->c[c], jx = T(0);
        for (int k = 0; k < N; ++k) { adj_x->c[k] += a * amp * freq * freq * J[c][k]; jx += J[c][k] * x.c[k]; }
        g_freq += a * amp * (C[c] + freq * jx);
        g_amp += a * freq * C[c];
      }
      *adj_lac += g_freq * dfreq;
      *adj_gain += g_amp * damp;
    }
    dfreq = dfreq * lacunarity + freq;  // d(lac^(o+1)) = lac d(lac^o) + lac^o
    damp = damp * gain + amp;
    freq = freq * lacunarity;
    amp = amp * gain;
  }
  return out;
}
template <int N, class T> KJ_FUNC vec_t<(N == 2 ? 2 : 3), T> curlnoise(kj_uint32 state, const vec_t<N, T>& x, kj_uint32 octaves, T lacunarity, T gain) {
  return curl_impl<N, T, (N == 2 ? 2 : 3)>(state, x, octaves, lacunarity, gain, nullptr, nullptr, nullptr, nullptr);
}
template <int N, class T, int M> KJ_FUNC void adj_curlnoise(kj_uint32 state, const vec_t<N, T>& x, kj_uint32 octaves, T lacunarity, T gain, const vec_t<M, T>&,
                                                            vec_t<N, T>& adj_x, T& adj_lac, T& adj_gain, const vec_t<M, T>& adj_ret) {
  curl_impl<N, T, M>(state, x, octaves, lacunarity, gain, &adj_ret, &adj_x, &adj_lac, &adj_gain);
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
    curl_impl<N, T, M>(state, x, octaves, lacunarity, gain, &e, &gx, &gl, &gg);
    out.c[m] = dot(gx, dx) + gl * dlac + gg * dgain;
  }
  return out;
}
}  // namespace kj
