// The builtins the DSL writes as dedicated statements (intrinsics.def) and the ones that
// take arrays: atomics of every kind, constructors and identities, casts of composites, len,
// zeros (local arrays, with gradients), array over an address, sample_cdf, lower_bound; and
// arrays and arithmetic of the small integer types.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"

namespace intrinsics {
using namespace kjit::dsl;
KJIT_MODULE(builtins_intrinsics)

KJIT_KERNEL(atomics_int, (Array<int32_t> v, Array<int32_t> acc, Array<int32_t> old)) {
  Int i = tid();
  Int x = v[i];
  atomic_add(acc, 0, x);
  atomic_sub(acc, 1, x);
  atomic_min(acc, 2, x);
  atomic_max(acc, 3, x);
  atomic_and(acc, 4, x);
  atomic_or(acc, 5, x);
  atomic_xor(acc, 6, x);
  old[i] = atomic_cas(acc, 7, 0, i + 1);  // exactly one thread finds 0
  atomic_exch(acc, 8, x);
}
// Exchanges whose previous value is read (a chain: each thread takes the one before it) and one
// whose value nothing reads (kj::atomic_exch_unread: a store on the cpu).
KJIT_KERNEL(exchange_chain, (Array<int32_t> slots, Array<int32_t> seen)) {
  Int i = tid();
  seen[i] = atomic_exch(slots, 0, i + 1);
  atomic_exch(slots, 1, i + 1);
}
KJIT_KERNEL(atomics_wide, (Array<double> v, Array<double> accd, Array<uint64_t> accu, Array<int8_t> acc8, Array<Vec3f> accv)) {
  Int i = tid();
  Double x = v[i];
  atomic_add(accd, 0, x);
  atomic_min(accd, 1, x);
  atomic_max(accd, 2, x);
  atomic_add(accu, 0, UInt64(i));
  atomic_or(accu, 1, UInt64(1) << UInt64(i));
  atomic_add(acc8, 0, Int8(1));
  atomic_max(acc8, 1, Int8(i));
  atomic_add(accv, 0, Vec3f(1.0f, Float(i), 2.0f));
}

KJIT_KERNEL(constructors, (Array<double> s, Array<Mat33d> m, Array<Quatd> q, Array<Transformd> t, Array<SpatialVectord> sv,
                           Array<Vec4d> v, Array<Mat22d> m2)) {
  Int i = tid();
  Double x = s[i];
  m[i] = identity<3, double>() * x;
  q[i] = quaternion(Vec3d(x, 0.0, 0.0), 1.0) + quat_identity<double>();
  t[i] = transformation(Vec3d(1.0, 2.0, x), quat_identity<double>()) + transform_identity<double>();
  sv[i] = spatial_vector(Vec3d(x), Vec3d(1.0, 2.0, 3.0));
  v[i] = vector(x, x * 2.0, 3.0, 4.0);
  m2[i] = matrix<2, 2>(x, 1.0, 2.0, 3.0);
}

KJIT_KERNEL(casts, (Array<Vec3f> a, Array<Vec3d> b, Array<mat<2, 2, int32_t>> c, Array<Quatd> d, Array<Quatf> q)) {
  Int i = tid();
  b[i] = cast<double>(a[i]);
  c[i] = cast<int32_t>(Mat22f(a[i].x(), a[i].y(), a[i].z(), 1.5f));
  d[i] = cast<double>(q[i]);
}

KJIT_KERNEL(lengths, (Array<float, 2> a, Array<int32_t> out)) {
  out[0] = len(Vec3f(0.0f));
  out[1] = len(Mat33f(0.0f));
  out[2] = len(a);
  auto local = zeros<Float, 5>();
  out[3] = len(local);
}

/// Sorts each thread's 6 values in a local array (dynamic indices) and returns weighted sums:
/// gradients flow through the local array's element stores and loads.
KJIT_KERNEL(local_sort, (Array<double, 2> x, Array<double> out)) {
  Int i = tid();
  auto a = zeros<Double, 6>();
  For(0, 6, [&](Int k) { a[k] = x(i, k); });
  For(0, 6, [&](Int p) {
    For(0, 5, [&](Int k) {
      Double l = a[k], r = a[k + 1];
      If(l > r, [&] {
        a[k] = r;
        a[k + 1] = l;
      });
    });
  });
  Var<double> s = 0.0;
  For(0, 6, [&](Int k) { s += a[k] * Double(k + 1); });
  out[i] = s;
}

KJIT_KERNEL(from_address, (UInt64 address, Int n, Array<float> out)) {
  auto view = array<float>(address, n);
  Int i = tid();
  out[i] = view[n - 1 - i] * 2.0f;
}

KJIT_KERNEL(searches, (Array<float> sorted, Array<float> values, Array<int32_t> first, Array<int32_t> ranged)) {
  Int i = tid();
  first[i] = lower_bound(sorted, values[i]);
  ranged[i] = lower_bound(sorted, 2, 5, values[i]);
}

KJIT_KERNEL(cdf_draws, (Array<float> cdf, Array<int32_t> out)) {
  Var<UInt32> s = rand_init(11, tid());
  out[tid()] = sample_cdf(s, cdf);
}

KJIT_KERNEL(small_ints, (Array<int8_t> a, Array<uint16_t> b, Array<Vec3i> v, Array<int64_t> c, Array<int8_t> oa, Array<uint16_t> ob,
                         Array<Vec3i> ov, Array<int64_t> oc)) {
  Int i = tid();
  oa[i] = a[i] * Int8(2) - Int8(1);
  ob[i] = (b[i] >> UInt16(1)) | UInt16(1);
  ov[i] = v[i] + Vec3i(1, 2, 3) * 2;
  oc[i] = c[i] * Int64(1000000) + Int64(i);
}
}  // namespace intrinsics

