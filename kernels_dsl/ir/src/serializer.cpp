// The stable IR encoding used for module keys.
#include "kjit/ir/serializer.hpp"

#include "kjit/ir/structs.hpp"

namespace kjit::ir {

namespace {

void type(std::string& out, const Type& t) {
  out += t.str();
  if (t.shape == Shape::Struct) {
    // Struct names are not enough: the layout is part of the identity.
    const StructInfo& s = struct_info(t.struct_id);
    out += "{";
    for (const StructField& f : s.fields) {
      out += f.name + ":";
      type(out, f.type);
      out += "@" + std::to_string(f.offset) + ";";
    }
    out += "}";
  }
}

void block(std::string& out, const Block& b) {
  out += "{";
  for (ValueId a : b.args) out += "a" + std::to_string(a) + " ";
  for (const Stmt& s : b.stmts) {
    out += op_name(s.op);
    out += " r" + std::to_string(s.result) + " ";
    type(out, s.type);
    out += " i" + std::to_string(s.imm) + " b" + std::to_string(s.bits);
    for (ValueId a : s.args) out += " " + std::to_string(a);
    out += " @" + s.loc.short_str();
    for (const Block& r : s.regions) block(out, r);
    out += ";";
  }
  if (b.yield != kNoValue) out += "y" + std::to_string(b.yield);
  out += "}";
}

}  // namespace

std::string serialize(const Function& fn) {
  std::string out = "kjit-ir/" + std::to_string(kSerialVersion) + " " + fn.name + " l" +
                    std::to_string(fn.launch_ndim) + (fn.is_function ? " func" : "") + " (";
  for (const Param& p : fn.params) {
    out += p.name + ":";
    type(out, p.type);
    out += ",";
  }
  out += ") vars(";
  for (const LocalVar& v : fn.vars) {
    type(out, v.type);
    out += ",";
  }
  out += ") strings(";
  for (const std::string& s : fn.strings) out += std::to_string(s.size()) + ":" + s;
  out += ")";
  block(out, fn.body);
  // Device functions are part of the caller's identity: their bodies, adjoints and replays.
  for (const auto& c : fn.callees) out += " callee[" + serialize(*c) + "]";
  if (fn.custom_adjoint) {
    out += " grad[" + serialize(*fn.custom_adjoint) + "] out(";
    for (int64_t v : fn.out_vars) out += std::to_string(v) + ",";
    out += ")";
  }
  if (fn.custom_replay) out += " replay[" + serialize(*fn.custom_replay) + "]";
  if (fn.custom_tangent) out += " jvp[" + serialize(*fn.custom_tangent) + "]";
  return out;
}

}  // namespace kjit::ir
