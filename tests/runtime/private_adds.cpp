// Privatized accumulation on the cpu: which arrays codegen lists as add-only, and launches that
// add into private per-thread copies (forced, by the rule, or not at all) give the same exact
// sums, for every element kind, strided and 2-D targets, adjoint arrays, and while other host
// threads launch into the same array.
#include <doctest/doctest.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "kjit/runtime/internal/private_adds.hpp"
#include "kjit/runtime/internal/thread_pool.hpp"

using namespace kjit;
using kjit::detail::PrivatizeMode;

namespace pa_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_private_adds)

// Whole-number weights below 2^24: every order of the adds gives the same float sum.
KJIT_KERNEL(scatter_f, (Array<Int> idx, Array<Float> t)) {
  Int i = tid();
  atomic_add(t, idx[i], Float(i % 7 + 1));
  atomic_sub(t, idx[(i + 3) % idx.shape(0)], 2.0f);
}
KJIT_KERNEL(scatter_v3, (Array<Int> idx, Array<Vec3f> t)) {
  Int i = tid();
  t[idx[i]] += Vec3f(1.0f, 2.0f, -1.0f) * Float(i % 5);
  atomic_sub(t, idx[(i + 1) % idx.shape(0)], Vec3f(0.0f, 1.0f, 4.0f));
}
// Doubles that are not whole: sums agree to rounding only.
KJIT_KERNEL(scatter_d, (Array<Int> idx, Array<Double> w, Array<Double> t)) {
  Int i = tid();
  atomic_add(t, idx[i], w[i]);
}
KJIT_KERNEL(scatter_m, (Array<Int> idx, Array<Mat22d> t, Array<Quatf> q)) {
  Int i = tid();
  Double s = Double(i % 3 + 1);
  atomic_add(t, idx[i], Mat22d(s, 1.0, -s, 0.5));
  atomic_add(q, idx[i], Quatf(1.0f, 0.0f, -2.0f, 3.0f));
}
KJIT_KERNEL(scatter_i, (Array<Int> idx, Array<Int> t, Array<UInt64> wide)) {
  Int i = tid();
  atomic_add(t, idx[i], i % 11 - 5);
  atomic_add(wide, idx[i], UInt64(i) * UInt64(1000003));
}
KJIT_KERNEL(scatter_2d, (Array<Int> idx, Array<Vec3f, 2> t)) {
  Int i = tid();
  Int k = idx[i];
  atomic_add(t, k % t.shape(0), k / t.shape(0) % t.shape(1), Vec3f(Float(i % 3), 1.0f, 2.0f));
}
// The adjoint adds into d x at other threads' indices: privatizable there.
KJIT_KERNEL(gather, (Array<Vec3f> x, Array<Int> idx, Array<Vec3f> out)) {
  Int i = tid();
  out[i] = x[idx[i]] * 2.0f + x[idx[(i + 5) % idx.shape(0)]];
}
// The same gathers, the second under a branch on the thread: the adjoint runs through a lane
// function (blocks of lanes, the gather's adjoint add under a mask) into the private copy.
KJIT_KERNEL(gather_if, (Array<Vec3f> x, Array<Int> idx, Array<Vec3f> out)) {
  Int i = tid();
  Var<Vec3f> y = x[idx[i]] * 2.0f;
  If(i % 3 != 1, [&] { y = y + x[idx[(i + 5) % idx.shape(0)]]; });
  out[i] = y;
}
// The gathers again, scaled by a value parameter: an adjoint that wants d s runs the summing
// path (the strided body, over whole value-sum blocks) into the private copies of d x.
KJIT_KERNEL(gather_scaled, (Array<Vec3f> x, Array<Int> idx, Float s, Array<Vec3f> out)) {
  Int i = tid();
  out[i] = x[idx[i]] * s + x[idx[(i + 5) % idx.shape(0)]];
}

