// The fake driver's reading of module images: kernels, their parameter layouts and globals,
// from PTX text or from a cubin's ELF symbol table and .nv.info sections.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace kjit::fake_cuda {

/// One kernel parameter as the compiled kernel lays it out.
struct ParamInfo {
  size_t offset = 0;
  size_t size = 0;
};

/// One kernel of an image.
struct FunctionInfo {
  std::vector<ParamInfo> params;  ///< in declaration order
  int max_threads = 1024;         ///< .maxntid / EIATTR_MAX_THREADS, else the device limit
};

/// What an image holds.
struct ImageInfo {
  bool cubin = false;
  int arch = 0;  ///< PTX: the .target sm_XX; cubin: the ELF's SM version
  std::map<std::string, FunctionInfo> functions;
  std::map<std::string, size_t> globals;  ///< name -> bytes
};

/// Parses a cubin (ELF) or PTX image; false (with `error`) when it is neither.
bool parse_image(const void* data, ImageInfo& info, std::string& error);

}  // namespace kjit::fake_cuda
