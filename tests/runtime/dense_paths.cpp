// The cpu entry points' two paths: launches whose arrays are all dense row-major run a body
// that indexes without strides (and vectorizes); any strided array (a padded row, a transpose,
// a step) sends the whole launch down the strided path. Both must give the same values and
// gradients, for every dimensionality and element kind.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "kjit/kjit.hpp"

using namespace kjit;

namespace dense_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_dense_paths)

KJIT_KERNEL(axpy, (Array<Float> x, Array<Float> y, Float a, Array<Float> out)) {
  Int i = tid();
  out[i] = a * x[i] + y[i];
}
KJIT_KERNEL(scale_2d, (Array<Vec3f, 2> src, Array<Vec3f, 2> dst)) {
  auto [i, j] = tid<2>();
  dst(i, j) = src(i, j) * Float(j + 1);
}
KJIT_KERNEL(offset_3d, (Array<Double, 3> src, Array<Double, 3> dst)) {
  auto [i, j, k] = tid<3>();
  dst(i, j, k) = src(i, j, k) + Double(i * 100 + j * 10 + k);
}
KJIT_KERNEL(add_4d, (Array<Int, 4> src, Array<Int, 4> dst)) {
  auto [i, j, k, l] = tid<4>();
  dst(i, j, k, l) = src(i, j, k, l) + i * 1000 + j * 100 + k * 10 + l;
}
}  // namespace dense_tests

namespace {

/// An array of `shape` whose rows are padded by one element (not dense unless `dense`),
/// filled with element e(flat row-major index); the buffer is kept alive in `keep`.
template <class T, class F>
NdArray layout(const Shape& shape, bool dense, F e, std::vector<NdArray>& keep) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  if (dense) {
    std::vector<T> v(size_t(n), T{});
    for (int64_t f = 0; f < n; ++f) v[size_t(f)] = e(f);
    return NdArray::from_vector(v, shape);
  }
  // Row-major strides over a last dimension one element longer than the shape's.
  Shape padded = shape;
  padded.back() += 1;
  int64_t total = 1;
  for (int64_t s : padded) total *= s;
  std::vector<T> v(size_t(total), T{});
  std::vector<int64_t> strides(shape.size());
  int64_t s = int64_t(sizeof(T));
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= padded[d];
  }
  for (int64_t f = 0; f < n; ++f) {  // element f of the logical array
    int64_t rest = f, offset = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      offset += (rest % shape[d]) * (strides[d] / int64_t(sizeof(T)));
      rest /= shape[d];
    }
    v[size_t(offset)] = e(f);
  }
  NdArray buffer = NdArray::from_vector(v, {total});
  keep.push_back(buffer);
  return NdArray::view(buffer.data(), ir_type_of<T>(), shape, Device::cpu(), strides);
}

/// The logical elements of `a` in row-major order (a dense copy first when it is strided).
template <class T>
std::vector<T> values(const NdArray& a) {
  if (a.is_contiguous()) return a.to_vector<T>();
  std::vector<T> out(size_t(a.size()));
  const char* base = static_cast<const char*>(a.data());
  std::vector<int64_t> st = a.strides();
  Shape sh = a.shape();
  for (int64_t f = 0; f < a.size(); ++f) {
    int64_t rest = f, offset = 0;
    for (size_t d = sh.size(); d-- > 0;) {
      offset += (rest % sh[d]) * st[d];
      rest /= sh[d];
    }
    out[size_t(f)] = *reinterpret_cast<const T*>(base + offset);
  }
  return out;
}

}  // namespace