// Not privatizable: each does something besides adding.
KJIT_KERNEL(reads_target, (Array<Int> idx, Array<Float> t, Array<Float> out)) {
  Int i = tid();
  atomic_add(t, idx[i], 1.0f);
  out[i] = t[i];
}
KJIT_KERNEL(claims_slots, (Array<Int> counter, Array<Int> out)) {
  Int slot = atomic_add(counter, 0, 1);  // the result is used: a private count would repeat slots
  out[slot] = tid();
}
KJIT_KERNEL(add_counted, (Array<Int> idx, Array<Float> t, Array<Float> old)) {
  old[tid()] = atomic_add(t, idx[tid()], 1.0f);  // the result is used: never privatized
}
KJIT_KERNEL(maxes, (Array<Int> idx, Array<Float> t)) { atomic_max(t, idx[tid()], Float(tid())); }
KJIT_KERNEL(halves, (Array<Int> idx, Array<Half> t)) { atomic_add(t, idx[tid()], Half(1.0f)); }
KJIT_KERNEL(own_reads, (Array<Float> x, Array<Float> out)) { out[tid()] = x[tid()] * 3.0f; }
inline const auto add_one = func("add_one", [](Array<float> t, Int i) {
  atomic_add(t, i, 1.0f);
  return i;
});
KJIT_KERNEL(through_function, (Array<Int> idx, Array<Float> t)) { add_one(t, idx[tid()]); }
/// Warp's accumulate-in-place idiom: every thread adds at its own element (1-D and 2-D).
KJIT_KERNEL(own_adds, (Array<Double> w, Array<Double> t)) {
  Int i = tid();
  t[i] += w[i] * 0.5;
  atomic_add(t, i, 1.0);
}
KJIT_KERNEL(own_adds_2d, (Array<Float, 2> t)) {
  auto [i, j] = tid<2>();
  t(i, j) += Float(i * 10 + j);
}
/// An own-element add into `a` beside adds at other elements of `b`: safe plainly only while
/// a and b are different memory.
KJIT_KERNEL(own_and_shifted, (Array<Double> a, Array<Double> b)) {
  Int i = tid();
  a[i] += 1.0;
  b[(i + 1) % b.shape(0)] += 2.0;
}
}  // namespace pa_tests

namespace {

/// Sets the privatization mode for a scope.
struct ModeScope {
  explicit ModeScope(PrivatizeMode m) { detail::set_privatize_mode(m); }
  ~ModeScope() { detail::set_privatize_mode(PrivatizeMode::Auto); }
};

std::string listed(const KernelDef& k, const char* entry) {
  return codegen::describe_kernel(k.ir(), true)["private_adds"][entry].dump();
}

/// Indices into a target of `elements`, hitting some elements often and some never.
std::vector<int32_t> indices(int64_t n, int64_t elements) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  uint32_t s = 12345;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    const int64_t r = int64_t(s >> 8);
    x = int32_t(r % 3 == 0 ? r % 4 : r % elements);  // a hot corner and everything else
    if (x == elements - 1) x = 0;                    // the last element is never added to
  }
  return v;
}

constexpr PrivatizeMode kModes[] = {PrivatizeMode::Never, PrivatizeMode::Always, PrivatizeMode::Auto};
const char* name(PrivatizeMode m) { return m == PrivatizeMode::Never ? "never" : m == PrivatizeMode::Always ? "always" : "auto"; }

}  // namespace

TEST_CASE("codegen lists the arrays an entry point only adds into") {
  using namespace pa_tests;
  CHECK(listed(scatter_f.def(), "forward") == R"([{"adds":2,"owned":false,"param":1}])");
  CHECK(listed(scatter_f.def(), "adjoint") == "[]");  // the adjoint of an atomic add reads d t
  CHECK(listed(scatter_v3.def(), "forward") == R"([{"adds":2,"owned":false,"param":1}])");  // += on an element too
  CHECK(listed(scatter_m.def(), "forward") == R"([{"adds":1,"owned":false,"param":1},{"adds":1,"owned":false,"param":2}])");
  CHECK(listed(scatter_i.def(), "forward") == R"([{"adds":1,"owned":false,"param":1},{"adds":1,"owned":false,"param":2}])");
  // The adjoint's d x (parameter 3 of gather + 0) takes two adds at gathered indices; d out is read.
  CHECK(listed(gather.def(), "forward") == "[]");
  CHECK(listed(gather.def(), "adjoint") == R"([{"adds":2,"owned":false,"param":3}])");
  CHECK(listed(gather_if.def(), "adjoint") == R"([{"adds":2,"owned":false,"param":3}])");
  CHECK(listed(own_reads.def(), "adjoint") == "[]");  // plain adds at the thread's own index
  // Adds at the thread's own element only: owned (the cpu adds plainly where nothing aliases).
  CHECK(listed(own_adds.def(), "forward") == R"([{"adds":2,"owned":true,"param":1}])");
  CHECK(listed(own_adds_2d.def(), "forward") == R"([{"adds":1,"owned":true,"param":0}])");
  CHECK(listed(own_and_shifted.def(), "forward") == R"([{"adds":1,"owned":true,"param":0},{"adds":1,"owned":false,"param":1}])");
  for (const KernelDef* k : {&reads_target.def(), &claims_slots.def(), &maxes.def(), &halves.def(),
                             &through_function.def()}) {
    INFO(k->name());
    CHECK(listed(*k, "forward") == "[]");
  }
  // Only the privatizable kinds are written as kj::array_add: half keeps kj::atomic_add.
  const compiler::ModuleSource source = module_compile_input("runtime_private_adds").source;
  const std::string text = source.text.empty() ? source.generate() : source.text;
  CHECK(text.find("kj::array_sub(p_t, &kj::elem(p_t, ") != std::string::npos);
  CHECK(text.find("kj::atomic_add(&kj::elem(p_t, v") != std::string::npos);
}

