// kjit_ffi_launch (kjit/ffi/c_launch.h), the C entry kjit.torch launches through: forward,
// adjoint and tangent entries on raw buffers, and its errors (each naming the kernel and the
// argument).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kjit/ffi/c_launch.h"
#include "kjit/ffi/ffi.hpp"
#include "saxpy.hpp"

extern "C" const char* kjit_ffi_last_error();

namespace {

constexpr int32_t kF32 = 11, kF64 = 12, kS32 = 4, kS64 = 5;

kjit_c_buffer buf(void* data, int32_t dtype, const std::vector<int64_t>& dims, const int64_t* strides = nullptr) {
  return kjit_c_buffer{data, dtype, int32_t(dims.size()), dims.data(), strides};
}

std::string error() { return kjit_ffi_last_error(); }

struct Saxpy {
  std::vector<float> x{1, 2, 3, 4}, y{10, 20, 30, 40}, out = std::vector<float>(4, -1);
  std::vector<int64_t> n{4};
  float a = 2.5f;
};

}  // namespace

TEST_CASE("kjit_ffi_launch runs a kernel forward on the cpu with a static value") {
  (void)demo::saxpy;
  Saxpy s;
  kjit_c_buffer args[] = {buf(s.x.data(), kF32, s.n), buf(s.y.data(), kF32, s.n)};
  kjit_c_buffer rets[] = {buf(s.out.data(), kF32, s.n)};
  kjit_c_attr attrs[] = {{"a", KJIT_C_ATTR_SCALAR, kF32, 0, &s.a}};
  REQUIRE_MESSAGE(kjit_ffi_launch("demo::saxpy", 0, "cpu", nullptr, args, 2, rets, 1, attrs, 1) == 0, error());
  for (int i = 0; i < 4; ++i) CHECK(s.out[size_t(i)] == doctest::Approx(2.5f * s.x[size_t(i)] + s.y[size_t(i)]));
  CHECK(error().empty());
}

TEST_CASE("kjit_ffi_launch passes a traced value and runs the adjoint with its gradient") {
  std::vector<double> x{1, 2, 3}, y{4, 5, 6}, out(3), ct{1, 10, 100}, gx(3, -7), gy(3, -7);
  double a = 3, ga = -7;
  std::vector<int64_t> n{3}, scalar{};
  int64_t traced[] = {2};
  kjit_c_attr tr[] = {{"kjit_traced", KJIT_C_ATTR_ARRAY, kS64, 1, traced}};
  kjit_c_buffer args[] = {buf(x.data(), kF64, n), buf(y.data(), kF64, n), buf(&a, kF64, scalar)};
  kjit_c_buffer rets[] = {buf(out.data(), kF64, n)};
  REQUIRE_MESSAGE(kjit_ffi_launch("demo::daxpy", 0, "cpu", nullptr, args, 3, rets, 1, tr, 1) == 0, error());
  CHECK(out[2] == 15);
  // Adjoint: inputs, pure outputs, cotangents, traced values -> gx, gy, ga.
  kjit_c_buffer aargs[] = {buf(x.data(), kF64, n), buf(y.data(), kF64, n), buf(out.data(), kF64, n),
                           buf(ct.data(), kF64, n), buf(&a, kF64, scalar)};
  kjit_c_buffer arets[] = {buf(gx.data(), kF64, n), buf(gy.data(), kF64, n), buf(&ga, kF64, scalar)};
  REQUIRE_MESSAGE(kjit_ffi_launch("demo::daxpy", 1, "cpu", nullptr, aargs, 5, arets, 3, tr, 1) == 0, error());
  for (int i = 0; i < 3; ++i) {
    CHECK(gx[size_t(i)] == a * ct[size_t(i)]);
    CHECK(gy[size_t(i)] == ct[size_t(i)]);
  }
  CHECK(ga == 1 * 1 + 2 * 10 + 3 * 100);
}

