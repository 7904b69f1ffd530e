// IR basics: op names, source locations and literal accessors.
#include "kjit/ir/ir.hpp"

#include <cstring>
#include <initializer_list>

#include "kjit/error.hpp"

namespace kjit::ir {

namespace {
constexpr OpInfo kOps[] = {
#define KJIT_IR_OP(E, name, regions, kind, adjoint) {name, regions, OpKind::kind, OpAdjoint::adjoint},
#include "kjit/ir/ops.def"
#undef KJIT_IR_OP
};
}  // namespace

const OpInfo& op_info(Op op) { return kOps[size_t(op)]; }

const char* op_name(Op op) { return op_info(op).name; }

bool is_effect_free(const Stmt& s) {
  switch (op_info(s.op).kind) {
    case OpKind::Input: case OpKind::Value: case OpKind::Read: return true;
    case OpKind::Call: return !s.type.is_void();  // expect_near, breakpoint: kept for their effects
    case OpKind::Effect: case OpKind::Control: case OpKind::Jump: return false;
  }
  return false;
}

bool is_pure(const Stmt& s) {
  switch (op_info(s.op).kind) {
    case OpKind::Input: case OpKind::Value: return true;
    case OpKind::Call:
      return !s.type.is_void() && builtin_info(s.builtin()).category != BuiltinCategory::Random;
    case OpKind::Read: case OpKind::Effect: case OpKind::Control: case OpKind::Jump: return false;
  }
  return false;
}

std::string SourceLoc::str() const {
  if (!known()) return "<unknown>";
  return std::string(file) + ":" + std::to_string(line);
}

std::string SourceLoc::short_str() const {
  if (!known()) return "<unknown>";
  const char* slash = std::strrchr(file, '/');
  return std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
}

double Stmt::const_float() const {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

int64_t Stmt::const_int() const { return int64_t(bits); }

namespace {
/// The named accessors check the op: an operand read under another op's meaning is a bug.
void expect_op(const Stmt& s, std::initializer_list<Op> ops, const char* what) {
  for (Op op : ops)
    if (s.op == op) return;
  KJIT_CHECK(false, std::string("the ") + what + " of a '" + op_name(s.op) + "' statement");
}
}  // namespace

int64_t Stmt::var() const {
  expect_op(*this, {Op::DeclVar, Op::LoadVar, Op::StoreVar, Op::AccumVar, Op::AdjArrayRead}, "variable");
  return imm;
}
size_t Stmt::param() const {
  expect_op(*this, {Op::Param, Op::AccumParam}, "parameter index");
  return size_t(imm);
}
bool Stmt::subtracts() const {
  expect_op(*this, {Op::AccumVar, Op::AdjArrayRead}, "subtraction flag");
  return bits == 1;
}
Op Stmt::adjoint_of() const {
  expect_op(*this, {Op::CallAdjoint}, "forward kind");
  return Op(imm);
}
Builtin Stmt::adjoint_builtin() const {
  expect_op(*this, {Op::CallAdjoint}, "builtin");
  return Builtin(bits);
}
int64_t Stmt::adjoint_field() const {
  expect_op(*this, {Op::CallAdjoint}, "struct field");
  return int64_t(bits);
}
size_t Stmt::adjoint_format() const {
  expect_op(*this, {Op::CallAdjoint}, "format");
  return size_t(bits);
}
bool Stmt::own_element() const {
  expect_op(*this, {Op::AdjArrayAdd}, "own-element flag");
  return bits == 1;
}
int64_t Stmt::loop() const {
  expect_op(*this, {Op::Checkpoint, Op::ReverseSegments}, "adjoint loop");
  return imm;
}
CheckpointPart Stmt::checkpoint_part() const {
  expect_op(*this, {Op::Checkpoint}, "checkpoint part");
  return CheckpointPart(bits);
}
int64_t Stmt::axis() const {
  expect_op(*this, {Op::ThreadId, Op::LaunchDim}, "launch axis");
  return imm;
}
int64_t Stmt::dimension() const {
  expect_op(*this, {Op::ArrayShape}, "array dimension");
  return imm;
}
int64_t Stmt::field() const {
  expect_op(*this, {Op::Extract, Op::Insert}, "struct field");
  return imm;
}
size_t Stmt::callee() const {
  expect_op(*this, {Op::CallFunc, Op::GradFunc}, "callee");
  return size_t(imm);
}
size_t Stmt::format() const {
  expect_op(*this, {Op::Print}, "format");
  return size_t(imm);
}
bool Stmt::prints_values() const {
  expect_op(*this, {Op::Print}, "print kind");
  return bits == 1;
}
size_t Stmt::primal_args() const {
  expect_op(*this, {Op::TangentCall}, "primal argument count");
  return size_t(bits);
}

bool takes_gradient(const Function& fn) {
  bool found = false;
  for_each_stmt(fn.body, [&](const Stmt& s) {
    found = found || s.op == Op::GradFunc || (s.op == Op::CallFunc && takes_gradient(*fn.callees.at(s.callee())));
  });
  return found;
}

}  // namespace kjit::ir
