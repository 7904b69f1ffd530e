// INTERIM, until the compiler layer lands on main: the two kjit::compiler::Target functions the
// CUDA backend calls, so that the branch links. Delete this file when merging the compiler.
#include <nvrtc.h>

#include "kjit/compiler/target.hpp"

namespace kjit::compiler {

std::string Target::name() const {
  switch (kind) {
    case TargetKind::Cubin: return "sm_" + std::to_string(arch);
    case TargetKind::Ptx: return "compute_" + std::to_string(arch);
    case TargetKind::Host: break;
  }
  return "cpu";
}

const std::vector<int>& nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    int n = 0;
    std::vector<int> out;
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
      out.resize(size_t(n));
      if (nvrtcGetSupportedArchs(out.data()) != NVRTC_SUCCESS) out.clear();
    }
    return out;
  }();
  return archs;
}

}  // namespace kjit::compiler
