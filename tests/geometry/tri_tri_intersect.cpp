// intersect_tri_tri against an independent float64 oracle (an edge of one triangle crosses the
// other, by signed volumes; coplanar pairs by separating axes in the plane) on random
// triangles in float32 and float64, both argument orders, and on exact touching, piercing
// and coplanar configurations; NVRTC compiles it for sm_80 and sm_90.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "../builtins/nvrtc_check.hpp"

namespace tri_k {
using namespace kjit::dsl;
KJIT_MODULE(geometry_tri_tri)

KJIT_KERNEL(tri_f, (Array<Vec3f> a, Array<Vec3f> b, Array<int> out)) {
  Int i = tid();
  out[i] = intersect_tri_tri(a[3 * i], a[3 * i + 1], a[3 * i + 2], b[3 * i], b[3 * i + 1], b[3 * i + 2]);
}
KJIT_KERNEL(tri_d, (Array<Vec3d> a, Array<Vec3d> b, Array<int> out)) {
  Int i = tid();
  out[i] = intersect_tri_tri(a[3 * i], a[3 * i + 1], a[3 * i + 2], b[3 * i], b[3 * i + 1], b[3 * i + 2]);
}
}  // namespace tri_k

using namespace kjit;

namespace {
using V = std::array<double, 3>;
using Tri = std::array<V, 3>;
V sub(V a, V b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
V cross(V a, V b) { return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}; }
double dot(V a, V b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double orient(const Tri& t, V p) { return dot(cross(sub(t[1], t[0]), sub(t[2], t[0])), sub(p, t[0])); }

/// Does segment p-q (not in the triangle's plane) meet triangle t (closed)?
bool segment_meets(const Tri& t, V p, V q) {
  double sp = orient(t, p), sq = orient(t, q);
  if ((sp > 0 && sq > 0) || (sp < 0 && sq < 0) || (sp == 0 && sq == 0)) return false;
  double u = sp / (sp - sq);
  V x{p[0] + u * (q[0] - p[0]), p[1] + u * (q[1] - p[1]), p[2] + u * (q[2] - p[2])};
  V n = cross(sub(t[1], t[0]), sub(t[2], t[0]));
  double e0 = dot(cross(sub(t[1], t[0]), sub(x, t[0])), n), e1 = dot(cross(sub(t[2], t[1]), sub(x, t[1])), n);
  double e2 = dot(cross(sub(t[0], t[2]), sub(x, t[2])), n);
  return e0 >= 0 && e1 >= 0 && e2 >= 0;
}

/// Coplanar triangles: separated exactly when some in-plane edge normal separates them.
bool coplanar_overlap(const Tri& a, const Tri& b) {
  V n = cross(sub(a[1], a[0]), sub(a[2], a[0]));
  for (const Tri* t : {&a, &b})
    for (int k = 0; k < 3; ++k) {
      V axis = cross(n, sub((*t)[size_t((k + 1) % 3)], (*t)[size_t(k)]));
      double alo = 1e300, ahi = -1e300, blo = 1e300, bhi = -1e300;
      for (const V& v : a) { alo = std::min(alo, dot(axis, v)); ahi = std::max(ahi, dot(axis, v)); }
      for (const V& v : b) { blo = std::min(blo, dot(axis, v)); bhi = std::max(bhi, dot(axis, v)); }
      if (ahi < blo || bhi < alo) return false;
    }
  return true;
}

bool oracle(const Tri& a, const Tri& b) {
  bool coplanar = orient(a, b[0]) == 0 && orient(a, b[1]) == 0 && orient(a, b[2]) == 0;
  if (coplanar) return coplanar_overlap(a, b);
  for (int k = 0; k < 3; ++k) {
    if (segment_meets(b, a[size_t(k)], a[size_t((k + 1) % 3)])) return true;
    if (segment_meets(a, b[size_t(k)], b[size_t((k + 1) % 3)])) return true;
  }
  return false;
}

/// The smallest |signed distance| of a vertex of one triangle to the other's plane, relative
/// to the triangles' size: random pairs closer than this to touching are not compared.
double margin(const Tri& a, const Tri& b) {
  double m = 1e300;
  for (const V& v : b) m = std::min(m, std::abs(orient(a, v)));
  for (const V& v : a) m = std::min(m, std::abs(orient(b, v)));
  return m;
}

template <class T>
std::vector<int> run(const std::vector<std::pair<Tri, Tri>>& pairs) {
  using Vec = kjit::vec<3, T>;
  std::vector<Vec> a, b;
  for (const auto& [ta, tb] : pairs)
    for (int k = 0; k < 3; ++k) {
      a.push_back(Vec{{T(ta[size_t(k)][0]), T(ta[size_t(k)][1]), T(ta[size_t(k)][2])}});
      b.push_back(Vec{{T(tb[size_t(k)][0]), T(tb[size_t(k)][1]), T(tb[size_t(k)][2])}});
    }
  NdArray out = zeros<int>({int64_t(pairs.size())});
  if constexpr (std::is_same_v<T, float>) launch(tri_k::tri_f, int64_t(pairs.size()), from_vector(a), from_vector(b), out);
  else launch(tri_k::tri_d, int64_t(pairs.size()), from_vector(a), from_vector(b), out);
  return out.to_vector<int>();
}

/// The inputs as float32 rounds them, so that the oracle sees what the kernel sees.
Tri as_float(const Tri& t) {
  Tri r;
  for (int k = 0; k < 3; ++k) for (int c = 0; c < 3; ++c) r[size_t(k)][size_t(c)] = double(float(t[size_t(k)][size_t(c)]));
  return r;
}
}  // namespace

TEST_CASE("intersect_tri_tri matches the float64 oracle on random triangles, both orders, float32 and float64") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1), small(-0.3, 0.3);
  std::vector<std::pair<Tri, Tri>> pairs;
  for (int i = 0; i < 20000; ++i) {
    // Triangles around nearby centres: a good share of the pairs intersect.
    V ca{u(rng) * 0.1, u(rng) * 0.1, u(rng) * 0.1}, cb{u(rng) * 0.1, u(rng) * 0.1, u(rng) * 0.1};
    Tri a, b;
    for (int k = 0; k < 3; ++k) {
      a[size_t(k)] = {ca[0] + small(rng), ca[1] + small(rng), ca[2] + small(rng)};
      b[size_t(k)] = {cb[0] + small(rng), cb[1] + small(rng), cb[2] + small(rng)};
    }
    pairs.push_back({as_float(a), as_float(b)});
  }
  std::vector<std::pair<Tri, Tri>> swapped;
  for (const auto& [a, b] : pairs) swapped.push_back({b, a});
  std::vector<int> f = run<float>(pairs), d = run<double>(pairs), fs = run<float>(swapped), ds = run<double>(swapped);
  int hits = 0, compared = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (margin(pairs[i].first, pairs[i].second) < 1e-4) continue;
    ++compared;
    int want = oracle(pairs[i].first, pairs[i].second) ? 1 : 0;
    hits += want;
    CAPTURE(i);
    CHECK(d[i] == want);
    CHECK(ds[i] == want);
    CHECK(f[i] == want);
    CHECK(fs[i] == want);
  }
  CHECK(compared > 19000);
  CHECK(hits > 2000);
  CHECK(hits < compared - 2000);
}

