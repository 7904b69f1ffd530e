// kjit/compiler/target.hpp — what a module is compiled into: a GPU architecture or the host.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kjit::compiler {

/// The kind of artifact a target produces.
enum class TargetKind {
  Cubin,  ///< "sm_XX": native code for one GPU architecture (NVRTC)
  Ptx,    ///< "compute_XX": PTX that the driver JIT-compiles (NVRTC)
  Host,   ///< "cpu": a shared object built by the host C++ compiler, opened with dlopen
};

/// A compilation target such as `sm_90`, `compute_90` or `cpu`.
struct Target {
  TargetKind kind = TargetKind::Host;
  int arch = 0;  ///< compute capability times ten (90 for sm_90); 0 for the host

  /// Parses "sm_90", "compute_90" or "cpu". Throws a User error naming the text and the
  /// architectures the installed NVRTC supports when it is malformed or unsupported.
  static Target parse(std::string_view text);
  /// The `cpu` target.
  static Target host() { return Target{}; }
  /// Native code for compute capability `arch` (e.g. 90).
  static Target cubin(int arch) { return Target{TargetKind::Cubin, arch}; }
  /// PTX for compute capability `arch`.
  static Target ptx(int arch) { return Target{TargetKind::Ptx, arch}; }

  /// "sm_90", "compute_90" or "cpu".
  std::string name() const;
  bool is_gpu() const { return kind != TargetKind::Host; }
  bool operator==(const Target& o) const { return kind == o.kind && arch == o.arch; }
  bool operator!=(const Target& o) const { return !(*this == o); }
};

/// Architectures (compute capability × 10) NVRTC can compile for, ascending. NVRTC is opened
/// on first use (docs/CUDA.md); throws a Driver error saying how to get it when there is none.
const std::vector<int>& nvrtc_supported_archs();

/// NVRTC's release numbered as CUDA numbers its versions (13000 for 13.0), opening NVRTC on
/// first use; throws as nvrtc_supported_archs does. Its code needs a driver of that major
/// release or newer.
int nvrtc_cuda_version();

/// Which NVRTC kjit compiles GPU targets with, for tools to say so: where it was found and its
/// version, or why there is none (what was searched, how to get it). Opens NVRTC on first use;
/// never throws.
struct NvrtcInfo {
  bool available = false;
  std::string path;    ///< the library opened, e.g. .venv/.../nvidia/cu13/lib/libnvrtc.so.13
  std::string origin;  ///< where that is: "the CUDA toolkit", "the project venv's nvidia-cuda-nvrtc", ...
  int major = 0, minor = 0;
  std::string reason;  ///< when not available
};
NvrtcInfo nvrtc_info();

/// "NVRTC 13.0 (the CUDA toolkit: /usr/local/cuda/lib64/libnvrtc.so.13)", or "no NVRTC: <why>".
std::string describe(const NvrtcInfo& info);

}  // namespace kjit::compiler
