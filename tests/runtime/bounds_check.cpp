// Bounds-checked mode (ModuleOptions::bounds_check, KJIT_BOUNDS_CHECK=1) and integer division:
// each fault is a User error naming the kernel, the line, the thread, the index and the
// extent; the process survives and the next launch is clean; x / 0 has one defined value.
#include <doctest/doctest.h>

#include <climits>
#include <cstring>
#include <string_view>
#include <string>

#include "kjit/compiler/build.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "kjit/kernel.hpp"
#include "test_support.hpp"

using namespace kjit;

namespace bounds_tests {
KJIT_MODULE(runtime_bounds)
using namespace kjit::dsl;
constexpr int kReadLine = __LINE__ + 3;
KJIT_KERNEL(shifted_read, (Array<Double> x, Int off, Array<Double> out)) {
  Int i = tid();
  out[i] = x[i + off] * 2.0;
}
constexpr int kWriteLine = __LINE__ + 3;
KJIT_KERNEL(shifted_write, (Array<Float> x, Int off, Array<Float> out)) {
  Int i = tid();
  out[i + off] = x[i];
}
KJIT_KERNEL(column_read, (Array<Float, 2> m, Int col, Array<Float> out)) {
  Int i = tid();
  out[i] = m(i, col);
}
constexpr int kLocalLine = __LINE__ + 4;
KJIT_KERNEL(local_index, (Array<Double> x, Int k, Array<Double> out)) {
  Int i = tid();
  auto a = zeros<Double, 4>();
  a[k] = x[i];
  out[i] = a[0] + a[1] + a[2] + a[3];
}
constexpr int kDivLine = __LINE__ + 3;
KJIT_KERNEL(int_divide, (Array<int32_t> a, Array<int32_t> b, Array<int32_t> q)) {
  Int i = tid();
  q[i] = a[i] / b[i];
}
}  // namespace bounds_tests

namespace division_tests {
KJIT_MODULE(runtime_division)  // the default options: division is defined without the mode
using namespace kjit::dsl;
KJIT_KERNEL(divide, (Array<int32_t> a, Array<int32_t> b, Array<int32_t> q, Array<int32_t> r, Array<int32_t> f)) {
  Int i = tid();
  q[i] = a[i] / b[i];
  r[i] = a[i] % b[i];
  f[i] = floordiv(a[i], b[i]);
}
KJIT_KERNEL(divide64, (Array<int64_t> a, Array<int64_t> b, Array<int64_t> q, Array<int64_t> r)) {
  Int i = tid();
  q[i] = a[i] / b[i];
  r[i] = a[i] % b[i];
}
KJIT_KERNEL(divide_vec, (Array<vec3i> a, Array<int32_t> b, Array<vec3i> q)) {
  Int i = tid();
  q[i] = a[i] / b[i];
}
}  // namespace division_tests

namespace {
void use_bounds_mode() {
  ModuleOptions o;
  o.bounds_check = true;
  kjit::module("runtime_bounds").set_options(o);
}
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
std::string file_line(int line) { return "bounds_check.cpp:" + std::to_string(line); }
}  // namespace

TEST_CASE("bounds mode: a read past an array's end names kernel, line, thread, index and extent") {
  use_bounds_mode();
  auto x = from_vector(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}), out = zeros<double>({8});
  try {
    launch(bounds_tests::shifted_read, 8, x, 3, out);
    FAIL("no error");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(e.kind() == ErrorKind::User);
    CHECK(has(m, "kernel 'bounds_tests::shifted_read'"));
    CHECK(has(m, file_line(bounds_tests::kReadLine)));
    CHECK(has(m, "thread 5 indexed dimension 0 of an array"));  // the first of 5, 6, 7 to fault
    CHECK(has(m, "with 8, outside its extent 8 (valid: 0..7)"));
  }
  // In range threads computed; the next launch starts from a clean status.
  launch(bounds_tests::shifted_read, 8, x, 0, out);
  CHECK(out.to_vector<double>() == std::vector<double>{2, 4, 6, 8, 10, 12, 14, 16});
  // A negative index is caught as well.
  CHECK_THROWS_WITH_AS(launch(bounds_tests::shifted_read, 1, x, -1, out), doctest::Contains("with -1, outside its extent 8"), Error);
}

