// The process-wide registry of user struct types.
#include "kjit/ir/structs.hpp"

#include <cctype>
#include <deque>
#include <mutex>

#include "kjit/error.hpp"
#include "kjit/ir/ir.hpp"

namespace kjit::ir {

namespace {
struct StructTable {
  std::mutex mutex;
  std::deque<StructInfo> infos;  // deque: references stay valid as it grows
};
StructTable& table() {
  static StructTable* t = new StructTable;  // never destroyed: kernels may outlive statics
  return *t;
}
bool same_layout(const StructInfo& a, const StructInfo& b) {
  if (a.fields.size() != b.fields.size() || a.size != b.size || a.cpp_name != b.cpp_name) return false;
  for (size_t i = 0; i < a.fields.size(); ++i)
    if (a.fields[i].name != b.fields[i].name || a.fields[i].type != b.fields[i].type ||
        a.fields[i].offset != b.fields[i].offset)
      return false;
  return true;
}
}  // namespace

const StructInfo& struct_info(uint16_t id) {
  StructTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  KJIT_CHECK(id >= 1 && id <= t.infos.size(), "unknown struct id " + std::to_string(id));
  return t.infos[id - 1];
}

int type_align(const Type& t) {
  if (t.is_array()) return 8;
  if (t.shape == Shape::Struct) return struct_info(t.struct_id).align;
  return scalar_bytes(t.scalar);
}

void layout_struct(StructInfo& info) {
  int offset = 0, align = 1;
  for (StructField& f : info.fields) {
    int a = type_align(f.type);
    offset = (offset + a - 1) / a * a;
    f.offset = offset;
    offset += f.type.is_array() ? kArrayFieldBytes : f.type.element_bytes();
    align = a > align ? a : align;
  }
  info.align = align;
  info.size = (offset + align - 1) / align * align;
}

uint16_t register_struct(StructInfo info) {
  StructTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (size_t i = 0; i < t.infos.size(); ++i) {
    if (t.infos[i].name != info.name) continue;
    if (!same_layout(t.infos[i], info))
      throw Error(ErrorKind::User, "struct '" + info.name +
                                       "' is registered twice with different layouts");
    return uint16_t(i + 1);
  }
  KJIT_CHECK(t.infos.size() < 65535, "too many struct types");
  t.infos.push_back(std::move(info));
  return uint16_t(t.infos.size());
}

bool carries_tangent(const Type& t) {
  if (t.is_array()) return carries_tangent(t.element());
  if (t.is_differentiable()) return true;
  if (!t.is_struct()) return false;
  for (const StructField& f : struct_info(t.struct_id).fields)
    if ((f.type.is_array() || f.type.is_struct()) && carries_tangent(f.type)) return true;
  return false;
}

Type results_struct(const Type* types, size_t count) {
  // One struct per list of result types, named after them: the same list in two functions
  // (or two modules) is one type, and the name says what it holds in generated code.
  StructInfo info;
  info.name = "results(";
  info.cpp_name = "kj::results";
  for (size_t k = 0; k < count; ++k) {
    const std::string t = types[k].str();
    info.name += (k ? ", " : "") + t;
    info.cpp_name += "_";
    for (char c : t) info.cpp_name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    info.fields.push_back(StructField{"r" + std::to_string(k), types[k], 0});
  }
  info.name += ")";
  layout_struct(info);
  return Type::structure(register_struct(std::move(info)));
}

Type gradient_type(const Function& f) {
  std::vector<Type> types;
  for (const Param& p : f.params) types.push_back(p.type);
  if (types.size() == 1) return types[0];
  return results_struct(types.data(), types.size());
}

}  // namespace kjit::ir
