// The verifier accepts traced kernels and rejects each kind of malformed IR with a message.
#include <doctest/doctest.h>
#include <string>

#include "kjit/ir/verifier.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "springs.hpp"

using namespace kjit;
using namespace kjit::ir;

namespace {
const Type kF = Type::scalar_of(Scalar::F32);
const Type kI = Type::scalar_of(Scalar::I32);
const Type kB = Type::scalar_of(Scalar::Bool);

/// A statement producing a value of `t` in `fn`.
Stmt make(Function& fn, Op op, Type t, std::vector<ValueId> args = {}, int64_t imm = 0) {
  Stmt s;
  s.op = op;
  s.type = t;
  s.args = std::move(args);
  s.imm = imm;
  s.loc = SourceLoc{"bad.hpp", 7};
  if (!t.is_void()) s.result = fn.new_value(t);
  if (op == Op::If || op == Op::While) s.regions.resize(2);
  if (op == Op::For) s.regions.resize(1);
  return s;
}

/// A function with one array parameter `x` (array1d<float32>) whose param stmt defines %0.
Function base() {
  Function fn;
  fn.name = "bad";
  fn.params.push_back(Param{"x", Type::array(kF, 1)});
  fn.body.stmts.push_back(make(fn, Op::Param, Type::array(kF, 1), {}, 0));
  return fn;
}

std::string problems(const Function& fn) {
  std::string all;
  for (const std::string& p : check(fn)) all += p + "\n";
  return all;
}
}  // namespace

TEST_CASE("traced kernels verify") { CHECK(check(demo::springs.def().ir()).empty()); }

TEST_CASE("a value used outside the region that defines it") {
  Function fn = base();
  Stmt c = make(fn, Op::Const, kB);
  ValueId cond = c.result;
  fn.body.stmts.push_back(c);
  Stmt iff = make(fn, Op::If, Type::void_type(), {cond});
  Stmt inner = make(fn, Op::Const, kF);
  ValueId hidden = inner.result;
  iff.regions[0].stmts.push_back(inner);
  fn.body.stmts.push_back(iff);
  fn.body.stmts.push_back(make(fn, Op::Call, kF, {hidden, hidden}, int64_t(Builtin::Add)));
  std::string p = problems(fn);
  CHECK(p.find("outside the region that defines it") != std::string::npos);
  CHECK(p.find("bad.hpp:7") != std::string::npos);
}

TEST_CASE("operand types that the builtin's rule rejects") {
  Function fn = base();
  Stmt a = make(fn, Op::Const, kF), b = make(fn, Op::Const, kI);
  ValueId va = a.result, vb = b.result;
  fn.body.stmts.push_back(a);
  fn.body.stmts.push_back(b);
  fn.body.stmts.push_back(make(fn, Op::Call, kF, {va, vb}, int64_t(Builtin::Add)));
  CHECK(problems(fn).find("add expects two numeric values of the same type, got float32, int32") != std::string::npos);
}

TEST_CASE("a result typed differently from what the rule gives") {
  Function fn = base();
  Stmt a = make(fn, Op::Const, kF);
  ValueId va = a.result;
  fn.body.stmts.push_back(a);
  fn.body.stmts.push_back(make(fn, Op::Call, kI, {va, va}, int64_t(Builtin::Add)));
  CHECK(problems(fn).find("the rule gives float32") != std::string::npos);
}

TEST_CASE("Break outside a loop, a non-bool condition, a malformed For") {
  Function fn = base();
  fn.body.stmts.push_back(make(fn, Op::Break, Type::void_type()));
  Stmt f = make(fn, Op::Const, kF);
  ValueId vf = f.result;
  fn.body.stmts.push_back(f);
  fn.body.stmts.push_back(make(fn, Op::If, Type::void_type(), {vf}));
  fn.body.stmts.push_back(make(fn, Op::For, Type::void_type(), {vf, vf, vf}));
  std::string p = problems(fn);
  CHECK(p.find("break at bad.hpp:7: outside a loop") != std::string::npos);
  CHECK(p.find("condition is not a bool") != std::string::npos);
  CHECK(p.find("bounds and step must be int32") != std::string::npos);
  CHECK(p.find("needs one body region with the induction value") != std::string::npos);
}

TEST_CASE("array accesses with the wrong index count or element type") {
  Function fn = base();
  Stmt i = make(fn, Op::Const, kI);
  ValueId vi = i.result;
  fn.body.stmts.push_back(i);
  fn.body.stmts.push_back(make(fn, Op::ArrayLoad, kF, {0, vi, vi}));
  fn.body.stmts.push_back(make(fn, Op::ArrayStore, Type::void_type(), {0, vi, vi}));
  std::string p = problems(fn);
  CHECK(p.find("a 1-D array indexed with 2 indices") != std::string::npos);
  CHECK(p.find("value of type int32 for an array of float32") != std::string::npos);
}