TEST_CASE("bounds mode: a write past the end is skipped, not done") {
  use_bounds_mode();
  auto x = from_vector(std::vector<float>{1, 1, 1, 1});
  auto out = zeros<float>({2});
  const std::string where = file_line(bounds_tests::kWriteLine) + " with ";
  CHECK_THROWS_WITH_AS(launch(bounds_tests::shifted_write, 4, x, 1, out), doctest::Contains(where.c_str()), Error);
  CHECK(out.to_vector<float>() == std::vector<float>{0, 1});  // thread 0 wrote; threads 1..3 were skipped
}

TEST_CASE("bounds mode: the second dimension of a 2-D array is checked against its own extent") {
  use_bounds_mode();
  auto m = zeros<float>({4, 3}), out = zeros<float>({4});
  CHECK_THROWS_WITH_AS(launch(bounds_tests::column_read, 4, m, 3, out),
                       doctest::Contains("dimension 1 of an array at "), Error);
  launch(bounds_tests::column_read, 4, m, 2, out);
}

TEST_CASE("bounds mode: local-array indices, forward and adjoint") {
  use_bounds_mode();
  auto x = from_vector(std::vector<double>{1, 2}), out = zeros<double>({2});
  auto gx = zeros<double>({2}), gout = from_vector(std::vector<double>{1, 1});
  for (int k : {4, -2}) {
    try {
      launch(bounds_tests::local_index, 2, x, k, out);
      FAIL("no error");
    } catch (const Error& e) {
      const std::string m = e.what();
      CHECK(has(m, "component index 0 of a local array or vector at "));
      CHECK(has(m, file_line(bounds_tests::kLocalLine)));
      CHECK(has(m, "with " + std::to_string(k) + ", outside its extent 4"));
    }
    // The adjoint replays the same access and reports it from its own launch.
    CHECK_THROWS_WITH_AS(launch_adjoint(bounds_tests::local_index, 2, {x, k, out}, {gx, {}, gout}),
                         doctest::Contains("outside its extent 4"), Error);
  }
  gx = zeros<double>({2});
  launch_adjoint(bounds_tests::local_index, 2, {x, 1, out}, {gx, {}, gout});
  CHECK(gx.to_vector<double>() == std::vector<double>{1, 1});
}

TEST_CASE("bounds mode: the adjoint's array accesses are checked too") {
  use_bounds_mode();
  auto x = from_vector(std::vector<double>{1, 2, 3, 4}), out = zeros<double>({4});
  auto gx = zeros<double>({4}), gout = from_vector(std::vector<double>{1, 1, 1, 1});
  CHECK_THROWS_WITH_AS(launch_adjoint(bounds_tests::shifted_read, 4, {x, 2, out}, {gx, {}, gout}),
                       doctest::Contains("with 4, outside its extent 4"), Error);
  CHECK(gx.to_vector<double>() == std::vector<double>{0, 0, 2, 2});  // in-range threads only
}

TEST_CASE("bounds mode: integer division by zero is reported with the dividend") {
  use_bounds_mode();
  auto a = from_vector(std::vector<int32_t>{7, 8}), b = from_vector(std::vector<int32_t>{1, 0});
  auto q = zeros<int32_t>({2});
  try {
    launch(bounds_tests::int_divide, 2, a, b, q);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(has(e.what(), "thread 1 divided the integer 8 by zero at "));
    CHECK(has(e.what(), file_line(bounds_tests::kDivLine)));
  }
  CHECK(q.to_vector<int32_t>() == std::vector<int32_t>{7, 0});
}