TEST_CASE("the module with private adds compiles with NVRTC (native atomics there)") {
  compiler::Artifact a = compiler::build_module(module_compile_input("runtime_private_adds").source,
                                                compiler::Target::parse("sm_90"), {});
  CHECK(a.image.size() > 16);
}

TEST_CASE("privatized adds give exact sums for every element kind, inline and pooled") {
  const int64_t E = 61;
  for (PrivatizeMode mode : kModes) {
    for (int64_t n : {int64_t(37), int64_t(1003), int64_t(200003)}) {  // lane blocks and tails; pooled
      CAPTURE(name(mode));
      CAPTURE(n);
      ModeScope scope(mode);
      const std::vector<int32_t> idx = indices(n, E);
      auto IDX = from_vector(idx);
      const uint64_t before = detail::privatized_arrays();
      for (int rep = 0; rep < 2; ++rep) {  // copies come back zeroed from the first launches
        std::vector<double> f(E), d(E);
        std::vector<std::array<double, 3>> v3(E);
        std::vector<int32_t> ti(E);
        std::vector<uint64_t> tw(E);
        std::vector<double> w(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
          const size_t k = size_t(idx[size_t(i)]), k3 = size_t(idx[size_t((i + 3) % n)]), k1 = size_t(idx[size_t((i + 1) % n)]);
          f[k] += double(i % 7 + 1);
          f[k3] -= 2.0;
          for (int c = 0; c < 3; ++c) v3[k][size_t(c)] += double((c == 0 ? 1 : c == 1 ? 2 : -1) * (i % 5));
          v3[k1][1] -= 1.0;
          v3[k1][2] -= 4.0;
          w[size_t(i)] = 0.1 * double(i % 13) - 0.3;
          d[k] += w[size_t(i)];
          ti[k] += int32_t(i % 11 - 5);
          tw[k] += uint64_t(i) * 1000003u;
        }
        auto F = zeros<float>({E}), V = zeros<vec3f>({E}), D = zeros<double>({E}), I = zeros<int32_t>({E}),
             W = zeros<uint64_t>({E});
        launch(pa_tests::scatter_f, n, IDX, F);
        launch(pa_tests::scatter_v3, n, IDX, V);
        launch(pa_tests::scatter_d, n, IDX, from_vector(w), D);
        launch(pa_tests::scatter_i, n, IDX, I, W);
        auto fv = F.to_vector<float>();
        auto vv = V.to_vector<vec3f>();
        auto dv = D.to_vector<double>();
        auto iv = I.to_vector<int32_t>();
        auto wv = W.to_vector<uint64_t>();
        for (int64_t e = 0; e < E; ++e) {
          CAPTURE(e);
          REQUIRE(fv[size_t(e)] == float(f[size_t(e)]));
          for (int c = 0; c < 3; ++c) REQUIRE(vv[size_t(e)].c[c] == float(v3[size_t(e)][size_t(c)]));
          REQUIRE(dv[size_t(e)] == doctest::Approx(d[size_t(e)]).epsilon(1e-12).scale(double(n)));
          REQUIRE(iv[size_t(e)] == ti[size_t(e)]);
          REQUIRE(wv[size_t(e)] == tw[size_t(e)]);
        }
      }
      const uint64_t privatized = detail::privatized_arrays() - before;
      if (mode == PrivatizeMode::Never) CHECK(privatized == 0);
      if (mode == PrivatizeMode::Always) CHECK(privatized == 2 * 5);  // f, v3, d, i, wide per rep
      if (mode == PrivatizeMode::Auto && n >= 1003) CHECK(privatized == 2 * 5);  // n >> E
    }
  }
}

