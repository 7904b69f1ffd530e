// Entry point wrappers around kernel body functions.
#include "entry_points.hpp"

#include <cctype>

namespace kjit::codegen {

std::string entry_name(const std::string& kernel_name, EntryKind kind) {
  std::string out = "kjit_";
  for (char c : kernel_name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out + (kind == EntryKind::Forward ? "_fwd" : "_adj");
}

std::vector<EntryParam> entry_params(const ir::Function& fn, const Names& names, EntryKind kind) {
  std::vector<EntryParam> out;
  for (size_t i = 0; i < fn.params.size(); ++i) out.push_back({fn.params[i].type.cpp(), names.param(i)});
  if (kind == EntryKind::Adjoint)
    for (size_t i = 0; i < fn.params.size(); ++i)
      out.push_back({fn.params[i].type.cpp(), names.adj_param(i)});
  return out;
}

namespace {
bool by_reference(const std::string& type) {
  // Arrays and aggregates pass by reference into the inlined body; scalars by value.
  return type.rfind("kj::", 0) == 0;
}
}  // namespace

void open_body_function(SourceWriter& w, const std::string& body, const std::vector<EntryParam>& params) {
  std::string sig = "static KJ_FUNC void " + body + "(const kj::launch_bounds_t& dim, kj_int64 kj_index";
  for (const EntryParam& p : params)
    sig += ", " + (by_reference(p.type) ? "const " + p.type + "& " : p.type + " ") + p.name;
  w.line(sig + ") {");
}

void emit_entry_points(SourceWriter& w, const std::string& entry, const std::string& body,
                       const std::vector<EntryParam>& params) {
  std::string call_args = "dim, kj_index";
  for (const EntryParam& p : params) call_args += ", " + p.name;

  w.line("#if KJ_CUDA");
  std::string sig = "extern \"C\" __global__ void " + entry + "(kj::launch_bounds_t dim";
  for (const EntryParam& p : params) sig += ", " + p.type + " " + p.name;
  w.line(sig + ") {");
  // Unrolling the grid-stride loop (NVVM's default, 4x) roughly doubles compile time for
  // no gain on memory-bound kernels: most threads run one or two iterations.
  w.line("#pragma unroll 1", 1);
  w.line("for (kj_int64 kj_index = (kj_int64)blockIdx.x * blockDim.x + threadIdx.x; kj_index < dim.size;", 1);
  w.line("     kj_index += (kj_int64)blockDim.x * gridDim.x)", 1);
  w.line(body + "(" + call_args + ");", 2);
  w.line("}");
  w.line("#else");
  w.line("KJ_EXPORT void " + entry + "(void** kj_args, kj_int64 kj_begin, kj_int64 kj_end) {");
  w.line("const kj::launch_bounds_t& dim = *(const kj::launch_bounds_t*)kj_args[0];", 1);
  for (size_t i = 0; i < params.size(); ++i)
    w.line("const " + params[i].type + "& " + params[i].name + " = *(const " + params[i].type +
               "*)kj_args[" + std::to_string(i + 1) + "];", 1);
  w.line("for (kj_int64 kj_index = kj_begin; kj_index < kj_end; ++kj_index)", 1);
  w.line(body + "(" + call_args + ");", 2);
  w.line("}");
  w.line("#endif");
}

}  // namespace kjit::codegen
