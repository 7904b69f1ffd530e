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
  auto param = [&](size_t i, std::string name) {
    const ir::Type& t = fn.params[i].type;
    return EntryParam{t.cpp(), std::move(name), t.is_array() ? t.element().cpp() : ""};
  };
  std::vector<EntryParam> out;
  for (size_t i = 0; i < fn.params.size(); ++i) out.push_back(param(i, names.param(i)));
  if (kind == EntryKind::Adjoint)
    for (size_t i = 0; i < fn.params.size(); ++i) out.push_back(param(i, names.adj_param(i)));
  return out;
}

namespace {
bool by_reference(const std::string& type) {
  // Arrays and aggregates pass by reference into the inlined body; scalars by value.
  return type.rfind("kj::", 0) == 0;
}
}  // namespace

void open_body_function(SourceWriter& w, const std::string& body, const std::vector<EntryParam>& params) {
  std::string sig = "template <bool KJ_DENSE> static KJ_FUNC void " + body +
                    "(const kj::launch_bounds_t& dim, kj_int64 kj_index";
  for (const EntryParam& p : params) {
    std::string type = p.element.empty() ? p.type : "kj::array_of<KJ_DENSE, " + p.element + ">";
    sig += ", " + (by_reference(type) ? "const " + type + "& " : type + " ") + p.name;
  }
  w.line(sig + ") {");
}

void emit_entry_points(SourceWriter& w, const std::string& entry, const std::string& body,
                       const std::vector<EntryParam>& params, const std::string& lanes, const std::string& tail,
                       const std::string& block, bool fence) {
  auto args = [&](const std::string& index, bool dense) {
    std::string out = "(dim, " + index;
    for (const EntryParam& p : params) out += std::string(", ") + (dense && !p.element.empty() ? "kj_dense_" : "") + p.name;
    return out + ");";
  };
  auto call = [&](const std::string& index, bool dense) {
    return body + "<" + (dense ? "true" : "false") + ">" + args(index, dense);
  };

  w.line("#if KJ_CUDA");
  std::string sig = "extern \"C\" __global__ void " + entry + "(kj::launch_bounds_t dim";
  for (const EntryParam& p : params) sig += ", " + p.type + " " + p.name;
  w.line(sig + ") {");
  // Unrolling the grid-stride loop (NVVM's default, 4x) roughly doubles compile time for
  // no gain on memory-bound kernels: most threads run one or two iterations.
  w.line("#pragma unroll 1", 1);
  // A 32-bit index, as on the host: launches have at most 2^31-1 threads (tid() is int32) and
  // the runtime's grid at most the device's resident threads, so index + stride stays below
  // 2^32. The 64-bit loop took 12 of saxpy's 53 SASS instructions (docs/BENCHMARKS.md).
  w.line("for (kj_uint32 kj_index = blockIdx.x * blockDim.x + threadIdx.x; kj_index < (kj_uint32)dim.size;", 1);
  w.line("     kj_index += blockDim.x * gridDim.x)", 1);
  w.line(call("kj_index", false), 2);
  w.line("}");
  w.line("#else");
  w.line("KJ_EXPORT void " + entry + "(void** kj_args, kj_int64 kj_begin, kj_int64 kj_end) {");
  // Copies, not references into kj_args: a store through an array cannot change them, so
  // the compiler keeps them in registers and hoists them out of the loop.
  w.line("const kj::launch_bounds_t dim = *(const kj::launch_bounds_t*)kj_args[0];", 1);
  std::string dense_test;
  for (size_t i = 0; i < params.size(); ++i) {
    const EntryParam& p = params[i];
    w.line("const " + p.type + " " + p.name + " = *(const " + p.type + "*)kj_args[" + std::to_string(i + 1) + "];", 1);
    if (!p.element.empty()) dense_test += (dense_test.empty() ? "" : " && ") + std::string("kj::is_dense(") + p.name + ")";
  }
  // The index is int32 as tid() is (the runtime refuses launches over 2^31-1 threads): a
  // 64-bit index truncated to int32 in the body is not an affine access to GCC, an int32
  // loop variable is, and that is what lets the dense loop vectorize.
  const std::string loop = "KJ_THREADS_INDEPENDENT for (kj_int32 kj_i = (kj_int32)kj_begin; kj_i < (kj_int32)kj_end; ++kj_i)";
  if (!dense_test.empty()) {
    w.line("if (" + dense_test + ") {", 1);
    for (const EntryParam& p : params)
      if (!p.element.empty())
        w.line("const kj::dense_array_t<" + p.element + "> kj_dense_" + p.name + "{" + p.name + "};", 2);
    if (lanes.empty()) {
      w.line(loop, 2);
      w.line(call("kj_i", true), 3);
    } else {
      w.line("kj_int32 kj_i = (kj_int32)kj_begin;", 2);
      w.line("for (; kj_i + " + block + " <= (kj_int32)kj_end; kj_i += " + block + ")", 2);
      w.line(lanes + args("kj_i", true), 3);
      if (tail.empty()) {
        w.line("KJ_THREADS_INDEPENDENT for (; kj_i < (kj_int32)kj_end; ++kj_i)", 2);
        w.line(call("kj_i", false), 3);
      } else {
        w.line(tail + args("kj_i, (kj_int32)kj_end", true), 2);
      }
      if (fence) w.line("kj::stream_fence();", 2);
    }
    w.line("return;", 2);
    w.line("}", 1);
  }
  w.line(loop, 1);
  w.line(call("kj_i", false), 2);
  w.line("}");
  w.line("#endif");
}

}  // namespace kjit::codegen
