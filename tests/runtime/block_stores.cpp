// Block stores: an array a kernel only writes, each thread its own element, is written by the
// cpu's lane blocks 16 elements at a time, non-temporally when it is large and the block starts
// a cache line. Which stores qualify, and that every path (streamed, misaligned, strided,
// small, tails) writes exactly what the plain body writes.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/compile_input.hpp"

using namespace kjit;

namespace bs_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_block_stores)

KJIT_KERNEL(affine, (Array<Float> x, Float a, Array<Float> out)) { out[tid()] = a * x[tid()] + 1.0f; }
KJIT_KERNEL(several, (Array<Float> x, Array<Vec3f> v, Array<Double> d, Array<Int> k, Array<Mat22f> m)) {
  Int i = tid();
  Float s = x[i];
  v[i] = Vec3f(s, s * 2.0f, -s);
  d[i] = Double(s) * 0.5;
  k[i] = i * 3 - 7;
  m[i] = Mat22f(s, 1.0f, -s, s * s);
}
// None of these is a block store: read too (after the store: a block would not be written
// yet), stored twice, stored under a branch, another thread's element, 2 bytes an element.
KJIT_KERNEL(not_blocks, (Array<Float> x, Array<Float> rw, Array<Float> twice, Array<Float> cond,
                         Array<Float> shifted, Array<Half> h, Array<Float> echo, Array<Float> back)) {
  Int i = tid();
  echo[i] = x[i] * 2.0f;
  back[i] = echo[i] + 1.0f;  // back is a block store; echo is not
  rw[i] = rw[i] + x[i];
  twice[i] = x[i];
  twice[i] = x[i] * 2.0f;
  If(x[i] > 0.5f, [&] { cond[i] = x[i]; });
  shifted[(i + 1) % shifted.shape(0)] = x[i];
  h[i] = Half(x[i]);
}
// A block store after a branch on the thread's value: the forward's lane function has both,
// and the adjoint gets a lane function of its own (its replay stores nothing).
KJIT_KERNEL(halved, (Array<Float> x, Array<Float> out)) {
  Int i = tid();
  Var<Float> y = x[i] * 3.0f;
  If(x[i] > 0.25f, [&] { y = y * 0.5f; });
  out[i] = y;
}
}  // namespace bs_tests

namespace {

std::string module_text() {
  const compiler::ModuleSource s = module_compile_input("runtime_block_stores").source;
  return s.text.empty() ? s.generate() : s.text;
}

std::vector<float> inputs(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = float(i % 1000) * 0.001f - 0.25f;
  return x;
}

/// A view of n floats starting `offset` bytes into `buffer`, elements `stride` floats apart.
NdArray float_view(std::vector<float>& buffer, int64_t n, size_t offset, int64_t stride) {
  return NdArray::view(reinterpret_cast<char*>(buffer.data()) + offset, ir_type_of<float>(), {n}, Device::cpu(),
                       {int64_t(stride * sizeof(float))});
}

}  // namespace

TEST_CASE("block stores are the stores into arrays a kernel only writes, each thread its own element") {
  const std::string text = module_text();
  CHECK(text.find("kj::store_block(&kj::elem(p_out, kj_base), kj_s_p_out, kj::streams(p_out));") != std::string::npos);
  for (const char* a : {"p_v", "p_d", "p_k", "p_m"})
    CHECK(text.find(std::string("kj::store_block(&kj::elem(") + a + ", kj_base)") != std::string::npos);
  CHECK(text.find("kj::store_block(&kj::elem(p_back, kj_base)") != std::string::npos);
  for (const char* a : {"p_rw", "p_twice", "p_cond", "p_shifted", "p_h", "p_echo"}) {
    INFO(a);
    CHECK(text.find(std::string("kj::store_block(&kj::elem(") + a) == std::string::npos);
  }
  CHECK(text.find("kj::stream_fence();") != std::string::npos);
  // Block stores give a forward lane function only: a straight-line adjoint vectorizes as it
  // is; a kernel with a branch has an adjoint lane function too (its replay stores nothing).
  CHECK(text.find("affine_adj_lanes") == std::string::npos);
  CHECK(text.find("halved_adj_lanes") != std::string::npos);
  // The sizes below stream (or not) for this threshold: 8 MiB.
  CHECK(text.find("#define KJ_STREAM_MIN_BYTES ((kj_int64)1 << 23)") != std::string::npos);
}

