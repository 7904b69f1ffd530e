// IR basics: op names, source locations and literal accessors.
#include "kjit/ir/ir.hpp"

#include <cstring>

#include "kjit/error.hpp"

namespace kjit::ir {

const char* op_name(Op op) {
  switch (op) {
#define KJIT_IR_OP(E, name) \
  case Op::E:               \
    return name;
#include "kjit/ir/ops.def"
#undef KJIT_IR_OP
  }
  return "?";
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