TEST_CASE("integer division and remainder are defined for every operand, without the mode too") {
  // Before: SIGFPE on the cpu (the process died), unspecified values on CUDA. The module is
  // loaded here without the suite's KJIT_BOUNDS_CHECK=1: its values, not reports, are checked.
  kjit::test::ScopedEnv plain("KJIT_BOUNDS_CHECK", nullptr);
  const std::vector<int32_t> av{7, -7, 7, INT32_MIN, INT32_MIN, 0, -9};
  const std::vector<int32_t> bv{0, 0, 2, -1, 1, 0, 4};
  auto a = from_vector(av), b = from_vector(bv);
  auto q = zeros<int32_t>({7}), r = zeros<int32_t>({7}), f = zeros<int32_t>({7});
  launch(division_tests::divide, 7, a, b, q, r, f);
  CHECK(q.to_vector<int32_t>() == std::vector<int32_t>{0, 0, 3, INT32_MIN, INT32_MIN, 0, -2});
  CHECK(r.to_vector<int32_t>() == std::vector<int32_t>{7, -7, 1, 0, 0, 0, -1});
  CHECK(f.to_vector<int32_t>() == std::vector<int32_t>{0, 0, 3, INT32_MIN, INT32_MIN, 0, -3});
  // (a / b) * b + a % b == a for every pair.
  for (size_t i = 0; i < av.size(); ++i)
    CHECK(int32_t(uint32_t(q.to_vector<int32_t>()[i]) * uint32_t(bv[i]) + uint32_t(r.to_vector<int32_t>()[i])) == av[i]);

  auto a64 = from_vector(std::vector<int64_t>{INT64_MIN, 5}), b64 = from_vector(std::vector<int64_t>{-1, 0});
  auto q64 = zeros<int64_t>({2}), r64 = zeros<int64_t>({2});
  launch(division_tests::divide64, 2, a64, b64, q64, r64);
  CHECK(q64.to_vector<int64_t>() == std::vector<int64_t>{INT64_MIN, 0});
  CHECK(r64.to_vector<int64_t>() == std::vector<int64_t>{0, 5});

  auto av3 = from_vector(std::vector<vec3i>{{6, -6, INT32_MIN}}), bv3 = from_vector(std::vector<int32_t>{0});
  auto qv3 = zeros<vec3i>({1});
  launch(division_tests::divide_vec, 1, av3, bv3, qv3);
  CHECK(qv3.to_vector<vec3i>()[0][0] == 0);
  CHECK(qv3.to_vector<vec3i>()[0][2] == 0);
}

TEST_CASE("bounds_check and KJIT_BOUNDS_CHECK=1 enter the module's identity (they change its text)") {
  ModuleOptions plain;
  ModuleOptions checked;
  checked.bounds_check = true;
  CHECK(checked != plain);
  std::string base, with_option;
  {
    kjit::test::ScopedEnv env("KJIT_BOUNDS_CHECK", nullptr);
    base = module_compile_input("runtime_division", plain).source.identity;
    with_option = module_compile_input("runtime_division", checked).source.identity;
  }
  CHECK(with_option != base);
  kjit::test::ScopedEnv env("KJIT_BOUNDS_CHECK", "1");
  CHECK(module_compile_input("runtime_division", plain).source.identity == with_option);
}

TEST_CASE("bounds mode compiles with NVRTC for sm_90: the same checked text runs on CUDA") {
  ModuleOptions checked;
  checked.bounds_check = true;
  for (const char* module : {"runtime_bounds", "runtime_division"}) {
    INFO(module);
    compiler::ModuleSource s = module_compile_input(module, checked).source;
    compiler::CompileOptions fast;
    fast.fast_compile = true;
    compiler::Artifact a = compiler::build_module(s, compiler::Target::parse("sm_90"), fast);
    CHECK(std::memcmp(a.image.data(), "\x7f" "ELF", 4) == 0);
    std::string_view image(a.image.data(), a.image.size());
    for (const std::string& e : s.entry_points) CHECK_MESSAGE(image.find(e) != std::string_view::npos, e);
  }
}