using namespace kjit;

TEST_CASE("atomics on int32: add, sub, min, max, and, or, xor, cas, exch") {
  const int n = 64;
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i) v[size_t(i)] = (i * 37) % 50 - 10;
  std::vector<int32_t> init{0, 0, 1000, -1000, -1, 0, 0, 0, 0};
  NdArray acc = from_vector(init), old = zeros<int32_t>({n});
  launch(intrinsics::atomics_int, n, from_vector(v), acc, old);
  auto a = acc.to_vector<int32_t>();
  int32_t sum = std::accumulate(v.begin(), v.end(), 0), all_and = -1, all_or = 0, all_xor = 0;
  for (int32_t x : v) all_and &= x, all_or |= x, all_xor ^= x;
  CHECK(a[0] == sum);
  CHECK(a[1] == -sum);
  CHECK(a[2] == *std::min_element(v.begin(), v.end()));
  CHECK(a[3] == *std::max_element(v.begin(), v.end()));
  CHECK(a[4] == all_and);
  CHECK(a[5] == all_or);
  CHECK(a[6] == all_xor);
  auto o = old.to_vector<int32_t>();
  CHECK(std::count(o.begin(), o.end(), 0) == 1);      // one winner saw 0
  CHECK(a[7] == 1 + int(std::find(o.begin(), o.end(), 0) - o.begin()));
  CHECK(std::find(v.begin(), v.end(), a[8]) != v.end());  // exch leaves one thread's value
}

TEST_CASE("exchanges: a read one hands each thread its predecessor's value, an unread one stores") {
  for (int n : {37, 100000}) {  // one chunk, and the pool
    CAPTURE(n);
    NdArray slots = zeros<int32_t>({2}), seen = zeros<int32_t>({n});
    launch(intrinsics::exchange_chain, n, slots, seen);
    std::vector<int32_t> values = seen.to_vector<int32_t>();
    const std::vector<int32_t> s = slots.to_vector<int32_t>();
    values.push_back(s[0]);  // the chain's last value stays in the slot
    std::sort(values.begin(), values.end());
    bool permutation = true;  // 0 (the slot's start) and every thread's i + 1, each once
    for (int k = 0; k <= n; ++k) permutation &= values[size_t(k)] == k;
    CHECK(permutation);
    CHECK(s[1] >= 1);
    CHECK(s[1] <= n);
  }
}

