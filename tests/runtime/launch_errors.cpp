// Launch mistakes are User errors naming the kernel, the parameter and the mismatch.
#include <doctest/doctest.h>

#include "kjit/kjit.hpp"
#include "saxpy.hpp"
#include "user_error.hpp"

using namespace kjit;

namespace le_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_errors)
KJIT_KERNEL(grid, (Array<Float, 2> x)) {
  auto [i, j] = tid<2>();
  x(i, j) = 1.0f;
}
}  // namespace le_tests

namespace {
using kjit::test::error_of;
bool has(const std::string& s, const std::string& part) {
  INFO(s);
  return s.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("wrong argument count names the kernel and its parameters") {
  auto x = zeros<float>({4});
  std::string m = error_of([&] { launch(demo::saxpy, 4, x, x, 2.0f); });
  CHECK(has(m, "launch of kernel 'demo::saxpy': expected 4 arguments (x, y, a, out), got 3"));
}

TEST_CASE("wrong argument types name the parameter") {
  auto x = zeros<float>({4}), i = zeros<int32_t>({4}), m2 = zeros<float>({2, 2});
  CHECK(has(error_of([&] { launch(demo::saxpy, 4, i, x, 2.0f, x); }),
            "argument 1 ('x') expects a 1-D array of float32, got a 1-D array of int32"));
  CHECK(has(error_of([&] { launch(demo::saxpy, 4, x, m2, 2.0f, x); }),
            "argument 2 ('y') expects a 1-D array of float32, got a 2-D array of float32"));
  CHECK(has(error_of([&] { launch(demo::saxpy, 4, x, x, x, x); }),
            "argument 3 ('a') expects a float32 value, got a 1-D array of float32"));
  CHECK(has(error_of([&] { launch(demo::saxpy, 4, x, x, 2.0f, 3.0f); }),
            "argument 4 ('out') expects a 1-D array of float32, got a float32 value"));
  CHECK(has(error_of([&] { launch(demo::saxpy, 4, x, x, true, x); }), "argument 3 ('a') expects a float32 value"));
  CHECK(has(error_of([&] { launch(demo::saxpy, 4, x, NdArray(), 2.0f, x); }), "argument 2 ('y') is missing"));
  CHECK(has(error_of([&] { launch(demo::saxpy, 4, x, x, (int64_t(1) << 40) + 1, x); }), "does not convert exactly"));
  // Lossless conversions are accepted: an int and a double into a float parameter.
  launch(demo::saxpy, 4, x, x, 2, x);
  launch(demo::saxpy, 4, x, x, 0.5, x);
}

TEST_CASE("adjoint arrays must match their primal array") {
  auto x = zeros<float>({4}), y = zeros<float>({4}), out = zeros<float>({4});
  CHECK(has(error_of([&] { launch_adjoint(demo::saxpy, 4, {x, y, 2.0f, out}, {zeros<float>({5}), {}, {}, {}}); }),
            "adjoint of argument 1 ('x') must have the shape of the array it is the gradient of"));
  CHECK(has(error_of([&] { launch_adjoint(demo::saxpy, 4, {x, y, 2.0f, out}, {zeros<double>({4}), {}, {}, {}}); }),
            "adjoint of argument 1 ('x') expects a 1-D array of float32, got a 1-D array of float64"));
  CHECK(has(error_of([&] { launch_adjoint(demo::saxpy, 4, {x, y, 2.0f, out}, {{}, {}}); }),
            "expected 4 adjoint arguments"));
}

TEST_CASE("launch dimensionality and extents are checked") {
  auto g = zeros<float>({2, 2});
  CHECK(has(error_of([&] { launch(le_tests::grid, 4, g); }),
            "the kernel uses tid<2>() and needs a 2-D launch, got 1-D"));
  CHECK(has(error_of([&] { launch(le_tests::grid, Dims{1, 2, 3, 4, 5}, g); }), "launches have 1 to 4 dimensions"));
  CHECK(has(error_of([&] { launch(le_tests::grid, Dims{100000, 100000}, g); }), "exceed the 2^31-1"));
  CHECK(has(error_of([&] { launch(le_tests::grid, Dims{-1, 2}, g); }), "is out of range"));
}

TEST_CASE("devices: cpu always; cuda:N says why it cannot be used here") {
  CHECK(Device::parse("cpu") == Device::cpu());
  CHECK(Device::cpu().name() == "cpu");
  CHECK(Device::cuda(3).name() == "cuda:3");
  try {
    Device::parse("gpu7");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(has(e.what(), "unknown device 'gpu7'"));
  }
  if (default_device().is_cpu()) {
    try {
      Device::parse("cuda:0");
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Driver);
      CHECK(has(e.what(), "device cuda:0 cannot be used"));
    }
  }
}
