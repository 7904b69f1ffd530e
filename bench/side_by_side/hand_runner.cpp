// bench/side_by_side/hand_runner.cpp — the hand-written C++ loops of the side-by-side benchmark
// (forward and adjoint, OpenMP over all cores, built -O3 -march=native): the speed the machine
// gives plain code, against which kjit's cpu device is measured.
#include <omp.h>

#include <cmath>
#include <cstring>
#include <type_traits>

#include "runner.hpp"

using namespace side_by_side;

namespace {

struct V3 {
  float x, y, z;
};
inline V3 operator-(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline V3 operator*(V3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline V3 operator+(V3 a, V3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline float dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
/// Threaded: OpenMP atomics (a CAS loop per component). One thread: plain adds, what Warp's
/// cpu device does; the springs cases run both, to show what the atomics cost.
template <bool kThreaded>
inline void add_to(V3& t, V3 v) {
  if constexpr (kThreaded) {
#pragma omp atomic
    t.x += v.x;
#pragma omp atomic
    t.y += v.y;
#pragma omp atomic
    t.z += v.z;
  } else {
    t = t + v;
  }
}

// The adjoint accumulates into the gradients (+=), as kjit's launch_adjoint does.
void saxpy_fwd(const float* x, const float* y, float a, float* out, long n) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; ++i) out[i] = a * x[i] + y[i];
}
void saxpy_adj(float a, const float* g, float* gx, float* gy, long n) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; ++i) {
    gx[i] += a * g[i];
    gy[i] += g[i];
  }
}

template <bool kThreaded>
void springs_fwd(const V3* x, const int* ia, const int* ib, const float* rest, float k, V3* f, long ns) {
#pragma omp parallel for schedule(static) if (kThreaded)
  for (long s = 0; s < ns; ++s) {
    const int a = ia[s], b = ib[s];
    const V3 d = x[a] - x[b];
    const float len = std::sqrt(dot(d, d));
    const V3 force = d * (k * (len - rest[s]) / len);
    add_to<kThreaded>(f[a], force * -1.0f);
    add_to<kThreaded>(f[b], force);
  }
}
// L = (gf[b] - gf[a]) . force(d), force = d * k (len - rest) / len:
// dL/dd = s g + (g . d) k rest / len^3 d, with s = k (len - rest) / len.
template <bool kThreaded>
void springs_adj(const V3* x, const int* ia, const int* ib, const float* rest, float k, const V3* gf, V3* gx,
                 long ns) {
#pragma omp parallel for schedule(static) if (kThreaded)
  for (long s = 0; s < ns; ++s) {
    const int a = ia[s], b = ib[s];
    const V3 d = x[a] - x[b];
    const float len = std::sqrt(dot(d, d));
    const float sc = k * (len - rest[s]) / len;
    const V3 g = gf[b] - gf[a];
    const V3 gd = g * sc + d * (dot(g, d) * k * rest[s] / (len * len * len));
    add_to<kThreaded>(gx[a], gd);
    add_to<kThreaded>(gx[b], gd * -1.0f);
  }
}

constexpr int kMaxSteps = 64;  // the adjoint's per-lane tape of the loop's states

// No `omp simd` here: GCC 12's forced SIMD version of this loop ran 1.3x slower than its own choice.
void damp_fwd(const V3* v, float c, int steps, V3* out, long n) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    V3 w = v[i];
    for (int t = 0; t < steps; ++t) {
      const float len = std::sqrt(dot(w, w));
      w = len > 1.5f ? w * (0.5f / len) : w * c;
    }
    out[i] = w;
  }
}
// Step t maps w to w * 0.5 / |w| (Jacobian 0.5 / |w| (I - u u^T), u = w / |w|) or to w * c.
void damp_adj(const V3* v, float c, int steps, const V3* g, V3* gv, long n) {
  if (steps > kMaxSteps) throw std::runtime_error("damp_adj: more than 64 steps");
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    V3 ws[kMaxSteps];
    V3 w = v[i];
    for (int t = 0; t < steps; ++t) {
      ws[t] = w;
      const float len = std::sqrt(dot(w, w));
      w = len > 1.5f ? w * (0.5f / len) : w * c;
    }
    V3 gw = g[i];
    for (int t = steps - 1; t >= 0; --t) {
      const float len = std::sqrt(dot(ws[t], ws[t]));
      if (len > 1.5f) {
        const V3 u = ws[t] * (1.0f / len);
        gw = (gw - u * dot(u, gw)) * (0.5f / len);
      } else {
        gw = gw * c;
      }
    }
    gv[i] = gv[i] + gw;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Inputs in(data_dir_argument(argc, argv));
  const long ns = long(in.sx.size()), nsp = long(in.ia.size()), nd = long(in.dv.size() / 3);
  std::vector<float> out(in.sx.size()), gx(in.sx.size()), gy(in.sx.size());
  std::vector<float> f(in.px.size()), gpx(in.px.size());
  std::vector<float> dout(in.dv.size()), gdv(in.dv.size());
  auto v3 = [](const std::vector<float>& v) { return reinterpret_cast<const V3*>(v.data()); };
  auto v3m = [](std::vector<float>& v) { return reinterpret_cast<V3*>(v.data()); };
  auto zero = [](std::vector<float>& v) { std::memset(v.data(), 0, v.size() * sizeof(float)); };
  auto bytes = [](const std::vector<float>& v) { return std::make_pair<const void*, size_t>(v.data(), v.size() * 4); };

  std::map<std::string, Case> cases;
  cases["saxpy_fwd"] = {[&] { saxpy_fwd(in.sx.data(), in.sy.data(), kSaxpyA, out.data(), ns); },
                        [&] { zero(out); }, {bytes(out)}};
  cases["saxpy_adj"] = {[&] { saxpy_adj(kSaxpyA, in.sg.data(), gx.data(), gy.data(), ns); },
                        [&] { zero(gx), zero(gy); }, {bytes(gx), bytes(gy)}};
  // springs_fwd_1t / springs_adj_1t: one thread, plain adds.
  auto add_springs = [&](const std::string& suffix, auto threaded) {
    constexpr bool t = decltype(threaded)::value;
    cases["springs_fwd" + suffix] = {
        [&] { springs_fwd<t>(v3(in.px), in.ia.data(), in.ib.data(), in.rest.data(), kSpringK, v3m(f), nsp); },
        [&] { zero(f); }, {bytes(f)}};
    cases["springs_adj" + suffix] = {[&] {
                                       springs_adj<t>(v3(in.px), in.ia.data(), in.ib.data(), in.rest.data(), kSpringK,
                                                      v3(in.pg), v3m(gpx), nsp);
                                     },
                                     [&] { zero(gpx); }, {bytes(gpx)}};
  };
  add_springs("", std::true_type{});
  add_springs("_1t", std::false_type{});
  cases["damp_fwd"] = {[&] { damp_fwd(v3(in.dv), kDampC, kDampSteps, v3m(dout), nd); }, [&] { zero(dout); },
                       {bytes(dout)}};
  cases["damp_adj"] = {[&] { damp_adj(v3(in.dv), kDampC, kDampSteps, v3(in.dg), v3m(gdv), nd); },
                       [&] { zero(gdv); }, {bytes(gdv)}};
  std::fprintf(stderr, "hand loop: %d OpenMP threads\n", omp_get_max_threads());
  return serve(cases);
}