TEST_CASE("the merge adds into the elements it has sums for and keeps every other bit, at any alignment") {
  // A float target whose elements start at -0 (NaN in every 5th): the launch adds only into
  // the elements idx names (every third), so the merge - 16 bytes at a time where the cpu has a
  // 16-byte compare-and-swap - must leave the others' bits alone, beside ones it adds to, with
  // the array starting 0-3 floats past a 16-byte boundary. Sums are whole numbers: exact.
  const int64_t E = 203;
  const uint32_t kNegZero = 0x80000000u, kNaN = 0x7fc00123u;
  for (PrivatizeMode mode : kModes) {
    for (int64_t n : {int64_t(1003), int64_t(200003)}) {
      for (int offset = 0; offset < 4; ++offset) {
        CAPTURE(name(mode));
        CAPTURE(n);
        CAPTURE(offset);
        ModeScope scope(mode);
        std::vector<int32_t> idx = indices(n, (E + 2) / 3);
        for (int32_t& k : idx) k *= 3;
        std::vector<double> sums(static_cast<size_t>(E));
        for (int64_t i = 0; i < n; ++i) {
          sums[size_t(idx[size_t(i)])] += double(i % 7 + 1);
          sums[size_t(idx[size_t((i + 3) % n)])] -= 2.0;
        }
        auto base = zeros<float>({E + 4});
        std::vector<uint32_t> start(static_cast<size_t>(E));
        for (int64_t e = 0; e < E; ++e) start[size_t(e)] = e % 5 == 4 ? kNaN : kNegZero;
        std::memcpy(static_cast<float*>(base.data()) + offset, start.data(), size_t(E) * 4);
        NdArray T = NdArray::view(static_cast<float*>(base.data()) + offset, ir::Type::scalar_of(ir::Scalar::F32), {E},
                                  Device::cpu());
        launch(pa_tests::scatter_f, n, from_vector(idx), T);
        std::vector<uint32_t> got(static_cast<size_t>(E));
        std::memcpy(got.data(), static_cast<float*>(base.data()) + offset, size_t(E) * 4);
        for (int64_t e = 0; e < E; ++e) {
          CAPTURE(e);
          float want_value;
          std::memcpy(&want_value, &start[size_t(e)], 4);
          uint32_t want = start[size_t(e)];
          if (e % 3 == 0 && sums[size_t(e)] != 0) {
            want_value += float(sums[size_t(e)]);
            std::memcpy(&want, &want_value, 4);
          }
          if (e % 5 == 4 && e % 3 == 0 && sums[size_t(e)] != 0) CHECK(std::isnan(want_value));
          REQUIRE(got[size_t(e)] == want);
        }
      }
    }
  }
}

TEST_CASE("matrices and quaternions merge every component") {
  const int64_t E = 5, n = 4099;
  const std::vector<int32_t> idx = indices(n, E);
  std::vector<std::array<double, 4>> m(E), q(E);
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = size_t(idx[size_t(i)]);
    const double s = double(i % 3 + 1);
    m[k][0] += s, m[k][1] += 1.0, m[k][2] -= s, m[k][3] += 0.5;
    q[k][0] += 1.0, q[k][2] -= 2.0, q[k][3] += 3.0;
  }
  for (PrivatizeMode mode : kModes) {
    CAPTURE(name(mode));
    ModeScope scope(mode);
    auto M = zeros<mat22d>({E});
    auto Q = zeros<quatf>({E});
    launch(pa_tests::scatter_m, n, from_vector(idx), M, Q);
    auto mv = M.to_vector<mat22d>();
    auto qv = Q.to_vector<quatf>();
    for (size_t e = 0; e < size_t(E); ++e) {
      for (int c = 0; c < 4; ++c) REQUIRE(mv[e].c[c / 2][c % 2] == m[e][size_t(c)]);
      CHECK(qv[e].x == float(q[e][0]));
      CHECK(qv[e].y == 0.0f);
      CHECK(qv[e].z == float(q[e][2]));
      CHECK(qv[e].w == float(q[e][3]));
    }
  }
}

TEST_CASE("the rule privatizes from its threshold on, and the results agree on both sides") {
  // Launches of a few thousand threads run on the calling thread: one copy, threads = 1.
  const int64_t E = 997;
  int64_t at = 1;
  while (!detail::worth_privatizing(at, 2, E, 4, 1)) ++at;
  REQUIRE(at > 16);
  REQUIRE(at < 60000);
  CHECK(at == (E + 1) / 2);  // a copy in cache: from one add per element on
  // A copy larger than a core's cache: one add per element per thread.
  const int64_t big = detail::kPrivateCachedBytes;  // floats: 4x the cached size
  CHECK(detail::worth_privatizing(big, 1, big, 4, 1));
  CHECK_FALSE(detail::worth_privatizing(big, 1, big, 4, 2));
  CHECK(detail::worth_privatizing(2 * big, 1, big, 4, 2));
  CHECK_FALSE(detail::worth_privatizing(int64_t(1) << 30, 1, int64_t(1) << 28, 12, 2));  // over the memory cap
  for (int64_t n : {at - 1, at, at + 1}) {
    CAPTURE(n);
    const std::vector<int32_t> idx = indices(n, E);
    std::vector<double> f(E);
    for (int64_t i = 0; i < n; ++i) {
      f[size_t(idx[size_t(i)])] += double(i % 7 + 1);
      f[size_t(idx[size_t((i + 3) % n)])] -= 2.0;
    }
    auto F = zeros<float>({E});
    const uint64_t before = detail::privatized_arrays();
    launch(pa_tests::scatter_f, n, from_vector(idx), F);
    CHECK(detail::privatized_arrays() - before == (n >= at ? 1u : 0u));
    auto fv = F.to_vector<float>();
    for (size_t e = 0; e < size_t(E); ++e) REQUIRE(fv[e] == float(f[e]));
  }
}

