// NVRTC compiles of generated module text.
#include "nvrtc_check.hpp"

#include <nvrtc.h>

#include <chrono>
#include <vector>

#include "kjit/codegen/codegen.hpp"

namespace kjit::test {

std::string nvrtc_compile(const std::string& source, const std::string& arch, double* seconds) {
  auto start = std::chrono::steady_clock::now();
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "module.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    return "nvrtcCreateProgram failed";
  const std::string arch_option = "--gpu-architecture=" + arch;
  // Fast-compile mode (NVRTC's -Ofc, which kjit's ModuleOptions::fast_compile selects): these
  // compiles prove that the code compiles; optimising it would only cost test time.
  std::vector<const char*> options{arch_option.c_str(), "--std=c++17", "-w", "--Ofast-compile=max"};
  nvrtcResult r = nvrtcCompileProgram(prog, int(options.size()), options.data());
  std::string log;
  size_t size = 0;
  nvrtcGetProgramLogSize(prog, &size);
  log.resize(size);
  if (size) nvrtcGetProgramLog(prog, &log[0]);
  nvrtcDestroyProgram(&prog);
  if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (r == NVRTC_SUCCESS) return "";
  return std::string(nvrtcGetErrorString(r)) + "\n" + log;
}

std::string module_text(const std::string& name, const std::vector<const KernelDef*>& kernels, bool with_adjoint) {
  std::vector<const ir::Function*> fns;
  for (const KernelDef* k : kernels) fns.push_back(&k->ir());
  codegen::CodegenOptions o;
  o.enable_adjoint = with_adjoint;
  o.line_directives = false;
  return codegen::generate_module(name, fns, o).text;
}

}  // namespace kjit::test
