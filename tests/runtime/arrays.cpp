// NdArray: shapes, strides, copies, gradient buffers, half-precision round trips.
#include <doctest/doctest.h>

#include <cmath>

#include "kjit/kjit.hpp"

using namespace kjit;

TEST_CASE("arrays: shape, strides, contiguity, round trips") {
  auto a = NdArray::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(a.ndim() == 2);
  CHECK(a.size() == 6);
  CHECK(a.strides() == std::vector<int64_t>{12, 4});
  CHECK(a.is_contiguous());
  CHECK(a.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK_THROWS_WITH_AS(a.to_vector<double>(), doctest::Contains("holds float32, not float64"), Error);
  auto b = a.copy();
  b.zero();
  CHECK(a.to_vector<float>()[0] == 1);
  CHECK(b.to_vector<float>()[0] == 0);
  b.copy_from(a);
  CHECK(b.to_vector<float>() == a.to_vector<float>());
  CHECK_THROWS_WITH_AS(NdArray::zeros(a.element(), {1, 2, 3, 4, 5}), doctest::Contains("1 to 4 dimensions"), Error);
  CHECK_THROWS_WITH_AS(from_vector(std::vector<float>{1, 2}, {3}), doctest::Contains("2 values for an array of 3"), Error);
}

TEST_CASE("an array whose size overflows 64 bits is refused, naming the shape") {
  // 4323 * 1119412321 * 7623851 * 4 bytes wrapped to 4 bytes before the product was checked.
  CHECK_THROWS_WITH_AS(zeros<float>({4323, 1119412321, 7623851}),
                       "array of shape {4323, 1119412321, 7623851} of float32: its size in bytes overflows 64 bits",
                       Error);
  CHECK_THROWS_WITH_AS(zeros<vec3f>({2147483647, 2147483647, 2147483647}),
                       doctest::Contains("array of shape {2147483647, 2147483647, 2147483647} of vec3f"), Error);
  CHECK_THROWS_WITH_AS(NdArray::view(nullptr, ir_type_of<float>(), {65536, 65536, 65536, 65536}, Device::cpu()),
                       doctest::Contains("overflows 64 bits"), Error);
  CHECK_THROWS_WITH_AS(zeros<float>({3, -1}), "array of shape {3, -1}: extents must not be negative", Error);
  auto big = zeros<float>({65536, 1, 2});  // near the product's edge but fine
  CHECK(big.size() == 131072);
}

TEST_CASE("gradient buffers are zeroed, shaped like their array, and reset by zero_grad") {
  auto a = zeros<vec3f>({5});
  CHECK(!a.has_grad());
  CHECK(!a.grad().defined());
  a.requires_grad();
  CHECK(a.grad().shape() == a.shape());
  CHECK(a.grad().element() == a.element());
  auto g = a.grad().to_vector<vec3f>();
  for (auto& v : g) CHECK((v[0] == 0 && v[1] == 0 && v[2] == 0));
}

TEST_CASE("cpu allocations are 64-byte aligned") {
  for (int n : {1, 3, 17, 1000}) CHECK(reinterpret_cast<uintptr_t>(zeros<float>({n}).data()) % 64 == 0);
}

TEST_CASE("cpu allocations of 2 MiB and more start huge pages, and every byte of them is usable") {
  // Just below, at and above the huge page size, in floats; below it only 64-byte alignment.
  for (int64_t n : {int64_t(1) << 19, (int64_t(1) << 19) + 1, int64_t(3) << 19, (int64_t(1) << 19) - 16}) {
    CAPTURE(n);
    NdArray a = zeros<float>({n});
    const auto at = reinterpret_cast<uintptr_t>(a.data());
    if (n * 4 >= (int64_t(2) << 20)) CHECK(at % (uintptr_t(2) << 20) == 0);
    else CHECK(at % 64 == 0);
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(i % 1000);
    NdArray b = from_vector(v);
    CHECK(b.to_vector<float>()[size_t(n - 1)] == float((n - 1) % 1000));
    CHECK(a.to_vector<float>()[size_t(n - 1)] == 0.0f);
  }
}

TEST_CASE("float16 and bfloat16 convert with round-to-nearest-even") {
  CHECK(float(half(1.0f)) == 1.0f);
  CHECK(float(half(65504.0f)) == 65504.0f);
  CHECK(std::isinf(float(half(70000.0f))));
  CHECK(float(half(1.0f + 1.0f / 4096)) == 1.0f);  // ties to even
  CHECK(float(half(5.96046448e-8f)) == 5.96046448e-8f);  // smallest subnormal
  CHECK(float(half(-2.5f)) == -2.5f);
  CHECK(float(bfloat16(3.140625f)) == 3.140625f);
  CHECK(float(bfloat16(1.0f + 1.0f / 256)) == 1.0f);  // ties to even
  auto h = from_vector(std::vector<half>{half(0.5f), half(-3.0f)});
  auto back = h.to_vector<half>();
  CHECK(float(back[1]) == -3.0f);
}

namespace array_view_tests {
KJIT_MODULE(runtime_array_views)
using namespace kjit::dsl;
KJIT_KERNEL(add_index, (Array<Float, 2> a)) {
  auto [i, j] = tid<2>();
  a(i, j) = a(i, j) + Float(10 * i + j);
}
}  // namespace array_view_tests

TEST_CASE("Warp's array habits: fill, reshape, flatten, slices, subarrays and transposes are views") {
  auto a = from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3}).requires_grad();
  a.fill(2.5f);
  CHECK(a.to_vector<float>() == std::vector<float>(6, 2.5f));
  auto v = zeros<vec3f>({2});
  v.fill(vec3f{{1, 2, 3}});
  CHECK(v.to_vector<vec3f>()[1][1] == 2);
  CHECK_THROWS_WITH_AS(a.fill(1.0), "fill: the array holds float32, not float64", Error);

  a = from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3}).requires_grad();
  NdArray r = a.reshape({3, -1});
  CHECK(r.shape() == Shape{3, 2});
  CHECK(r.data() == a.data());
  CHECK(r.grad().data() == a.grad().data());  // the gradient is viewed alike
  CHECK(a.flatten().shape() == Shape{6});
  CHECK_THROWS_WITH_AS(a.reshape({4, -1}), "reshape of an array of shape {2, 3} to {4, -1}: 6 elements do not fit", Error);
  CHECK_THROWS_WITH_AS(a.reshape({5}), "reshape of an array of shape {2, 3} to {5}: 6 elements do not fit", Error);
  CHECK_THROWS_WITH_AS(a.reshape({-2, 3}), "reshape to {-2, 3}: extents must not be negative (one may be -1)", Error);

  NdArray row1 = a[1];
  CHECK(row1.shape() == Shape{3});
  CHECK(row1.to_vector<float>() == std::vector<float>{3, 4, 5});
  CHECK(a.slice(1, 2).shape() == Shape{1, 3});
  CHECK_THROWS_WITH_AS(a.slice(1, 3), "slice [1, 3) of an array of shape {2, 3}: out of range", Error);
  CHECK_THROWS_WITH_AS(a[2], "index 2 of an array of shape {2, 3}: out of range", Error);
  CHECK_THROWS_WITH_AS(row1[0], doctest::Contains("operator[] of a 1-D array"), Error);

  NdArray t = a.transpose();
  CHECK(t.shape() == Shape{3, 2});
  CHECK(t.strides() == std::vector<int64_t>{4, 12});
  CHECK_FALSE(t.is_contiguous());
  CHECK(t.copy().to_vector<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK_THROWS_WITH_AS(t.reshape({6}), "reshape: the array is not contiguous (copy() it first)", Error);
  CHECK_THROWS_WITH_AS(a.transpose({0, 0}), "transpose of a 2-D array: the axes must be a permutation of 0..1", Error);

  // Kernels write through views: a transposed view's element (i, j) is the array's (j, i).
  launch(array_view_tests::add_index, Dims{3, 2}, t);
  CHECK(a.to_vector<float>() == std::vector<float>{0, 1 + 10, 2 + 20, 3 + 1, 4 + 11, 5 + 21});
  // zero and fill through strided views write their elements only (Warp's zero_ and fill_ on
  // a column); kjit::vec3f elements in a strided view too.
  NdArray grid = from_vector(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3});
  grid.transpose()[1].fill(7.0f);  // column 1
  CHECK(grid.to_vector<float>() == std::vector<float>{0, 7, 2, 3, 7, 5});
  grid.transpose()[2].zero();
  CHECK(grid.to_vector<float>() == std::vector<float>{0, 7, 0, 3, 7, 0});
  CHECK(grid.transpose()[1].to_vector<float>() == std::vector<float>{7, 7});  // to_vector of any view
  CHECK(grid.transpose().to_vector<float>() == std::vector<float>{0, 3, 7, 7, 0, 0});
  NdArray points = zeros<vec3f>({4, 2});
  points.transpose()[0].fill(vec3f(1, 2, 3));
  const std::vector<vec3f> filled = points.to_vector<vec3f>();
  for (size_t k = 0; k < 8; ++k)
    for (int c = 0; c < 3; ++c) CHECK(filled[k][c] == (k % 2 == 0 ? float(c + 1) : 0.0f));
  // A view keeps the memory alive.
  NdArray kept;
  {
    auto owner = from_vector(std::vector<float>{7, 8, 9, 10}, {2, 2});
    kept = owner[1];
  }
  CHECK(kept.to_vector<float>() == std::vector<float>{9, 10});
}
