// NVRTC compiles of generated modules for GPU architectures, run in the test suite without a
// GPU (NVRTC needs none).
#pragma once

#include <string>
#include <vector>

#include "kjit/kernel.hpp"

namespace kjit::test {

/// Compiles `source` with NVRTC for `arch` (e.g. "sm_90") in fast-compile mode; returns ""
/// on success, else the compiler log.
std::string nvrtc_compile(const std::string& source, const std::string& arch, double* seconds = nullptr);

/// The generated text (adjoints included) of the module holding `kernels`.
std::string module_text(const std::string& name, const std::vector<const KernelDef*>& kernels, bool with_adjoint = true);

}  // namespace kjit::test
