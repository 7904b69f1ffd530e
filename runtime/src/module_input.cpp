// The compiler's input for a module: traced kernels, identity, lazy text, options.
#include "module_input.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

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
  cg.adjoint_span = o.adjoint_span;
  cg.lane_functions = o.cpu_lanes;
  const char* reverse_ir = std::getenv("KJIT_REVERSE_IR");  // 0: the adjoint emitter writes every adjoint
  cg.reverse_transform = !(reverse_ir && std::strcmp(reverse_ir, "0") == 0);

  ModuleInput in;
  compiler::ModuleSource& s = in.source;
  s.name = def.name();
  s.identity = codegen::module_identity(def.name(), fns, cg);
  // A miss needs the text and the descriptions (built only when an entry is written; a hit
  // reads them back): one code generation, which plans the module once, serves both.
  auto generated = std::make_shared<std::optional<codegen::GeneratedModule>>();
  auto generate = [name = def.name(), fns, cg, generated](bool need_text) -> codegen::GeneratedModule& {
    if (!*generated || (need_text && (*generated)->text.empty())) *generated = codegen::generate_module(name, fns, cg);
    return **generated;
  };
  s.generate = [generate] { return std::move(generate(true).text); };  // the source keeps the text
  s.describe = [generate] { return generate(false).kernels; };
  s.entry_points = codegen::entry_points(fns, cg);
  // A hit's descriptions must be what codegen says of these kernels (cheap: no planning).
  s.expected_kernels = [fns, entries = s.entry_points] {
    nlohmann::json out = nlohmann::json::array();
    for (const ir::Function* fn : fns) {
      std::string adj = codegen::entry_name(fn->name, codegen::EntryKind::Adjoint);
      bool with_adjoint = std::find(entries.begin(), entries.end(), adj) != entries.end();
      out.push_back(codegen::describe_kernel(*fn, with_adjoint));
    }
    return out;
  };
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
