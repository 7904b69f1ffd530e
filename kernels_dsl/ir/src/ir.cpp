// IR basics: op names, source locations and literal accessors.
#include "kjit/ir/ir.hpp"

#include <cstring>

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

}  // namespace kjit::ir
