// kjit::launch refuses what the kernel's IR proves out of range: a launch longer than an array
// indexed by the thread index with no guard, and empty or data-less arrays the kernel touches.
#include <doctest/doctest.h>

#include "kjit/kjit.hpp"
#include "saxpy.hpp"
#include "user_error.hpp"

using namespace kjit;

namespace extent_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_extents)
KJIT_KERNEL(guarded_copy, (Array<Float> x, Array<Float> out)) {
  Int i = tid();
  If(i < x.shape(0), [&] { out[i] = x[i]; });
}
KJIT_KERNEL(rows, (Array<Float, 2> m, Array<Float, 2> out)) {
  auto [r, c] = tid<2>();
  out(r, c) = m(r, 2 * c);
}
KJIT_KERNEL(extent_only, (Array<Float> x, Array<Float> out)) { out[tid()] = cast<float>(x.shape(0)); }
}  // namespace extent_tests

using kjit::test::error_of;

TEST_CASE("a launch past an unguarded array names the kernel, the parameter and both sizes") {
  auto x = zeros<float>({10}), y = zeros<float>({20}), out = zeros<float>({20});
  std::string m = error_of([&] { launch(demo::saxpy, 20, x, y, 2.0f, out); });
  INFO(m);
  CHECK(m.find("launch of kernel 'demo::saxpy' over {20}: array 'x' has extent 10 in dimension 0, but the kernel "
               "indexes it at tid() (saxpy.hpp:") != std::string::npos);
  CHECK(m.find("with no guard, which needs 20") != std::string::npos);
  launch(demo::saxpy, 10, x, y, 2.0f, out);  // within every extent: fine
  // A 2-D launch: each launch dimension against the dimension it indexes (m(r, 2c) needs 2 * 2 + 1 columns).
  auto m2 = zeros<float>({4, 4}), o2 = zeros<float>({4, 3});
  std::string e = error_of([&] { launch(extent_tests::rows, Dims{4, 3}, m2, o2); });
  CHECK(e.find("array 'm' has extent 4 in dimension 1, but the kernel indexes it at 2*tid(1) (") != std::string::npos);
  CHECK(e.find("which needs 5") != std::string::npos);
  auto m3 = from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {2, 5});
  auto o3 = zeros<float>({2, 3});
  launch(extent_tests::rows, Dims{2, 3}, m3, o3);
  CHECK(o3.to_vector<float>() == std::vector<float>{0, 2, 4, 5, 7, 9});
}

TEST_CASE("a guarded kernel may launch past its array") {
  auto x = from_vector<float>({1, 2, 3}), out = zeros<float>({8});
  launch(extent_tests::guarded_copy, 8, x, out);
  CHECK(out.to_vector<float>() == std::vector<float>{1, 2, 3, 0, 0, 0, 0, 0});
}

TEST_CASE("empty arrays and views without data are errors where the kernel touches them") {
  auto empty = zeros<float>({0}), out = zeros<float>({4});
  std::string m = error_of([&] { launch(extent_tests::guarded_copy, 4, empty, out); });
  CHECK(m == "launch of kernel 'extent_tests::guarded_copy': array 'x' is empty but the launch {4} has 4 threads "
             "and the kernel reads or writes its elements");
  NdArray null_view = NdArray::view(nullptr, ir::Type::scalar_of(ir::Scalar::F32), {4}, Device::cpu());
  m = error_of([&] { launch(extent_tests::guarded_copy, 4, null_view, out); });
  CHECK(m == "launch of kernel 'extent_tests::guarded_copy': array 'x' has no data (a view of a null pointer) but 4 "
             "elements, which the kernel reads or writes");
  // Only the extent is read: an empty array is fine.
  launch(extent_tests::extent_only, 4, empty, out);
  CHECK(out.to_vector<float>() == std::vector<float>{0, 0, 0, 0});
}