TEST_CASE("atomics on float64, uint64, int8 and vectors") {
  const int n = 40;
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[size_t(i)] = std::sin(i * 1.7);
  NdArray accd = from_vector(std::vector<double>{0, 10, -10}), accu = zeros<uint64_t>({2}), acc8 = from_vector(std::vector<int8_t>{0, -100}),
          accv = zeros<vec3f>({1});
  launch(intrinsics::atomics_wide, n, from_vector(v), accd, accu, acc8, accv);
  auto d = accd.to_vector<double>();
  CHECK(d[0] == doctest::Approx(std::accumulate(v.begin(), v.end(), 0.0)));
  CHECK(d[1] == *std::min_element(v.begin(), v.end()));
  CHECK(d[2] == *std::max_element(v.begin(), v.end()));
  auto u = accu.to_vector<uint64_t>();
  CHECK(u[0] == uint64_t(n * (n - 1) / 2));
  CHECK(u[1] == (uint64_t(1) << n) - 1);
  auto b = acc8.to_vector<int8_t>();
  CHECK(b[0] == n);
  CHECK(b[1] == n - 1);
  CHECK(accv.to_vector<vec3f>()[0][1] == float(n * (n - 1) / 2));
}

TEST_CASE("constructors and identities: vector, matrix, quaternion, transformation, spatial_vector") {
  NdArray m = zeros<mat33d>({2}), q = zeros<quatd>({2}), t = zeros<transformd>({2}), sv = zeros<spatial_vectord>({2}), v = zeros<vec4d>({2}),
          m2 = zeros<mat22d>({2});
  launch(intrinsics::constructors, 2, from_vector(std::vector<double>{2, 3}), m, q, t, sv, v, m2);
  auto mm = m.to_vector<mat33d>()[1];
  CHECK(mm[0][0] == 3.0);
  CHECK(mm[1][1] == 3.0);
  CHECK(mm[0][1] == 0.0);
  auto qq = q.to_vector<quatd>()[1];
  CHECK(qq.x == 3.0);
  CHECK(qq.w == 2.0);
  auto tt = t.to_vector<transformd>()[1];
  CHECK(tt.p[2] == 3.0);
  CHECK(tt.q.w == 2.0);
  auto s = sv.to_vector<spatial_vectord>()[0];
  CHECK(s[0] == 2.0);
  CHECK(s[5] == 3.0);
  CHECK(v.to_vector<vec4d>()[1][1] == 6.0);
  CHECK(m2.to_vector<mat22d>()[0][1][0] == 2.0);
}

TEST_CASE("cast converts the components of vectors, matrices and quaternions") {
  NdArray b = zeros<vec3d>({1}), c = zeros<mat<2, 2, int32_t>>({1}), d = zeros<quatd>({1});
  launch(intrinsics::casts, 1, from_vector(std::vector<vec3f>{vec3f{{1.5f, -2.25f, 3.75f}}}), b, c, d,
         from_vector(std::vector<quatf>{quatf{0.5f, 0, 0, 1}}));
  CHECK(b.to_vector<vec3d>()[0][1] == -2.25);
  auto m = c.to_vector<mat<2, 2, int32_t>>()[0];
  CHECK(m[0][0] == 1);
  CHECK(m[0][1] == -2);
  CHECK(m[1][1] == 1);
  CHECK(d.to_vector<quatd>()[0].x == 0.5);
}

