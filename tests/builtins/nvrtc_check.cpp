// NVRTC compiles of generated module text through the compiler layer's NVRTC driver.
#include "nvrtc_check.hpp"

#include "kjit/codegen/codegen.hpp"
#include "nvrtc_compiler.hpp"

namespace kjit::test {

std::string nvrtc_compile(const std::string& source, const std::string& arch, double* seconds) {
  // The driver's own flags, in NVRTC's fastest compile mode: these compiles prove that the
  // code compiles; optimising it would only cost test time.
  compiler::CompileOptions o;
  o.extra = {"-Ofc=max"};
  compiler::CompileOutput out = compiler::nvrtc_compile(source, "module.cu", compiler::Target::parse(arch), o);
  if (seconds) *seconds = out.ms / 1000.0;
  return out.ok ? "" : out.log.empty() ? std::string("NVRTC failed without a log") : out.log;
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
