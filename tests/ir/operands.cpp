// A statement's op-specific operand is read by name (Stmt::var, param, callee, ...), and a
// name the op does not have is an internal error naming both, not a silent reinterpretation.
#include <doctest/doctest.h>

#include "kjit/error.hpp"
#include "kjit/ir/ir.hpp"

using namespace kjit::ir;

namespace {
Stmt stmt(Op op, int64_t imm, uint64_t bits = 0) {
  Stmt s;
  s.op = op;
  s.imm = imm;
  s.bits = bits;
  return s;
}
}  // namespace

TEST_CASE("named operands read the op's own operand") {
  CHECK(stmt(Op::LoadVar, 3).var() == 3);
  CHECK(stmt(Op::StoreVar, 4).var() == 4);
  CHECK(stmt(Op::DeclVar, 5).var() == 5);
  CHECK(stmt(Op::Param, 2).param() == 2);
  CHECK(stmt(Op::ThreadId, -1).axis() == -1);
  CHECK(stmt(Op::LaunchDim, 1).axis() == 1);
  CHECK(stmt(Op::ArrayShape, 2).dimension() == 2);
  CHECK(stmt(Op::Extract, 6).field() == 6);
  CHECK(stmt(Op::Insert, 7).field() == 7);
  CHECK(stmt(Op::CallFunc, 1).callee() == 1);
  CHECK(stmt(Op::GradFunc, 2).callee() == 2);
  CHECK(stmt(Op::Print, 8).format() == 8);
  CHECK(stmt(Op::Print, 0, 1).prints_values());
  CHECK_FALSE(stmt(Op::Print, 0, 0).prints_values());
  CHECK(stmt(Op::TangentCall, int64_t(Builtin::Sin), 1).primal_args() == 1);
  CHECK(stmt(Op::TangentCall, int64_t(Builtin::Sin), 1).builtin() == Builtin::Sin);
}

TEST_CASE("a named operand the op does not have is an internal error naming both") {
  auto message = [](auto read) {
    try {
      read();
    } catch (const kjit::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message([] { (void)stmt(Op::Call, 0).var(); }).find("the variable of a 'call' statement") != std::string::npos);
  CHECK(message([] { (void)stmt(Op::LoadVar, 0).param(); }).find("the parameter index of a 'load' statement") !=
        std::string::npos);
  CHECK(message([] { (void)stmt(Op::Param, 0).callee(); }).find("the callee of a 'param' statement") != std::string::npos);
  CHECK(message([] { (void)stmt(Op::Call, 0).prints_values(); }).find("the print kind of a 'call' statement") !=
        std::string::npos);
}
