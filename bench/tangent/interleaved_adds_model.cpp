// bench/tangent/interleaved_adds_model.cpp — a scalar C++ model of the springs tangent's adds on one
// thread: private copies of f and df as two arrays (what kjit does) against one interleaved array
// (f[i] and df[i] side by side, 24 bytes), to size that change before building it. Standalone:
//   g++ -O3 -march=native -ffp-contract=off bench/tangent/interleaved_adds_model.cpp -o /tmp/il && /tmp/il
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
struct V3 { float x, y, z; };
static inline void add(float* p, V3 v) { p[0] += v.x; p[1] += v.y; p[2] += v.z; }
int main() {
  const int np = 1 << 18, ns = 1 << 19;
  std::mt19937 rng(7);
  std::vector<int> ia(ns), ib(ns);
  for (int s = 0; s < ns; ++s) { ia[s] = rng() % np; ib[s] = (ia[s] + 1 + rng() % (np - 1)) % np; }
  std::vector<V3> x(np), dx(np);
  for (int i = 0; i < np; ++i) x[i] = {float(rng() % 1000) / 500 - 1, float(rng() % 1000) / 500 - 1, float(rng() % 1000) / 500 - 1}, dx[i] = {0.1f, 0.2f, 0.3f};
  std::vector<float> rest(ns, 0.3f), drest(ns, 0.1f);
  std::vector<float> f(3 * np), df(3 * np), fdf(6 * np);
  auto run = [&](bool inter) {
    for (int s = 0; s < ns; ++s) {
      int a = ia[s], b = ib[s];
      V3 d{x[a].x - x[b].x, x[a].y - x[b].y, x[a].z - x[b].z};
      V3 dd{dx[a].x - dx[b].x, dx[a].y - dx[b].y, dx[a].z - dx[b].z};
      float len = std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
      float dlen = (d.x * dd.x + d.y * dd.y + d.z * dd.z) / len;
      float k = 10.0f * (len - rest[s]) / len;
      float dk = (10.0f * (dlen - drest[s]) - k * dlen) / len;
      V3 F{d.x * k, d.y * k, d.z * k}, dF{dd.x * k + d.x * dk, dd.y * k + d.y * dk, dd.z * k + d.z * dk};
      V3 nF{-F.x, -F.y, -F.z}, ndF{-dF.x, -dF.y, -dF.z};
      if (inter) {
        add(&fdf[6 * a], nF); add(&fdf[6 * a + 3], ndF); add(&fdf[6 * b], F); add(&fdf[6 * b + 3], dF);
      } else {
        add(&f[3 * a], nF); add(&df[3 * a], ndF); add(&f[3 * b], F); add(&df[3 * b], dF);
      }
    }
  };
  for (int r = 0; r < 3; ++r) {
    for (bool inter : {false, true}) {
      double best = 1e9;
      for (int k = 0; k < 7; ++k) {
        auto t0 = std::chrono::steady_clock::now();
        run(inter);
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      printf("%s %.2f ms  ", inter ? "interleaved" : "separate", best);
    }
    printf("\n");
  }
  printf("%g %g\n", f[5] + df[7], fdf[5]);
}
