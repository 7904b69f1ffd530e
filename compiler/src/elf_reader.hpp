// A minimal, bounds-checked ELF64 reader: the symbols of a host shared object or a CUDA cubin
// (to check entry points) and the per-kernel resources a cubin records (registers, stack,
// static shared memory).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::compiler {

/// Whether `bytes` starts with the ELF magic.
bool is_elf(std::string_view bytes);

/// Names of the functions an ELF64 image defines with global or weak binding: from `.dynsym`
/// when `dynamic` (a shared object's exported symbols), else from `.symtab` (a cubin's
/// kernels). Returns nullopt and sets *error when the image is not a well-formed ELF64 file.
std::optional<std::set<std::string>> elf_defined_functions(std::string_view bytes, bool dynamic,
                                                           std::string* error);

/// The libraries a shared object names as DT_NEEDED, in order. Returns nullopt and sets
/// *error when the image is not a well-formed ELF64 file.
std::optional<std::vector<std::string>> elf_needed_libraries(std::string_view bytes, std::string* error);

/// Resources of one GPU kernel as the cubin records them.
struct KernelResources {
  int registers = -1;     ///< registers per thread (-1: not recorded)
  int64_t stack_bytes = -1;  ///< per-thread stack frame (local memory) in bytes (-1: not recorded)
  int64_t shared_bytes = 0;  ///< static shared memory per block in bytes
};

/// Per-kernel resources from a cubin's `.nv.info` attributes (EIATTR_REGCOUNT,
/// EIATTR_FRAME_SIZE) and `.nv.shared.<kernel>` sections, keyed by kernel name. Empty when
/// the image is malformed or records nothing.
std::map<std::string, KernelResources> cubin_resources(std::string_view bytes);

}  // namespace kjit::compiler
