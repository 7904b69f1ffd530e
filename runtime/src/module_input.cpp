// The compiler's input for a module: traced kernels, identity, lazy text, options.
#include "module_input.hpp"

#include <cstdlib>
#include <cstring>

#include "kjit/codegen/codegen.hpp"

namespace kjit::detail {

ModuleOptions with_environment(ModuleOptions o) {
  const char* bounds = std::getenv("KJIT_BOUNDS_CHECK");
  if (bounds && std::strcmp(bounds, "1") == 0) o.bounds_check = true;
  return o;
}

ModuleInput module_input(const ModuleDef& def, const ModuleOptions& given) {
  const ModuleOptions o = with_environment(given);
  std::vector<const ir::Function*> fns;
  for (const KernelDef* k : def.kernels()) fns.push_back(&k->ir());
  codegen::CodegenOptions cg;
  cg.enable_adjoint = o.enable_adjoint;
  cg.loop_checkpoints = o.loop_checkpoints;
  cg.bounds_check = o.bounds_check;

  ModuleInput in;
  compiler::ModuleSource& s = in.source;
  s.name = def.name();
  s.identity = codegen::module_identity(def.name(), fns, cg);
  s.generate = [name = def.name(), fns, cg] { return codegen::generate_module(name, fns, cg).text; };
  // Descriptions are built only when an entry is written; a cache hit reads them back.
  s.describe = [fns, cg] { return codegen::describe_module(fns, cg); };
  s.entry_points = codegen::entry_points(fns, cg);
  compiler::CompileOptions& c = in.compile;
  c.fast_math = o.fast_math;
  c.line_info = o.line_info;
  c.debug = o.debug;
  c.max_registers = o.max_registers;
  c.opt_level = o.opt_level;
  c.fast_compile = o.fast_compile;
  c.cxx_standard = o.cxx_standard;
  return in;
}

}  // namespace kjit::detail
