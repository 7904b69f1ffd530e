// The parameter packer writes what generated kernels read: launch bounds, array descriptors
// (data, grad, shape, byte strides, ndim) and values, each at its ABI layout.
#include <doctest/doctest.h>

#include <cstring>

#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "param_packer.hpp"

using namespace kjit;

namespace abi_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_abi)

KJIT_KERNEL(probe, (Array<Float, 3> a, Double d, Vec3f v, Int8 small, Array<Int> ints, Array<Double> reals)) {
  auto [i, j] = tid<2>();
  If((i == 0) && (j == 0), [&] {
    ints[0] = launch_dim(0);
    ints[1] = launch_dim(1);
    ints[2] = a.shape(0);
    ints[3] = a.shape(1);
    ints[4] = a.shape(2);
    ints[5] = Int(small);
    reals[0] = d;
    reals[1] = Double(v.x());
    reals[2] = Double(v.y());
    reals[3] = Double(v.z());
    reals[4] = Double(a(1, 2, 3));
  });
}

/// out = the sum of every component of each value: values inline in a LaunchArg (up to 32
/// bytes) and held out of line (larger) arrive the same.
KJIT_KERNEL(value_sizes, (Float s, Vec4d v4, Mat33f m3, Mat44d m4, Array<Double> out)) {
  Var<Double> sum = Double(s) + v4.x() + v4.y() + v4.z() + v4.w();
  For(0, 3, [&](Int r) { For(0, 3, [&](Int c) { sum += Double(m3(r, c)); }); });
  For(0, 4, [&](Int r) { For(0, 4, [&](Int c) { sum += m4(r, c); }); });
  out[tid()] = sum;
}

KJIT_KERNEL(copy2d, (Array<Float, 2> src, Array<Float, 2> dst)) {
  auto [i, j] = tid<2>();
  dst(i, j) = src(i, j);
}
}  // namespace abi_tests

TEST_CASE("a generated kernel reads back the launch bounds, array metadata and values packed") {
  auto a = zeros<float>({2, 3, 4});
  std::vector<float> host(24);
  for (int k = 0; k < 24; ++k) host[size_t(k)] = float(k) * 0.5f;
  a = NdArray::from_vector(host, {2, 3, 4});
  auto ints = zeros<int32_t>({6});
  auto reals = zeros<double>({5});
  launch(abi_tests::probe, Dims{5, 7}, a, 2.25, vec3f{{1.5f, -2.0f, 3.25f}}, int8_t(-7), ints, reals);
  CHECK(ints.to_vector<int32_t>() == std::vector<int32_t>{5, 7, 2, 3, 4, -7});
  auto r = reals.to_vector<double>();
  CHECK(r[0] == 2.25);
  CHECK(r[1] == 1.5);
  CHECK(r[2] == -2.0);
  CHECK(r[3] == 3.25);
  CHECK(r[4] == double(host[1 * 12 + 2 * 4 + 3]));  // a(1, 2, 3), row-major
}

TEST_CASE("launch values of every size keep their bytes through copies of the LaunchArg") {
  kjit::vec<4, double> v4;
  kjit::mat<3, 3, float> m3;
  kjit::mat<4, 4, double> m4;
  double want = 0.5;
  for (int i = 0; i < 4; ++i) want += (v4.c[i] = 1.25 * (i + 1));
  for (int i = 0; i < 9; ++i) want += (m3.c[i / 3][i % 3] = float(i) - 3.5f);
  for (int i = 0; i < 16; ++i) want += (m4.c[i / 4][i % 4] = 0.125 * i * i);
  std::vector<LaunchArg> args = {0.5f, v4, m3, m4, zeros<double>({3})};
  std::vector<LaunchArg> copies = args;  // the large ones share their bytes; nothing dangles
  args.clear();
  launch(abi_tests::value_sizes.def(), 3, copies);
  for (double got : copies[4].array().to_vector<double>()) CHECK(got == doctest::Approx(want).epsilon(1e-12));
  LaunchArg m = LaunchArg::from_bytes(ir_type_of<kjit::mat<4, 4, double>>(), &m4);
  CHECK(std::memcmp(m.bytes(), &m4, sizeof m4) == 0);
  LaunchArg v = LaunchArg::from_bytes(ir_type_of<kjit::vec<4, double>>(), &v4);
  CHECK(std::memcmp(v.bytes(), &v4, sizeof v4) == 0);
}