TEST_CASE("kjit_ffi_launch runs a tangent kernel (the kernel's name + .tangent)") {
  std::vector<double> x{1, 2, 3}, y{4, 5, 6}, dx{1, 0, 2}, dy{0, 1, 0}, out(3), dout(3, -1);
  double a = 3, da = 0.5;
  std::vector<int64_t> n{3}, scalar{};
  // Tangent kernel parameters: x, y, a, out, then dx, dy, da, dout; arrays in the call's order
  // (x, y, dx, dy | out, dout), values a and da traced.
  int64_t traced[] = {2, 6}, order[] = {0, 1, 4, 5, 3, 7};
  kjit_c_attr attrs[] = {{"kjit_traced", KJIT_C_ATTR_ARRAY, kS64, 2, traced},
                         {"kjit_array_order", KJIT_C_ATTR_ARRAY, kS64, 6, order}};
  kjit_c_buffer args[] = {buf(x.data(), kF64, n),  buf(y.data(), kF64, n), buf(dx.data(), kF64, n),
                          buf(dy.data(), kF64, n), buf(&a, kF64, scalar),  buf(&da, kF64, scalar)};
  kjit_c_buffer rets[] = {buf(out.data(), kF64, n), buf(dout.data(), kF64, n)};
  REQUIRE_MESSAGE(kjit_ffi_launch("demo::daxpy.tangent", 0, "cpu", nullptr, args, 6, rets, 2, attrs, 2) == 0, error());
  for (int i = 0; i < 3; ++i) {
    CHECK(out[size_t(i)] == a * x[size_t(i)] + y[size_t(i)]);
    CHECK(dout[size_t(i)] == da * x[size_t(i)] + a * dx[size_t(i)] + dy[size_t(i)]);
  }
}

TEST_CASE("kjit_ffi_launch reports bad calls naming the kernel and the argument") {
  Saxpy s;
  std::vector<double> xd(4);
  std::vector<int64_t> n2{2, 2}, n3{4, 3};
  kjit_c_attr attrs[] = {{"a", KJIT_C_ATTR_SCALAR, kF32, 0, &s.a}};
  kjit_c_buffer rets[] = {buf(s.out.data(), kF32, s.n)};

  SUBCASE("unknown kernel") {
    kjit_c_buffer args[] = {buf(s.x.data(), kF32, s.n), buf(s.y.data(), kF32, s.n)};
    CHECK(kjit_ffi_launch("demo::nope", 0, "cpu", nullptr, args, 2, rets, 1, attrs, 1) == -1);
    CHECK(error().find("demo::nope") != std::string::npos);
  }
  SUBCASE("wrong dtype") {
    kjit_c_buffer args[] = {buf(s.x.data(), kF32, s.n), buf(xd.data(), kF64, s.n)};
    CHECK(kjit_ffi_launch("demo::saxpy", 0, "cpu", nullptr, args, 2, rets, 1, attrs, 1) == -1);
    CHECK(error() == "kjit kernel 'demo::saxpy': Invalid data type for array argument 'y', expected float32, got float64");
  }
  SUBCASE("wrong rank of an output") {
    kjit_c_buffer args[] = {buf(s.x.data(), kF32, s.n), buf(s.y.data(), kF32, s.n)};
    std::vector<int64_t> none{};
    kjit_c_buffer bad[] = {buf(s.out.data(), kF32, none)};
    CHECK(kjit_ffi_launch("demo::saxpy", 0, "cpu", nullptr, args, 2, bad, 1, attrs, 1) == -1);
    CHECK(error().find("Invalid dimensionality for output 'out', expected 1 dimensions, got 0") != std::string::npos);
  }
  SUBCASE("wrong static value type") {
    kjit_c_buffer args[] = {buf(s.x.data(), kF32, s.n), buf(s.y.data(), kF32, s.n)};
    int32_t i = 2;
    kjit_c_attr bad[] = {{"a", KJIT_C_ATTR_SCALAR, kS32, 0, &i}};
    CHECK(kjit_ffi_launch("demo::saxpy", 0, "cpu", nullptr, args, 2, rets, 1, bad, 1) == -1);
    CHECK(error() == "kjit kernel 'demo::saxpy': Invalid data type for static argument 'a', expected float32, got int32");
  }
  SUBCASE("missing static value") {
    kjit_c_buffer args[] = {buf(s.x.data(), kF32, s.n), buf(s.y.data(), kF32, s.n)};
    CHECK(kjit_ffi_launch("demo::saxpy", 0, "cpu", nullptr, args, 2, rets, 1, nullptr, 0) == -1);
    CHECK(error().find("Missing static argument 'a'") != std::string::npos);
  }
  SUBCASE("strides that are not row-major") {
    int64_t strides[] = {1, 2};
    kjit_c_buffer args[] = {buf(s.x.data(), kF32, n2, strides), buf(s.y.data(), kF32, s.n)};
    CHECK(kjit_ffi_launch("demo::saxpy", 0, "cpu", nullptr, args, 2, rets, 1, attrs, 1) == -1);
    CHECK(error() == "kjit kernel 'demo::saxpy': operand 0 has strides (1, 2) for shape (2, 2): kjit launches read "
                     "dense row-major arrays");
  }
  SUBCASE("unknown device") {
    kjit_c_buffer args[] = {buf(s.x.data(), kF32, s.n), buf(s.y.data(), kF32, s.n)};
    CHECK(kjit_ffi_launch("demo::saxpy", 0, "tpu", nullptr, args, 2, rets, 1, attrs, 1) == -1);
    CHECK(error() == "kjit_ffi_launch: unknown device 'tpu' (expected 'cpu' or 'cuda:N')");
  }
  SUBCASE("an adjoint with the wrong number of results") {
    kjit_c_buffer args[] = {buf(s.x.data(), kF32, s.n), buf(s.y.data(), kF32, s.n), buf(s.out.data(), kF32, s.n),
                            buf(s.out.data(), kF32, s.n)};
    CHECK(kjit_ffi_launch("demo::saxpy", 1, "cpu", nullptr, args, 4, rets, 1, attrs, 1) == -1);
    CHECK(error().find("kjit adjoint of kernel 'demo::saxpy': expected 2 results") != std::string::npos);
  }
  // A failed call leaves no trace on the next one.
  kjit_c_buffer args[] = {buf(s.x.data(), kF32, s.n), buf(s.y.data(), kF32, s.n)};
  CHECK(kjit_ffi_launch("demo::saxpy", 0, "cpu", nullptr, args, 2, rets, 1, attrs, 1) == 0);
  CHECK(error().empty());
}