TEST_CASE("deterministic launches add in index order, never into private copies") {
  // Fractions into non-zero targets: a private copy's per-element sum added at once rounds
  // otherwise than the adds one by one, so only the plain index order matches the restatement.
  const int64_t E = 13, n = 4000;
  const std::vector<int32_t> idx = indices(n, E);
  std::vector<double> w(static_cast<size_t>(n)), expected(E);
  for (int64_t i = 0; i < n; ++i) w[size_t(i)] = 1.0 / double(i % 97 + 3);
  for (int64_t e = 0; e < E; ++e) expected[size_t(e)] = 1e3 + double(e) / 7.0;
  for (int64_t i = 0; i < n; ++i) expected[size_t(idx[size_t(i)])] += w[size_t(i)];
  for (PrivatizeMode mode : kModes) {
    CAPTURE(name(mode));
    ModeScope scope(mode);
    std::vector<double> init(E);
    for (int64_t e = 0; e < E; ++e) init[size_t(e)] = 1e3 + double(e) / 7.0;
    auto T = from_vector(init);
    LaunchOptions o;
    o.deterministic = true;
    const uint64_t before = detail::privatized_arrays();
    launch(pa_tests::scatter_d.def(), Dims{n}, {from_vector(idx), from_vector(w), T}, o);
    CHECK(detail::privatized_arrays() == before);
    const std::vector<double> t = T.to_vector<double>();
    for (size_t e = 0; e < size_t(E); ++e) REQUIRE(t[e] == expected[e]);
  }
  // The same launch privatized (not deterministic) rounds otherwise somewhere: the test above
  // would catch a private copy.
  ModeScope scope(PrivatizeMode::Always);
  std::vector<double> init(E);
  for (int64_t e = 0; e < E; ++e) init[size_t(e)] = 1e3 + double(e) / 7.0;
  auto T = from_vector(init);
  launch(pa_tests::scatter_d, n, from_vector(idx), from_vector(w), T);
  const std::vector<double> t = T.to_vector<double>();
  bool all_equal = true;
  for (size_t e = 0; e < size_t(E); ++e) all_equal = all_equal && t[e] == expected[e];
  CHECK_FALSE(all_equal);
}

TEST_CASE("strided and 2-D targets: the merge adds into the array's own layout") {
  const int64_t E = 40, n = 5003;
  const std::vector<int32_t> idx = indices(n, E);
  for (PrivatizeMode mode : kModes) {
    CAPTURE(name(mode));
    ModeScope scope(mode);
    // Every other Vec3f of a buffer of 2E, which holds 7s in between (never touched).
    std::vector<vec3f> buffer(size_t(2 * E), vec3f{{7.0f, 7.0f, 7.0f}});
    auto T = NdArray::view(buffer.data(), ir_type_of<vec3f>(), {E}, Device::cpu(), {int64_t(2 * sizeof(vec3f))});
    launch(pa_tests::scatter_v3, n, from_vector(idx), T);
    std::vector<std::array<double, 3>> v3(E, {7.0, 7.0, 7.0});
    for (int64_t i = 0; i < n; ++i) {
      for (int c = 0; c < 3; ++c) v3[size_t(idx[size_t(i)])][size_t(c)] += double((c == 0 ? 1 : c == 1 ? 2 : -1) * (i % 5));
      v3[size_t(idx[size_t((i + 1) % n)])][1] -= 1.0;
      v3[size_t(idx[size_t((i + 1) % n)])][2] -= 4.0;
    }
    for (size_t e = 0; e < size_t(E); ++e) {
      CAPTURE(e);
      for (int c = 0; c < 3; ++c) {
        REQUIRE(buffer[2 * e].c[c] == float(v3[e][size_t(c)]));
        REQUIRE(buffer[2 * e + 1].c[c] == 7.0f);
      }
    }
    // A 5 x 8 target written through its transpose's strides (column-major memory).
    std::vector<vec3f> cm(size_t(E), vec3f{{0.0f, 0.0f, 0.0f}});
    auto T2 = NdArray::view(cm.data(), ir_type_of<vec3f>(), {5, 8}, Device::cpu(),
                            {int64_t(sizeof(vec3f)), int64_t(5 * sizeof(vec3f))});
    launch(pa_tests::scatter_2d, n, from_vector(idx), T2);
    std::vector<std::array<double, 3>> want(size_t(E), {0.0, 0.0, 0.0});
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = idx[size_t(i)], r = k % 5, c = k / 5 % 8;
      auto& w = want[size_t(c * 5 + r)];  // column-major
      w[0] += double(i % 3), w[1] += 1.0, w[2] += 2.0;
    }
    for (size_t e = 0; e < size_t(E); ++e)
      for (int c = 0; c < 3; ++c) REQUIRE(cm[e].c[c] == float(want[e][size_t(c)]));
  }
}

