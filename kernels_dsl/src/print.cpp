// print() and printf(): the format of each value type, and the Print statement.
#include <string>
#include <vector>

#include "kjit/dsl/tracer.hpp"
#include "kjit/dsl/utility.hpp"
#include "kjit/ir/structs.hpp"

namespace kjit::dsl::detail {

namespace {
const char* conversion(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::Bool: case ir::Scalar::I8: case ir::Scalar::I16: case ir::Scalar::I32: return "%d";
    case ir::Scalar::U8: case ir::Scalar::U16: case ir::Scalar::U32: return "%u";
    case ir::Scalar::I64: return "%lld";
    case ir::Scalar::U64: return "%llu";
    default: return "%g";
  }
}

/// Appends the printf conversion of `v`'s components to `format` and their values to `args`
/// ("(%g, %g, %g)" for a vector).
void print_parts(const ir::Type& t, ir::ValueId v, std::string& format, std::vector<ir::ValueId>& args, Loc loc) {
  auto& tr = Tracer::get(loc);
  if (t.is_scalar()) {
    format += conversion(t.scalar);
    args.push_back(v);
    return;
  }
  if (t.shape == ir::Shape::Struct) {
    const ir::StructInfo& info = ir::struct_info(t.struct_id);
    format += "{";
    for (size_t k = 0; k < info.fields.size(); ++k) {
      format += (k ? ", " : "") + info.fields[k].name + ": ";
      PathStep step;
      step.kind = PathStep::Field;
      step.field = int(k);
      print_parts(info.fields[k].type, extract_step(v, step, loc), format, args, loc);
    }
    format += "}";
    return;
  }
  if (t.shape == ir::Shape::Matrix) {
    format += "[";
    for (int r = 0; r < t.rows; ++r) {
      format += r ? ", " : "";
      PathStep step{PathStep::Index, tr.constant_int(ir::Type::scalar_of(ir::Scalar::I32), r, loc)};
      print_parts(ir::Type::vector(t.cols, t.scalar), extract_step(v, step, loc), format, args, loc);
    }
    format += "]";
    return;
  }
  // vectors, quaternions, transforms: their lanes
  format += "(";
  for (int k = 0; k < t.lanes(); ++k) {
    format += k ? ", " : "";
    PathStep step{PathStep::Index, tr.constant_int(ir::Type::scalar_of(ir::Scalar::I32), k, loc)};
    print_parts(ir::Type::scalar_of(t.scalar), extract_step(v, step, loc), format, args, loc);
  }
  format += ")";
}

/// Emits a Print of `format` with `args`; `adjoint`: the reverse sweep prints the adjoints.
void emit(const std::string& format, std::vector<ir::ValueId> args, bool adjoint, Loc loc) {
  auto& t = Tracer::get(loc);
  int64_t s = t.intern_string(format);
  t.emit(ir::Op::Print, ir::Type::void_type(), std::move(args), s, loc, adjoint ? 1 : 0);
}
}  // namespace

void print_value(const ir::Type& t, ir::ValueId v, bool adjoint, Loc loc) {
  std::string format;
  std::vector<ir::ValueId> args;
  print_parts(t, v, format, args, loc);
  emit(format + "\n", std::move(args), adjoint, loc);
}

void emit_print(const char* format, bool newline, const ir::ValueId* args, size_t count, Loc loc) {
  emit(std::string(format) + (newline ? "\n" : ""), std::vector<ir::ValueId>(args, args + count), false, loc);
}

}  // namespace kjit::dsl::detail