TEST_CASE("variables used outside their block, values defined twice, bad parameters") {
  Function fn = base();
  fn.vars.push_back(LocalVar{kF, {}});
  Stmt iff = make(fn, Op::If, Type::void_type(), {});
  Stmt decl = make(fn, Op::DeclVar, Type::void_type(), {}, 0);
  iff.regions[0].stmts.push_back(decl);
  Stmt c = make(fn, Op::Const, kB);
  iff.args = {c.result};
  fn.body.stmts.push_back(c);
  fn.body.stmts.push_back(iff);
  fn.body.stmts.push_back(make(fn, Op::LoadVar, kF, {}, 0));
  Stmt twice = make(fn, Op::Const, kF);
  fn.body.stmts.push_back(twice);
  fn.body.stmts.push_back(twice);
  fn.body.stmts.push_back(make(fn, Op::Param, kF, {}, 5));
  std::string p = problems(fn);
  CHECK(p.find("is used outside the block declaring it") != std::string::npos);
  CHECK(p.find("defined twice") != std::string::npos);
  CHECK(p.find("no such parameter") != std::string::npos);
}

TEST_CASE("an adjoint hands a value parameter's adjoint back: a kernel's widened, a function's as it is") {
  // A kernel's entry point sums a half's adjoint over the launch in float; a device function's
  // adjoint hands its caller a half (the reverse transform's AccumParam, ops.def).
  const Type half = Type::scalar_of(Scalar::F16);
  for (bool function : {false, true}) {
    INFO("function = " << function);
    Function fn;
    fn.name = "adj";
    fn.is_function = function;
    fn.params.push_back(Param{"h", half});
    Stmt h = make(fn, Op::Param, half, {}, 0);
    Stmt wide = make(fn, Op::Cast, kF, {h.result});
    fn.body.stmts.push_back(h);
    fn.body.stmts.push_back(wide);
    fn.body.stmts.push_back(make(fn, Op::AccumParam, Type::void_type(), {function ? h.result : wide.result}, 0));
    CHECK(problems(fn).empty());
    fn.body.stmts.back().args = {function ? wide.result : h.result};
    CHECK(problems(fn).find(function ? "adds a float32 where the parameter's adjoint sum is a float16"
                                     : "adds a float16 where the parameter's adjoint sum is a float32") != std::string::npos);
  }
}

TEST_CASE("a gradient view: of a differentiable array, typed as it") {
  // The reverse transform's adjoint array of an array a struct field holds (ops.def GradView).
  Function fn = base();
  Stmt i = make(fn, Op::Const, kI);
  Stmt x = make(fn, Op::ArrayLoad, kF, {0, i.result});
  Stmt g = make(fn, Op::GradView, Type::array(kF, 1), {0});
  for (const Stmt& s : {i, x, g}) fn.body.stmts.push_back(s);
  fn.body.stmts.push_back(make(fn, Op::AdjArrayAdd, Type::void_type(), {g.result, i.result, x.result}));
  CHECK(problems(fn).empty());
  const Type ints = Type::array(kI, 1);
  fn.params.push_back(Param{"n", ints});
  Stmt n = make(fn, Op::Param, ints, {}, 1);
  fn.body.stmts.push_back(n);
  fn.body.stmts.push_back(make(fn, Op::GradView, Type::array(kF, 2), {0}));
  fn.body.stmts.push_back(make(fn, Op::GradView, kF, {x.result}));
  fn.body.stmts.push_back(make(fn, Op::GradView, ints, {n.result}));
  fn.body.stmts.push_back(make(fn, Op::GradView, Type::array(kF, 1), {}));
  const std::string p = problems(fn);
  CHECK(p.find("grad_view at bad.hpp:7: an adjoint array typed unlike its array") != std::string::npos);
  size_t not_array = 0;
  for (size_t at = 0; (at = p.find("the gradient buffer of what is no differentiable array", at)) != std::string::npos; ++at)
    ++not_array;
  CHECK(not_array == 2);  // a float's, an int array's
  CHECK(p.find("grad_view at bad.hpp:7: expects 1 operands, has 0") != std::string::npos);
}

TEST_CASE("verify() throws an internal error listing the problems and the listing") {
  Function fn = base();
  fn.body.stmts.push_back(make(fn, Op::Continue, Type::void_type()));
  try {
    verify(fn);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Internal);
    CHECK(std::string(e.what()).find("malformed IR for kernel 'bad'") != std::string::npos);
    CHECK(std::string(e.what()).find("continue at bad.hpp:7: outside a loop") != std::string::npos);
  }
}