TEST_CASE("adjoint arrays of gathers are privatized and accumulate into existing gradients") {
  const int64_t E = 33;
  // gather_if's adjoint has a lane function (blocks of lanes, its second add under a mask).
  const compiler::ModuleSource src = module_compile_input("runtime_private_adds").source;
  const std::string text = src.text.empty() ? src.generate() : src.text;
  CHECK(text.find("gather_if_adj_lanes") != std::string::npos);
  CHECK(text.find("kj::array_add(adj_p_x, &kj::elem(adj_p_x") != std::string::npos);
  for (bool branch : {false, true})
  for (int64_t n : {int64_t(37), int64_t(4099), int64_t(150001)}) {
    const std::vector<int32_t> idx = indices(n, E);
    std::vector<vec3f> seed(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) seed[size_t(i)] = vec3f{{float(i % 4), -1.0f, float(i % 3) - 1.0f}};
    std::vector<std::array<double, 3>> want(size_t(E), {1.0, 1.0, 1.0});  // the gradient held before
    for (int64_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        want[size_t(idx[size_t(i)])][size_t(c)] += 2.0 * seed[size_t(i)].c[c];
        if (!branch || i % 3 != 1) want[size_t(idx[size_t((i + 5) % n)])][size_t(c)] += seed[size_t(i)].c[c];
      }
    for (PrivatizeMode mode : kModes) {
      CAPTURE(branch);
      CAPTURE(n);
      CAPTURE(name(mode));
      ModeScope scope(mode);
      auto X = zeros<vec3f>({E}), OUT = zeros<vec3f>({n});
      auto GX = from_vector(std::vector<vec3f>(size_t(E), vec3f{{1.0f, 1.0f, 1.0f}}));
      const uint64_t before = detail::privatized_arrays();
      launch_adjoint(branch ? pa_tests::gather_if.def() : pa_tests::gather.def(), n, {X, from_vector(idx), OUT},
                     {GX, {}, from_vector(seed)});
      if (mode == PrivatizeMode::Always) CHECK(detail::privatized_arrays() - before == 1);
      if (mode == PrivatizeMode::Never) CHECK(detail::privatized_arrays() == before);
      auto g = GX.to_vector<vec3f>();
      for (size_t e = 0; e < size_t(E); ++e)
        for (int c = 0; c < 3; ++c) REQUIRE(g[e].c[c] == float(want[e][size_t(c)]));
    }
  }
}