TEST_CASE("streamed, misaligned, strided, small and tail blocks write what the plain body writes") {
  // 8 MiB of floats and more stream (KJ_STREAM_MIN_BYTES); the odd sizes leave a tail.
  for (int64_t n : {int64_t(37), int64_t(1003), int64_t(600011), (int64_t(1) << 21) + 11}) {
    CAPTURE(n);
    const std::vector<float> x = inputs(n);
    auto X = from_vector(x);
    std::vector<float> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) want[size_t(i)] = 3.0f * x[size_t(i)] + 1.0f;
    // 0: a dense array of its own (64-byte aligned: streamed when large); 4: dense, starting
    // 4 bytes into a cache line (no block starts a line: written plainly); a stride of 2: the
    // strided body.
    for (auto [offset, stride] : {std::pair<size_t, int64_t>{0, 1}, {4, 1}, {0, 2}}) {
      CAPTURE(offset);
      CAPTURE(stride);
      std::vector<float> buffer(static_cast<size_t>(n * stride + 64), -9.0f);
      auto OUT = offset == 0 && stride == 1 ? zeros<float>({n}) : float_view(buffer, n, offset, stride);
      for (int rep = 0; rep < 2; ++rep) launch(bs_tests::affine, n, X, 3.0f, OUT);  // unmeasured, then measured
      if (offset == 0 && stride == 1) {
        REQUIRE(OUT.to_vector<float>() == want);
        continue;
      }
      const float* got = reinterpret_cast<const float*>(reinterpret_cast<const char*>(buffer.data()) + offset);
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; ++i) {
        wrong += got[i * stride] != want[size_t(i)];
        if (stride == 2) wrong += got[i * stride + 1] != -9.0f;  // the gaps are untouched
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("block stores of vectors, doubles, integers and matrices, streamed and not") {
  for (int64_t n : {int64_t(1003), int64_t(1100003)}) {  // 1100003 Vec3fs, Mat22fs, doubles stream; ints not
    CAPTURE(n);
    const std::vector<float> x = inputs(n);
    auto V = zeros<vec3f>({n});
    auto D = zeros<double>({n});
    auto K = zeros<int32_t>({n});
    auto M = zeros<mat22f>({n});
    launch(bs_tests::several, n, from_vector(x), V, D, K, M);
    auto v = V.to_vector<vec3f>();
    auto d = D.to_vector<double>();
    auto k = K.to_vector<int32_t>();
    auto m = M.to_vector<mat22f>();
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float s = x[size_t(i)];
      const vec3f& vi = v[size_t(i)];
      const mat22f& mi = m[size_t(i)];
      wrong += vi.c[0] != s || vi.c[1] != s * 2.0f || vi.c[2] != -s || d[size_t(i)] != double(s) * 0.5 ||
               k[size_t(i)] != int32_t(i * 3 - 7) || mi.c[0][0] != s || mi.c[0][1] != 1.0f || mi.c[1][0] != -s ||
               mi.c[1][1] != s * s;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("stores that are not block stores keep their meaning") {
  const int64_t n = 1003;
  const std::vector<float> x = inputs(n);
  std::vector<float> rw0(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) rw0[size_t(i)] = float(i);
  auto RW = from_vector(rw0), TWICE = zeros<float>({n}), SHIFTED = zeros<float>({n});
  auto COND = from_vector(std::vector<float>(static_cast<size_t>(n), 7.0f));
  auto H = zeros<half>({n});
  auto ECHO = zeros<float>({n}), BACK = zeros<float>({n});
  launch(bs_tests::not_blocks, n, from_vector(x), RW, TWICE, COND, SHIFTED, H, ECHO, BACK);
  auto echo = ECHO.to_vector<float>(), back = BACK.to_vector<float>();
  auto rw = RW.to_vector<float>(), twice = TWICE.to_vector<float>(), cond = COND.to_vector<float>(),
       shifted = SHIFTED.to_vector<float>();
  auto h = H.to_vector<half>();
  for (int64_t i = 0; i < n; ++i) {
    const float s = x[size_t(i)];
    REQUIRE(rw[size_t(i)] == float(i) + s);
    REQUIRE(twice[size_t(i)] == s * 2.0f);
    REQUIRE(cond[size_t(i)] == (s > 0.5f ? s : 7.0f));
    REQUIRE(shifted[size_t((i + 1) % n)] == s);
    REQUIRE(float(h[size_t(i)]) == float(half(s)));
    REQUIRE(echo[size_t(i)] == s * 2.0f);
    REQUIRE(back[size_t(i)] == s * 2.0f + 1.0f);
  }
}

TEST_CASE("a kernel with a branch and a block store: forward values and adjoint") {
  for (int64_t n : {int64_t(37), int64_t(1003), (int64_t(1) << 21) + 11}) {  // the last streams
    CAPTURE(n);
    const std::vector<float> x = inputs(n);
    auto X = from_vector(x), OUT = zeros<float>({n});
    launch(bs_tests::halved, n, X, OUT);
    auto out = OUT.to_vector<float>();
    std::vector<float> seed(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) seed[size_t(i)] = float(i % 5) - 2.0f;
    auto GX = zeros<float>({n});
    launch_adjoint(bs_tests::halved, n, {X, OUT}, {GX, from_vector(seed)});
    auto gx = GX.to_vector<float>();
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float s = x[size_t(i)], y = s * 3.0f;
      wrong += out[size_t(i)] != (s > 0.25f ? y * 0.5f : y);
      wrong += gx[size_t(i)] != seed[size_t(i)] * (s > 0.25f ? 1.5f : 3.0f);
    }
    CHECK(wrong == 0);
  }
}