TEST_CASE("intersect_tri_tri on touching, piercing and coplanar triangles") {
  Tri base{{{0, 0, 0}, {4, 0, 0}, {0, 4, 0}}};
  struct Item { Tri b; int want; const char* what; };
  std::vector<Item> items = {
      {{{{4, 0, 0}, {6, 0, 1}, {6, 2, 3}}}, 1, "a shared corner"},
      {{{{4, 0, 0}, {0, 4, 0}, {3, 3, 2}}}, 1, "a shared edge, the other out of plane"},
      {{{{1, 1, 0}, {1, 1, 3}, {2, 2, 3}}}, 1, "a corner on the face, the rest above"},
      {{{{1, 1, 1}, {1, 1, 3}, {2, 2, 3}}}, 0, "above the face"},
      {{{{1, 1, -1}, {1, 1, 3}, {2, 2, 3}}}, 1, "piercing the face"},
      {{{{-1, 1, -1}, {-1, 1, 3}, {-2, 2, 3}}}, 0, "crossing the plane beside the triangle"},
      {{{{3, 3, -1}, {3, 3, 1}, {5, 5, 0}}}, 0, "crossing the plane past the hypotenuse"},
      {{{{2, 2, -1}, {2, 2, 1}, {5, 5, 0}}}, 1, "meeting the hypotenuse at (2, 2, 0)"},
      {{{{1, 1, 0}, {5, 1, 0}, {1, 5, 0}}}, 1, "coplanar, overlapping"},
      {{{{5, 5, 0}, {8, 5, 0}, {5, 8, 0}}}, 0, "coplanar, apart"},
      {{{{1, 1, 0}, {2, 1, 0}, {1, 2, 0}}}, 1, "coplanar, inside"},
      {{{{-1, -1, 0}, {9, -1, 0}, {-1, 9, 0}}}, 1, "coplanar, containing"},
      {{{{4, 0, 0}, {8, 0, 0}, {4, 4, 0}}}, 1, "coplanar, a shared corner"},
      {{{{2, 2, 0}, {4, 4, 0}, {6, 0, 0}}}, 1, "coplanar, a corner on the hypotenuse"},
      {{{{0, -1, 0}, {4, -1, 0}, {2, -3, 0}}}, 0, "coplanar, below the first edge"},
      {{{{3, 3, 0}, {5, 3, 0}, {3, 5, 0}}}, 0, "coplanar, past the hypotenuse"},
  };
  for (int precision = 0; precision < 2; ++precision) {
    std::vector<std::pair<Tri, Tri>> pairs, swapped;
    for (const Item& it : items) {
      pairs.push_back({base, it.b});
      swapped.push_back({it.b, base});
    }
    std::vector<int> got = precision ? run<float>(pairs) : run<double>(pairs);
    std::vector<int> got_swapped = precision ? run<float>(swapped) : run<double>(swapped);
    for (size_t i = 0; i < items.size(); ++i) {
      INFO(std::string(items[i].what));
      CAPTURE(precision);
      CHECK(oracle(base, items[i].b) == (items[i].want == 1));  // the oracle agrees with the hand answer
      CHECK(got[i] == items[i].want);
      CHECK(got_swapped[i] == items[i].want);
    }
  }
}

TEST_CASE("intersect_tri_tri compiles with NVRTC for sm_80 and sm_90") {
  std::string text = test::module_text("geometry_tri_tri_nvrtc", {&tri_k::tri_f.def(), &tri_k::tri_d.def()}, true);
  for (const char* arch : {"sm_80", "sm_90"}) {
    CAPTURE(arch);
    CHECK(test::nvrtc_compile(text, arch) == "");
  }
}