TEST_CASE("privatized adjoint arrays with a value's gradient: the summing path adds into the copies") {
  const int64_t E = 29;
  for (int64_t n : {int64_t(37), int64_t(4099), int64_t(150001)}) {
    const std::vector<int32_t> idx = indices(n, E);
    std::vector<vec3f> x(static_cast<size_t>(E)), seed(static_cast<size_t>(n));
    for (int64_t e = 0; e < E; ++e) x[size_t(e)] = vec3f{{float(e % 5) - 2.0f, 1.0f, float(e % 3)}};
    for (int64_t i = 0; i < n; ++i) seed[size_t(i)] = vec3f{{float(i % 4), -1.0f, float(i % 3) - 1.0f}};
    // Whole numbers below 2^24 throughout: every order of the adds gives these sums exactly.
    const float s = 3.0f;
    std::vector<std::array<double, 3>> want(size_t(E), {1.0, 1.0, 1.0});  // the gradient held before
    double want_ds = 0.5;
    for (int64_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        const double w = seed[size_t(i)].c[c];
        want[size_t(idx[size_t(i)])][size_t(c)] += double(s) * w;
        want[size_t(idx[size_t((i + 5) % n)])][size_t(c)] += w;
        want_ds += w * x[size_t(idx[size_t(i)])].c[c];
      }
    for (bool wants_ds : {false, true})
    for (PrivatizeMode mode : kModes) {
      CAPTURE(n);
      CAPTURE(wants_ds);
      const std::string mode_name = name(mode);
      CAPTURE(mode_name);
      ModeScope scope(mode);
      auto GX = from_vector(std::vector<vec3f>(size_t(E), vec3f{{1.0f, 1.0f, 1.0f}}));
      float ds = 0.5f;
      const uint64_t before = detail::privatized_arrays();
      launch_adjoint(pa_tests::gather_scaled.def(), n, {from_vector(x), from_vector(idx), s, zeros<vec3f>({n})},
                     {GX, {}, wants_ds ? LaunchArg(&ds) : LaunchArg(), from_vector(seed)});
      if (mode == PrivatizeMode::Always) CHECK(detail::privatized_arrays() - before == 1);
      if (mode == PrivatizeMode::Never) CHECK(detail::privatized_arrays() == before);
      CHECK(double(ds) == (wants_ds ? want_ds : 0.5));
      auto g = GX.to_vector<vec3f>();
      for (size_t e = 0; e < size_t(E); ++e)
        for (int c = 0; c < 3; ++c) REQUIRE(g[e].c[c] == float(want[e][size_t(c)]));
    }
  }
}

TEST_CASE("a used atomic result is never privatized: claimed slots continue the counter") {
  // The counter starts at 5: slots 5 .. n + 4 are claimed, each once. A private copy would
  // count from 0 (even on one thread).
  ModeScope scope(PrivatizeMode::Always);
  for (int64_t n : {int64_t(1003), int64_t(100003)}) {
    CAPTURE(n);
    auto counter = from_vector(std::vector<int32_t>{5});
    auto out = from_vector(std::vector<int32_t>(static_cast<size_t>(n + 5), -1));
    launch(pa_tests::claims_slots, n, counter, out);
    CHECK(counter.to_vector<int32_t>()[0] == n + 5);
    std::vector<int32_t> o = out.to_vector<int32_t>();
    for (size_t s = 0; s < 5; ++s) REQUIRE(o[s] == -1);
    std::vector<char> seen(static_cast<size_t>(n), 0);
    for (size_t s = 5; s < o.size(); ++s) {
      REQUIRE(o[s] >= 0);
      REQUIRE(o[s] < n);
      REQUIRE(!seen[size_t(o[s])]);
      seen[size_t(o[s])] = 1;
    }
  }
}