TEST_CASE("kjit_ffi_launch_call launches a prepared call on new memory each time, and reports its errors") {
  Saxpy s;
  std::vector<float> x2{5, 6, 7, 8}, y2{1, 1, 1, 1}, out2(4, -1);
  kjit_c_attr attrs[] = {{"a", KJIT_C_ATTR_SCALAR, kF32, 0, &s.a}};
  // The buffers' own data pointers are null: every launch brings its memory in `data`.
  kjit_c_buffer args[] = {buf(nullptr, kF32, s.n), buf(nullptr, kF32, s.n)};
  kjit_c_buffer rets[] = {buf(nullptr, kF32, s.n)};
  kjit_c_call call{"demo::saxpy", 0, 0, "cpu", args, 2, rets, 1, attrs, 1};
  void* first[] = {s.x.data(), s.y.data(), s.out.data()};
  REQUIRE_MESSAGE(kjit_ffi_launch_call(&call, first, nullptr) == 0, error());
  void* second[] = {x2.data(), y2.data(), out2.data()};
  REQUIRE_MESSAGE(kjit_ffi_launch_call(&call, second, nullptr) == 0, error());
  for (size_t i = 0; i < 4; ++i) {
    CHECK(s.out[i] == doctest::Approx(2.5f * s.x[i] + s.y[i]));
    CHECK(out2[i] == doctest::Approx(2.5f * x2[i] + y2[i]));
  }
  // Without `data`, the buffers' own pointers: null ones are the handler's error, naming the operand.
  CHECK(kjit_ffi_launch_call(&call, nullptr, nullptr) == -1);
  CHECK(error() == "kjit kernel 'demo::saxpy': output 'out' has no data but shape (4,)");
  kjit_c_buffer own[] = {buf(s.x.data(), kF32, s.n), buf(s.y.data(), kF32, s.n)};
  kjit_c_buffer own_ret[] = {buf(out2.data(), kF32, s.n)};
  kjit_c_call plain{"demo::saxpy", 0, 0, "cpu", own, 2, own_ret, 1, attrs, 1};
  REQUIRE_MESSAGE(kjit_ffi_launch_call(&plain, nullptr, nullptr) == 0, error());
  CHECK(out2[3] == doctest::Approx(2.5f * 4 + 40));
  // The checks are kjit_ffi_launch's: a call's dims are checked at every launch.
  std::vector<int64_t> three{3};
  kjit_c_buffer short_y[] = {buf(nullptr, kF32, s.n), buf(nullptr, kF32, three)};
  kjit_c_call bad{"demo::saxpy", 0, 0, "cpu", short_y, 2, rets, 1, attrs, 1};
  CHECK(kjit_ffi_launch_call(&bad, first, nullptr) == -1);
  CHECK(error().find("kjit kernel 'demo::saxpy': array argument 'y' has extent 3") != std::string::npos);
  bad.device = "tpu";
  CHECK(kjit_ffi_launch_call(&bad, first, nullptr) == -1);
  CHECK(error() == "kjit_ffi_launch: unknown device 'tpu' (expected 'cpu' or 'cuda:N')");
  CHECK(kjit_ffi_launch_call(nullptr, first, nullptr) == -1);
  CHECK(error() == "kjit_ffi_launch_call: no call");
}
