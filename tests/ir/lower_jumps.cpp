// lower_jumps (kjit/ir/lower_jumps.hpp): a lowered function has no Break, Continue or Return,
// keeps its result (a device function's yield), verifies; the tracer lowers a device function
// that returns early; the verifier's rules for Return of a value.
#include <doctest/doctest.h>

#include <string>

#include "kjit/ir/lower_jumps.hpp"
#include "kjit/ir/verifier.hpp"
#include "kjit/kernel.hpp"
#include "kjit/kjit.hpp"

namespace lowering {
using namespace kjit::dsl;
KJIT_MODULE(ir_lower_jumps)
inline const auto first_negative_break = func("first_negative_break", [](Array<float> a, Int n) {
  Var<Int> r = -1;
  For(0, n, [&](Int i) { If(a[i] < 0.0f, [&] { r = i; Break(); }); });
  return Int(r);
});
inline const auto first_negative_return = func("first_negative_return", [](Array<float> a, Int n) {
  For(0, n, [&](Int i) { If(a[i] < 0.0f, [&] { Return(i); }); });
  return Int(-1);
});
KJIT_KERNEL(both, (Array<float> a, Int n, Array<int> out)) {
  out[tid()] = first_negative_break(a, n) + first_negative_return(a, n);
}
}  // namespace lowering

using namespace kjit::ir;

namespace {
int count_jumps(const Block& b) {
  int n = 0;
  for_each_stmt(b, [&](const Stmt& s) { n += s.op == Op::Break || s.op == Op::Continue || s.op == Op::Return; });
  return n;
}
const Function& callee(const std::string& name) {
  for (const auto& c : lowering::both.def().ir().callees)
    if (c->name == name) return *c;
  FAIL("no callee " << name);
  throw;
}
}  // namespace

TEST_CASE("a lowered device function keeps its result and has no jumps") {
  const Function& traced = callee("first_negative_break");
  CHECK(count_jumps(traced.body) == 1);  // the tracer leaves a Break to codegen's pass list
  Function lowered = lower_jumps(traced);
  CHECK(count_jumps(lowered.body) == 0);
  CHECK(lowered.result_type() == Type::scalar_of(Scalar::I32));
  CHECK(lowered.body.yield == traced.body.yield);
  CHECK(check(lowered).empty());
}

TEST_CASE("the tracer lowers a device function that returns early: its result is a variable read at its end") {
  const Function& fn = callee("first_negative_return");
  CHECK(count_jumps(fn.body) == 0);
  CHECK(fn.result_type() == Type::scalar_of(Scalar::I32));
  CHECK(fn.body.stmts.back().op == Op::LoadVar);
  CHECK(fn.body.stmts.back().result == fn.body.yield);
  CHECK(check(fn).empty());
  // Lowering again changes nothing that matters: still no jumps, the same result.
  Function again = lower_jumps(fn);
  CHECK(again.body.yield == fn.body.yield);
  CHECK(check(again).empty());
}

TEST_CASE("the verifier: a Return of a value only from a device function, of its result type") {
  const SourceLoc loc{"bad.hpp", 7};
  auto stmt = [&](Function& fn, Op op, Type t, std::vector<ValueId> args, uint64_t bits = 0) {
    Stmt s;
    s.op = op;
    s.type = t;
    s.args = std::move(args);
    s.bits = bits;
    s.loc = loc;
    if (!t.is_void()) s.result = fn.new_value(t);
    fn.body.stmts.push_back(s);
    return s.result;
  };
  const Type f32 = Type::scalar_of(Scalar::F32), i32 = Type::scalar_of(Scalar::I32);
  Function kernel;
  kernel.name = "k";
  ValueId one = stmt(kernel, Op::Const, f32, {});
  stmt(kernel, Op::Return, Type::void_type(), {one});
  std::string all;
  for (const std::string& p : check(kernel)) all += p + "\n";
  CHECK(all.find("returns a value from a function without one") != std::string::npos);

  Function fn;
  fn.name = "f";
  fn.is_function = true;
  ValueId x = stmt(fn, Op::Const, f32, {});
  ValueId n = stmt(fn, Op::Const, i32, {});
  stmt(fn, Op::Return, Type::void_type(), {n});  // an int32 from a float32 function
  stmt(fn, Op::Return, Type::void_type(), {});
  fn.body.yield = x;
  all.clear();
  for (const std::string& p : check(fn)) all += p + "\n";
  INFO(all);
  size_t first = all.find("must return one value of the function's result type");
  CHECK(first != std::string::npos);
  CHECK(all.find("must return one value of the function's result type", first + 1) != std::string::npos);
}