TEST_CASE("len of vectors, matrices, arrays and local arrays") {
  NdArray out = zeros<int32_t>({4});
  launch(intrinsics::lengths, 1, zeros<float>({7, 2}), out);
  CHECK(out.to_vector<int32_t>() == std::vector<int32_t>{3, 3, 7, 5});
}

TEST_CASE("zeros: local arrays with dynamic indices, values and gradients") {
  const int n = 3;
  std::vector<double> x{0.5, -1, 2, 0.25, 3, -0.5, 1, 2, 3, 4, 5, 6, 0.9, 0.1, 0.5, 0.3, 0.7, -2};
  NdArray out = zeros<double>({n});
  launch(intrinsics::local_sort, n, from_vector(x, {n, 6}), out);
  auto o = out.to_vector<double>();
  for (int i = 0; i < n; ++i) {
    std::vector<double> r(x.begin() + 6 * i, x.begin() + 6 * i + 6);
    std::sort(r.begin(), r.end());
    double s = 0;
    for (int k = 0; k < 6; ++k) s += r[size_t(k)] * (k + 1);
    CHECK(o[size_t(i)] == doctest::Approx(s));
  }
  GradCheckReport r = check_gradients(intrinsics::local_sort, n, {from_vector(x, {n, 6}), zeros<double>({n})});
  INFO(r.str());
  CHECK(r.passed());
}

TEST_CASE("array(address, n) views memory passed as an address") {
  NdArray src = from_vector(std::vector<float>{1, 2, 3, 4});
  NdArray out = zeros<float>({4});
  launch(intrinsics::from_address, 4, uint64_t(reinterpret_cast<uintptr_t>(src.data())), 4, out);
  CHECK(out.to_vector<float>() == std::vector<float>{8, 6, 4, 2});
}

TEST_CASE("lower_bound and sample_cdf") {
  std::vector<float> sorted{0, 1, 1, 2, 5, 9}, values{-1, 1, 1.5, 5, 10};
  NdArray first = zeros<int32_t>({5}), ranged = zeros<int32_t>({5});
  launch(intrinsics::searches, 5, from_vector(sorted), from_vector(values), first, ranged);
  CHECK(first.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 3, 4, 6});
  CHECK(ranged.to_vector<int32_t>() == std::vector<int32_t>{2, 2, 3, 4, 5});
  const int n = 20000;
  NdArray draws = zeros<int32_t>({n});
  launch(intrinsics::cdf_draws, n, from_vector(std::vector<float>{0.25f, 0.5f, 1.0f}), draws);
  auto d = draws.to_vector<int32_t>();
  double c2 = double(std::count(d.begin(), d.end(), 2)) / n;
  CHECK(*std::min_element(d.begin(), d.end()) == 0);
  CHECK(*std::max_element(d.begin(), d.end()) == 2);
  CHECK(std::fabs(c2 - 0.5) < 0.02);
}

TEST_CASE("arrays and arithmetic of small and wide integer types") {
  NdArray oa = zeros<int8_t>({2}), ob = zeros<uint16_t>({2}), ov = zeros<vec3i>({2}), oc = zeros<int64_t>({2});
  launch(intrinsics::small_ints, 2, from_vector(std::vector<int8_t>{3, -60}), from_vector(std::vector<uint16_t>{65534, 8}),
         from_vector(std::vector<vec3i>{vec3i{{1, 2, 3}}, vec3i{{-1, 0, 1}}}), from_vector(std::vector<int64_t>{5000000, -7}), oa, ob, ov, oc);
  CHECK(oa.to_vector<int8_t>() == std::vector<int8_t>{5, -121});
  CHECK(ob.to_vector<uint16_t>() == std::vector<uint16_t>{32767, 5});
  CHECK(ov.to_vector<vec3i>()[1][2] == 7);
  CHECK(oc.to_vector<int64_t>()[0] == int64_t(5000000) * 1000000);
  CHECK(oc.to_vector<int64_t>()[1] == -7000000 + 1);
}
