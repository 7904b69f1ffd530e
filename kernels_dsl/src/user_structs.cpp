// Registration of KJIT_STRUCT types: their qualified name, fields and host layout.
#include "kjit/dsl/structs.hpp"
#include <cctype>
#include <string>

#include "kjit/error.hpp"
#include "kjit/ir/structs.hpp"

namespace kjit::dsl::detail {

uint16_t register_user_struct(const char* pretty, size_t size, size_t align, std::initializer_list<HostField> fields) {
  // "static const char* demo::Particle::kjit_where()" -> "demo::Particle"
  std::string s(pretty);
  size_t end = s.find("::kjit_where");
  size_t start = s.rfind("char* ", end);
  start = start == std::string::npos ? 0 : start + 6;
  ir::StructInfo info;
  info.name = s.substr(start, end - start);
  std::string id;
  for (char c : info.name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  info.cpp_name = "kj::" + id;
  for (const HostField& f : fields) info.fields.push_back(ir::StructField{f.name, f.type, int(f.offset)});
  ir::StructInfo c_layout = info;
  ir::layout_struct(c_layout);
  bool same = c_layout.size == int(size) && c_layout.align == int(align);
  for (size_t k = 0; same && k < info.fields.size(); ++k) same = c_layout.fields[k].offset == info.fields[k].offset;
  if (!same)
    throw Error(ErrorKind::User, "struct " + info.name + ": its host layout (size " + std::to_string(size) +
                                     ", alignment " + std::to_string(align) +
                                     ") is not the plain C layout kernels use; remove packing or alignment attributes");
  info.size = int(size);
  info.align = int(align);
  return ir::register_struct(std::move(info));
}

}  // namespace kjit::dsl::detail