TEST_CASE("host threads launching into one target at once, privatized and not, lose no add") {
  // One host thread launches privatized launches just past the rule's threshold, small enough
  // to run on that thread (a good part of each is its merge); another keeps adding atomically
  // into the first 4 of the same 1024 floats (the privatized launches' hot corner) through a
  // kernel that is never privatized (it uses the atomic's result), also on its own thread. The
  // two are pinned to different cpus where there are two (a loaded machine otherwise tends to
  // run them on one). In the second round a third thread adds large pooled privatized launches.
  // A merge that added plainly loses some of the other threads' adds.
  const int64_t E = 1024, atomic_n = 1024, pooled_n = 200000;
  int64_t inline_n = 32;
  while (!detail::worth_privatizing(inline_n, 2, E, 4, 1)) inline_n += 32;
  inline_n += inline_n / 4;
  const unsigned pool = detail::ThreadPool::global().size();
  REQUIRE(detail::worth_privatizing(pooled_n, 2, E, 4, pool));
  const std::vector<int32_t> inline_idx = indices(inline_n, E), pooled_idx = indices(pooled_n, E);
  std::vector<int32_t> atomic_idx(static_cast<size_t>(atomic_n));
  for (int64_t i = 0; i < atomic_n; ++i) atomic_idx[size_t(i)] = int32_t(i % 4);
  auto INLINE = from_vector(inline_idx), POOLED = from_vector(pooled_idx), ATOMIC = from_vector(atomic_idx);
  auto OLD = zeros<float>({atomic_n});
  const bool two_cpus = std::thread::hardware_concurrency() >= 2;
  auto pin = [&](int cpu) {
    if (!two_cpus) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  };
  // Lost adds are rare events (a few per thousand merges on the development VM): rounds run
  // for two seconds in all, or until one finds a wrong sum.
  const auto started = std::chrono::steady_clock::now();
  bool exact = true;
  for (int round = 0; exact && (round < 2 || std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
       ++round) {
    CAPTURE(round);
    auto T = zeros<float>({E});
    // Bounded so that every sum stays a whole number below 2^24 (exact in any order).
    const int inline_reps = 6000, max_atomic = 12000, max_pooled = round % 2 == 0 ? 0 : 20;
    const uint64_t before = detail::privatized_arrays();
    std::atomic<bool> adding{true};
    int atomic_launches = 0, pooled_reps = 0;
    std::vector<std::thread> threads;
    threads.emplace_back([&] {
      pin(0);
      for (int r = 0; r < inline_reps; ++r) launch(pa_tests::scatter_f, inline_n, INLINE, T);
      adding = false;
    });
    threads.emplace_back([&] {
      pin(1);
      while (adding.load() && atomic_launches < max_atomic) {
        launch(pa_tests::add_counted, atomic_n, ATOMIC, T, OLD);
        ++atomic_launches;
      }
    });
    threads.emplace_back([&] {
      while (adding.load() && pooled_reps < max_pooled) {
        launch(pa_tests::scatter_f, pooled_n, POOLED, T);
        ++pooled_reps;
      }
    });
    for (auto& th : threads) th.join();
    CHECK(detail::privatized_arrays() - before >= uint64_t(inline_reps / 2 + pooled_reps));
    std::vector<double> want(static_cast<size_t>(E));
    auto add = [&](const std::vector<int32_t>& idx, double times) {
      const int64_t n = int64_t(idx.size());
      for (int64_t i = 0; i < n; ++i) {
        want[size_t(idx[size_t(i)])] += times * double(i % 7 + 1);
        want[size_t(idx[size_t((i + 3) % n)])] -= times * 2.0;
      }
    };
    add(inline_idx, inline_reps);
    add(pooled_idx, pooled_reps);
    for (int64_t e = 0; e < 4; ++e) want[size_t(e)] += double(atomic_launches * (atomic_n / 4));
    auto v = T.to_vector<float>();
    int wrong = 0;
    for (size_t e = 0; e < size_t(E); ++e) wrong += v[e] != float(want[e]);
    CHECK(wrong == 0);
    exact = wrong == 0;
  }
}

TEST_CASE("adds at the thread's own element are plain where no other argument shares the array") {
  using namespace pa_tests;
  const int64_t n = 200003;  // pooled on two cores, a tail that is no lane block
  std::vector<double> w(static_cast<size_t>(n)), t0(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    w[size_t(i)] = double(i % 13) - 4.0;
    t0[size_t(i)] = 0.25 * double(i % 5);
  }
  NdArray t = NdArray::from_vector(t0);
  const uint64_t plain_before = kjit::detail::plain_add_arrays();
  launch(own_adds, n, NdArray::from_vector(w), t);
  CHECK(kjit::detail::plain_add_arrays() == plain_before + 1);
  std::vector<double> got = t.to_vector<double>();
  for (int64_t i = 0; i < n; ++i) REQUIRE(got[size_t(i)] == t0[size_t(i)] + w[size_t(i)] * 0.5 + 1.0);

  NdArray g = zeros<float>({300, 70});
  launch(own_adds_2d.def(), {300, 70}, {g});
  launch(own_adds_2d.def(), {300, 70}, {g});
  std::vector<float> gv = g.to_vector<float>();
  for (int i = 0; i < 300; ++i)
    for (int j = 0; j < 70; ++j) REQUIRE(gv[size_t(i * 70 + j)] == 2.0f * float(i * 10 + j));

  // Separate arrays: `a` is added into plainly; the same array for both: every add atomic.
  NdArray a = zeros<double>({n}), b = zeros<double>({n});
  uint64_t before = kjit::detail::plain_add_arrays();
  launch(own_and_shifted, n, a, b);
  CHECK(kjit::detail::plain_add_arrays() == before + 1);
  CHECK(a.to_vector<double>() == std::vector<double>(static_cast<size_t>(n), 1.0));
  NdArray x = zeros<double>({n});
  before = kjit::detail::plain_add_arrays();
  for (int rep = 0; rep < 3; ++rep) launch(own_and_shifted, n, x, x);
  CHECK(kjit::detail::plain_add_arrays() == before);
  CHECK(x.to_vector<double>() == std::vector<double>(static_cast<size_t>(n), 9.0));
  // A view of the same memory aliases too.
  NdArray y = zeros<double>({n});
  before = kjit::detail::plain_add_arrays();
  launch(own_and_shifted, n, y, y.slice(0, n));
  CHECK(kjit::detail::plain_add_arrays() == before);
}
