// Tracing errors: each names the kernel and the user's file and line, and says what to do.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "kjit/ir/ir.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"

using namespace kjit;

namespace te_tests {
using namespace kjit::dsl;
KJIT_MODULE(dsl_tracing_errors)

int line = 0;  // the line a kernel below expects its error at (set while it traces)

KJIT_KERNEL(assign_in_loop, (Array<Float> x)) {
  Float a = x[tid()];
  For(0, 3, [&](Int) {
    line = __LINE__; a = a + 1.0f;
  });
  x[tid()] = a;
}

KJIT_KERNEL(assign_in_branch, (Array<Float> x, Array<Float> out)) {
  Float a = 0.0f;
  If(x[tid()] > 0.0f, [&] {
    line = __LINE__; a = x[tid()] * 2.0f;
  });
  out[tid()] = a;
}

KJIT_KERNEL(value_escapes_branch, (Array<Float> x, Array<Float> out)) {
  std::vector<Float> kept;
  If(x[tid()] > 0.0f, [&] { kept.push_back(x[tid()] * 2.0f); });
  line = __LINE__; out[tid()] = kept[0] + 1.0f;
}

KJIT_KERNEL(unbound, (Array<Float> x)) {
  Float a;
  line = __LINE__; x[tid()] = a * 2.0f;
}

KJIT_KERNEL(break_outside, (Array<Float> x)) {
  line = __LINE__; Break();
}

KJIT_KERNEL(mixed_dims, (Array<Float, 2> x)) {
  auto [i, j] = tid<2>();
  line = __LINE__; auto [a, b, c] = tid<3>();
  x(i, j) = Float(a + b + c);
}

KJIT_KERNEL(float_literal_for_int, (Array<Int> x)) {
  line = __LINE__; x[tid()] = x[tid()] * 2.5;
}

KJIT_KERNEL(literal_out_of_range, (Array<Int8> x)) {
  line = __LINE__; x[tid()] = x[tid()] + 300;
}

KJIT_KERNEL(else_not_chained, (Array<Float> x)) {
  Var<Float> y = 0.0f;
  auto chain = If(x[tid()] > 0.0f, [&] { y = 1.0f; });
  x[tid()] = y;
  line = __LINE__; chain.Else([&] { y = 2.0f; });
}

KJIT_KERNEL(var_escapes, (Array<Float> x)) {
  Var<Float>* leaked = nullptr;
  std::unique_ptr<Var<Float>> holder;
  If(x[tid()] > 0.0f, [&] { holder = std::make_unique<Var<Float>>(1.0f); leaked = holder.get(); });
  line = __LINE__; x[tid()] = *leaked;
}
}  // namespace te_tests

namespace {
/// The message of the tracing error of `k`, checking kind, kernel name and file:line.
std::string trace_error(const KernelDef& k) {
  try {
    k.ir();
  } catch (const Error& e) {
    std::string m = e.what();
    CHECK(e.kind() == ErrorKind::User);
    CHECK_MESSAGE(m.find("kernel '" + k.name() + "'") != std::string::npos, m);
    std::string where = "tests/dsl/tracing_errors.cpp:" + std::to_string(te_tests::line) + ":";
    CHECK_MESSAGE(m.find(where) != std::string::npos, "expected " << where << " in: " << m);
    return m;
  }
  FAIL("kernel " << k.name() << " traced without an error");
  return "";
}
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("assigning a plain value inside a loop body is an error suggesting Var") {
  std::string m = trace_error(te_tests::assign_in_loop.def());
  CHECK(has(m, "a plain Float created in the kernel body"));
  CHECK(has(m, "assigned inside the loop body"));
  CHECK(has(m, "Var<Float>"));
}

TEST_CASE("assigning a plain value inside a branch is an error suggesting Var") {
  std::string m = trace_error(te_tests::assign_in_branch.def());
  CHECK(has(m, "assigned inside the If body"));
  CHECK(has(m, "Var<Float>"));
}

TEST_CASE("a value created inside a branch cannot be used after it") {
  std::string m = trace_error(te_tests::value_escapes_branch.def());
  CHECK(has(m, "created inside the If body"));
  CHECK(has(m, "used after that region ended"));
}

TEST_CASE("using a value that was never given one") {
  CHECK(has(trace_error(te_tests::unbound.def()), "used before it was given one"));
}

TEST_CASE("Break outside a loop") {
  CHECK(has(trace_error(te_tests::break_outside.def()), "Break() outside a For or While body"));
}

TEST_CASE("one kernel, one launch dimensionality") {
  CHECK(has(trace_error(te_tests::mixed_dims.def()), "a kernel has one launch dimensionality"));
}

TEST_CASE("literals must fit the value they stand for") {
  CHECK(has(trace_error(te_tests::float_literal_for_int.def()), "cannot stand for a Int"));
  CHECK(has(trace_error(te_tests::literal_out_of_range.def()), "does not fit in Int8"));
}

TEST_CASE("Else must directly follow its If") {
  CHECK(has(trace_error(te_tests::else_not_chained.def()), "Else must directly follow its If"));
}

TEST_CASE("a Var declared in a branch cannot be used after it") {
  CHECK(has(trace_error(te_tests::var_escapes.def()), "a Var declared inside the If body"));
}

TEST_CASE("a DSL value outside a kernel is an error") {
  try {
    dsl::Float f = 1.0f;
    (void)f;
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(has(e.what(), "only while a kernel is traced"));
  }
}

TEST_CASE("the error repeats on every use of a kernel that failed to trace") {
  CHECK_THROWS_AS(te_tests::unbound.def().ir(), Error);
  CHECK_THROWS_AS(te_tests::unbound.def().ir(), Error);
}