TEST_CASE("dense and strided 1-D arrays give the same values and gradients, forward and adjoint") {
  const int64_t n = 1003;  // not a multiple of any vector width: the loop's tail runs too
  for (int strided = 0; strided < 4; ++strided) {  // none, x, out, the adjoint arrays
    CAPTURE(strided);
    std::vector<NdArray> keep;
    auto x = layout<float>({n}, strided != 1, [](int64_t i) { return 0.5f * float(i) - 7.0f; }, keep);
    auto y = layout<float>({n}, true, [](int64_t i) { return float(i % 13); }, keep);
    auto out = layout<float>({n}, strided != 2, [](int64_t) { return 0.0f; }, keep);
    launch(dense_tests::axpy, n, x, y, 3.0f, out);
    std::vector<float> o = values<float>(out);
    for (int64_t i = 0; i < n; ++i) REQUIRE(o[size_t(i)] == 3.0f * (0.5f * float(i) - 7.0f) + float(i % 13));

    auto gx = layout<float>({n}, strided != 3, [](int64_t) { return 1.0f; }, keep);  // accumulates
    auto gy = layout<float>({n}, true, [](int64_t) { return 0.0f; }, keep);
    auto gout = layout<float>({n}, strided != 3, [](int64_t i) { return float(i % 5) - 2.0f; }, keep);
    launch_adjoint(dense_tests::axpy, n, {x, y, 3.0f, out}, {gx, gy, {}, gout});
    std::vector<float> dx = values<float>(gx), dy = values<float>(gy);
    for (int64_t i = 0; i < n; ++i) {
      REQUIRE(dx[size_t(i)] == 1.0f + 3.0f * (float(i % 5) - 2.0f));
      REQUIRE(dy[size_t(i)] == float(i % 5) - 2.0f);
    }
  }
}

TEST_CASE("dense and strided arrays of 2, 3 and 4 dimensions index the same elements") {
  for (int strided = 0; strided < 3; ++strided) {  // none, the source, the destination
    CAPTURE(strided);
    std::vector<NdArray> keep;
    {
      const Shape s{7, 5};
      auto src = layout<vec3f>(s, strided != 1, [](int64_t f) { return vec3f{{float(f), -float(f), 0.5f}}; }, keep);
      auto dst = layout<vec3f>(s, strided != 2, [](int64_t) { return vec3f{}; }, keep);
      launch(dense_tests::scale_2d, Dims{7, 5}, src, dst);
      std::vector<vec3f> d = values<vec3f>(dst);
      for (int64_t f = 0; f < 35; ++f) {
        float m = float(f % 5 + 1);
        REQUIRE(d[size_t(f)].c[0] == float(f) * m);
        REQUIRE(d[size_t(f)].c[1] == -float(f) * m);
        REQUIRE(d[size_t(f)].c[2] == 0.5f * m);
      }
    }
    {
      const Shape s{3, 4, 6};
      auto src = layout<double>(s, strided != 1, [](int64_t f) { return 0.25 * double(f); }, keep);
      auto dst = layout<double>(s, strided != 2, [](int64_t) { return 0.0; }, keep);
      launch(dense_tests::offset_3d, Dims{3, 4, 6}, src, dst);
      std::vector<double> d = values<double>(dst);
      for (int64_t f = 0; f < 72; ++f) {
        int64_t i = f / 24, j = f / 6 % 4, k = f % 6;
        REQUIRE(d[size_t(f)] == 0.25 * double(f) + double(i * 100 + j * 10 + k));
      }
    }
    {
      const Shape s{2, 3, 2, 5};
      auto src = layout<int32_t>(s, strided != 1, [](int64_t f) { return int32_t(f * 7); }, keep);
      auto dst = layout<int32_t>(s, strided != 2, [](int64_t) { return 0; }, keep);
      launch(dense_tests::add_4d, Dims{2, 3, 2, 5}, src, dst);
      std::vector<int32_t> d = values<int32_t>(dst);
      for (int64_t f = 0; f < 60; ++f) {
        int64_t i = f / 30, j = f / 10 % 3, k = f / 5 % 2, l = f % 5;
        REQUIRE(d[size_t(f)] == int32_t(f * 7 + i * 1000 + j * 100 + k * 10 + l));
      }
    }
  }
}
