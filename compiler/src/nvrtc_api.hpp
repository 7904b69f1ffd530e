// kjit's own declarations of the NVRTC types it uses, and the table of NVRTC entry points
// (nvrtc_symbols.def) that nvrtc_loader.cpp fills from a libnvrtc opened at run time; kjit
// builds without <nvrtc.h>.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace kjit::compiler {

/// NVRTC's result codes, as nvrtc.h numbers them (stable across releases; only the ones
/// kjit tests for are named, the rest are reported through nvrtcGetErrorString).
enum nvrtcResult : int {
  NVRTC_SUCCESS = 0,
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_INVALID_OPTION = 5,
  NVRTC_ERROR_COMPILATION = 6,
};

/// NVRTC's opaque program handle (nvrtc.h: `typedef struct _nvrtcProgram* nvrtcProgram`).
struct NvrtcProgramHandle;
using nvrtcProgram = NvrtcProgramHandle*;

/// Every NVRTC entry point kjit calls. Members are named as nvrtc.h names the functions, so
/// that calls read `api.nvrtcCompileProgram(...)`.
struct NvrtcApi {
#define KJIT_NVRTC_SYMBOL(name, result, parameters) result(*name) parameters = nullptr;
#include "nvrtc_symbols.def"
#undef KJIT_NVRTC_SYMBOL
};

/// The NVRTC library, opened once per process on first use. Never throws: `reason` says why
/// NVRTC is unusable, and is empty when it is usable.
struct NvrtcLibrary {
  std::string reason;
  std::string path;  ///< what was dlopen-ed
  std::string origin;  ///< why it was searched there ("the CUDA toolkit", "the project venv's ...")
  std::string builtins_path;  ///< libnvrtc-builtins preloaded from the same folder, if any
  int major = 0, minor = 0;   ///< nvrtcVersion
  NvrtcApi api;
};

/// The NVRTC sonames kjit accepts, newest first: the one list of supported major releases.
const std::vector<std::string>& nvrtc_sonames();

/// Where to look for NVRTC, in order, given an environment lookup (std::getenv in kjit;
/// tests pass their own). Each entry is a folder, a file, or a bare soname for the dynamic
/// loader's own search path. Empty when KJIT_NVRTC_PATH=none. See docs/CUDA.md.
struct NvrtcCandidate {
  std::string path;  ///< a file path or a bare soname
  std::string origin;  ///< why it is searched ("KJIT_NVRTC_PATH", "VIRTUAL_ENV", ...)
};
std::vector<NvrtcCandidate> nvrtc_candidates(const std::function<const char*(const char*)>& getenv);

/// NVRTC, opened on first use (thread-safe, once per process). Never throws.
const NvrtcLibrary& nvrtc_library();

/// The entry points; throws a Driver error (what is missing, what was searched, how to get
/// NVRTC) when NVRTC could not be opened.
const NvrtcApi& nvrtc();

}  // namespace kjit::compiler
