// IR types: scalar facts from scalar_types.def, names and C++ spellings of composite types.
#include "kjit/ir/type.hpp"

#include "kjit/error.hpp"
#include "kjit/ir/structs.hpp"

namespace kjit::ir {

namespace {
struct ScalarFacts {
  const char* name;
  const char* short_name;
  const char* cpp;
  int bytes;
  bool is_float;
  bool is_signed;
};
constexpr ScalarFacts kScalars[] = {
#define X(E, name, short_name, cpp, bytes, is_float, is_signed) \
  {name, short_name, cpp, bytes, is_float, is_signed},
#include "kjit/ir/scalar_types.def"
#undef X
};
const ScalarFacts& facts(Scalar s) { return kScalars[int(s)]; }
}  // namespace

const char* scalar_name(Scalar s) { return facts(s).name; }
const char* scalar_short_name(Scalar s) { return facts(s).short_name; }
const char* scalar_cpp(Scalar s) { return facts(s).cpp; }
int scalar_bytes(Scalar s) { return facts(s).bytes; }
bool scalar_is_float(Scalar s) { return facts(s).is_float; }
bool scalar_is_signed(Scalar s) { return facts(s).is_signed; }

int Type::lanes() const {
  if (ndim > 0) return 0;
  switch (shape) {
    case Shape::Void: case Shape::Struct: return 0;
    case Shape::Scalar: return 1;
    case Shape::Vector: return rows;
    case Shape::Matrix: return rows * cols;
    case Shape::Quat: return 4;
    case Shape::Transform: return 7;
  }
  return 0;
}

bool Type::is_differentiable() const {
  if (shape == Shape::Void) return false;
  if (shape == Shape::Struct) {
    for (const StructField& f : struct_info(struct_id).fields)
      if (f.differentiable()) return true;
    return false;
  }
  return scalar_is_float(scalar);
}

Type adjoint_sum_type(const Type& t) {
  Type s = t.element();
  if (s.shape != Shape::Struct && (s.scalar == Scalar::F16 || s.scalar == Scalar::BF16)) s.scalar = Scalar::F32;
  return s;
}

int Type::element_bytes() const {
  Type e = element();
  if (e.shape == Shape::Struct) return struct_info(struct_id).size;
  return e.lanes() * scalar_bytes(scalar);
}

std::string Type::str() const {
  std::string base;
  const std::string s = scalar_short_name(scalar);
  switch (shape) {
    case Shape::Void: base = "void"; break;
    case Shape::Scalar: base = scalar_name(scalar); break;
    case Shape::Vector: base = "vec" + std::to_string(rows) + s; break;
    case Shape::Matrix: base = "mat" + std::to_string(rows) + std::to_string(cols) + s; break;
    case Shape::Quat: base = "quat" + s; break;
    case Shape::Transform: base = "transform" + s; break;
    case Shape::Struct: base = struct_info(struct_id).name; break;
  }
  if (ndim == 0) return base;
  return "array" + std::to_string(ndim) + "d<" + base + ">";
}

std::string Type::cpp() const {
  std::string base;
  const std::string s = scalar_cpp(scalar);
  switch (shape) {
    case Shape::Void: base = "void"; break;
    case Shape::Scalar: base = s; break;
    case Shape::Vector: base = "kj::vec_t<" + std::to_string(rows) + ", " + s + ">"; break;
    case Shape::Matrix:
      base = "kj::mat_t<" + std::to_string(rows) + ", " + std::to_string(cols) + ", " + s + ">";
      break;
    case Shape::Quat: base = "kj::quat_t<" + s + ">"; break;
    case Shape::Transform: base = "kj::transform_t<" + s + ">"; break;
    case Shape::Struct: base = struct_info(struct_id).cpp_name; break;
  }
  if (ndim == 0) return base;
  return "kj::array_t<" + base + ">";
}

}  // namespace kjit::ir