TEST_CASE("byte strides are honoured: a transposed view reads transposed") {
  std::vector<float> m = {1, 2, 3, 4, 5, 6};  // 2 x 3, row-major
  auto src = NdArray::from_vector(m, {2, 3});
  // The 3 x 2 transpose of the same memory: strides swapped.
  auto t = NdArray::view(src.data(), src.element(), {3, 2}, src.device(), {4, 12});
  auto dst = zeros<float>({3, 2});
  launch(abi_tests::copy2d, Dims{3, 2}, t, dst);
  CHECK(dst.to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("the packed bytes follow kjit/abi.h exactly") {
  auto a = zeros<float>({2, 3, 4});
  a.requires_grad();
  auto ints = zeros<int32_t>({6});
  auto reals = zeros<double>({5});
  std::vector<LaunchArg> args{a, 2.25, vec3f{{1.5f, -2.0f, 3.25f}}, int8_t(-7), ints, reals};
  const KernelDef& k = abi_tests::probe.def();
  kj::launch_bounds_t bounds = detail::make_bounds(k, Dims{5, 7});
  detail::PackedParams p;
  detail::pack_launch(p, k, bounds, args, nullptr, Device::cpu());
  REQUIRE(p.count() == 7);
  const auto* b = static_cast<const kj::launch_bounds_t*>(p.param(0));
  CHECK(b->ndim == 2);
  CHECK(b->shape[0] == 5);
  CHECK(b->shape[1] == 7);
  CHECK(b->shape[2] == 1);
  CHECK(b->size == 35);
  const auto* d = static_cast<const kj::array_t<void>*>(p.param(1));
  CHECK(d->data == a.data());
  CHECK(d->grad == a.grad().data());
  CHECK(d->ndim == 3);
  CHECK(d->shape[0] == 2);
  CHECK(d->shape[2] == 4);
  CHECK(d->strides[0] == 48);
  CHECK(d->strides[1] == 16);
  CHECK(d->strides[2] == 4);
  // Values are kj::value_t: no pointer (the value travels in the parameter), the value at 8.
  const auto* d2 = static_cast<const kj::value_t<double>*>(p.param(2));
  CHECK(d2->ptr == nullptr);
  CHECK(d2->value == 2.25);
  const auto* v3 = static_cast<const kj::value_t<vec3f>*>(p.param(3));
  CHECK(v3->ptr == nullptr);
  CHECK(v3->value[2] == 3.25f);
  const auto* small = static_cast<const kj::value_t<int8_t>*>(p.param(4));
  CHECK(small->ptr == nullptr);
  CHECK(small->value == -7);
  for (size_t i = 0; i < p.count(); ++i) CHECK(reinterpret_cast<uintptr_t>(p.param(i)) % 8 == 0);
  CHECK(reinterpret_cast<uintptr_t>(p.param(1)) % alignof(kj::array_t<void>) == 0);
  static_assert(sizeof(kj::value_t<vec3f>) == kj::value_bytes(12), "value_t of a 12-byte vector");
}

TEST_CASE("adjoint launches pack one adjoint per parameter after the parameters") {
  auto x = zeros<float>({4}), y = zeros<float>({4}), out = zeros<float>({4});
  auto gx = zeros<float>({4});
  const KernelDef* k = Registry::get().find_kernel("demo::saxpy");
  if (!k) return;  // the example header is not linked into this binary
  std::vector<LaunchArg> args{x, y, 2.0f, out}, adj{gx, {}, {}, out};
  detail::PackedParams p;
  detail::pack_launch(p, *k, detail::make_bounds(*k, 4), args, &adj, Device::cpu());
  REQUIRE(p.count() == 9);
  CHECK(static_cast<const kj::array_t<void>*>(p.param(5))->data == gx.data());
  CHECK(static_cast<const kj::array_t<void>*>(p.param(6))->data == nullptr);  // absent: null
  CHECK(*static_cast<void* const*>(p.param(7)) == nullptr);                  // no value gradient asked for
}

TEST_CASE("a value's adjoint slot is a pointer; on the cpu the launch's partial sums, merged into the destination") {
  const KernelDef* k = Registry::get().find_kernel("demo::saxpy");
  if (!k) return;
  auto x = zeros<float>({4}), y = zeros<float>({4}), out = zeros<float>({4});
  float da = 0.5f;
  std::vector<LaunchArg> args{x, y, 2.0f, out}, adj{{}, {}, &da, out};
  detail::PackedParams p;
  detail::ValueSums sums;
  detail::pack_launch(p, *k, detail::make_bounds(*k, 4), args, &adj, Device::cpu(), &sums);
  REQUIRE(sums.size() == 1);
  CHECK(*static_cast<void* const*>(p.param(7)) == nullptr);  // until prepare() points it at the partials
  sums.prepare(4);
  auto* partials = *static_cast<float* const*>(p.param(7));
  REQUIRE(partials != nullptr);
  CHECK(partials[0] == 0.0f);
  partials[0] = 1.25f;  // what the one block of a 4-thread launch writes
  sums.finish();
  CHECK(da == 1.75f);  // added, not assigned
}
