// `kjit list`: the modules and kernels of kernel libraries, their parameters with names and
// types, and whether each kernel has an adjoint.
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "commands.hpp"
#include "kernel_libraries.hpp"
#include "kjit/codegen/codegen.hpp"

namespace kjit::tool {

namespace {

namespace cl = llvm::cl;

cl::SubCommand sub("list", "List the modules and kernels of kernel libraries with their parameters");
cl::OptionCategory category("list options");
cl::list<std::string> libraries(cl::Positional, cl::desc("<kernel library>..."), cl::ZeroOrMore,
                                cl::sub(sub), cl::cat(category));
cl::opt<bool> json("json", cl::desc("Print one JSON object"), cl::sub(sub), cl::cat(category));

const char* const overview =
    "kjit list: the modules and kernels that kernel libraries register, each kernel's parameters\n"
    "(names and types), where it is defined, and whether it has an adjoint.\n\n"
    "  kjit list build/lib/libdemo_kernels.so\n"
    "  kjit list build/lib/libdemo_kernels.so --json\n";

/// One kernel as `list` reports it: traced to learn whether it has an adjoint.
nlohmann::ordered_json describe(const KernelDef& k, const ModuleOptions& options) {
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  for (const KernelParam& p : k.params()) params.push_back({{"name", p.name}, {"type", p.type.str()}});
  nlohmann::ordered_json j = {{"name", k.name()}, {"source", k.loc().str()}, {"params", std::move(params)}};
  try {
    codegen::CodegenOptions cg;
    cg.enable_adjoint = options.enable_adjoint;
    nlohmann::json d = codegen::describe_module({&k.ir()}, cg).at(0);
    j["adjoint"] = !d["adjoint"].is_null();
    if (d.contains("adjoint_error") && !d["adjoint_error"].is_null()) j["adjoint_error"] = d["adjoint_error"].get<std::string>();
  } catch (const std::exception& e) {
    j["adjoint"] = false;
    j["error"] = e.what();  // a tracing mistake: the kernel cannot be built at all
  }
  return j;
}

nlohmann::ordered_json describe(const ModuleDef& m, const KernelLibraries& libs) {
  ModuleOptions o = m.options();
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const KernelDef* k : libs.kernels)
    if (k->module() == m.name()) kernels.push_back(describe(*k, o));
  return {{"name", m.name()},
          {"adjoint", o.enable_adjoint},
          {"options",
           {{"enable_adjoint", o.enable_adjoint}, {"fast_math", o.fast_math}, {"line_info", o.line_info},
            {"debug", o.debug}, {"max_registers", o.max_registers}, {"opt_level", o.opt_level},
            {"fast_compile", o.fast_compile}, {"block_dim", o.block_dim},
            {"loop_checkpoints", o.loop_checkpoints}}},
          {"kernels", std::move(kernels)}};
}

void print_module(const nlohmann::ordered_json& m, llvm::raw_ostream& out) {
  out << "module " << m["name"].get<std::string>() << "  (" << m["kernels"].size()
      << (m["kernels"].size() == 1 ? " kernel" : " kernels") << ", adjoints "
      << (m["adjoint"].get<bool>() ? "on" : "off") << ")\n";
  for (const nlohmann::ordered_json& k : m["kernels"]) {
    std::string signature = k["name"].get<std::string>() + "(";
    for (size_t i = 0; i < k["params"].size(); ++i)
      signature += (i ? ", " : "") + k["params"][i]["name"].get<std::string>() + ": " +
                   k["params"][i]["type"].get<std::string>();
    signature += ")";
    out << "  " << signature << "\n      " << k["source"].get<std::string>();
    if (k.contains("error"))
      out << "  cannot be traced: " << k["error"].get<std::string>();
    else if (k["adjoint"].get<bool>())
      out << "  forward + adjoint";
    else if (k.contains("adjoint_error"))
      out << "  forward only: " << k["adjoint_error"].get<std::string>();
    else
      out << "  forward only";
    out << "\n";
  }
}

int run() {
  KernelLibraries libs = load_kernel_libraries(libraries);
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  for (const ModuleDef* m : libs.modules) modules.push_back(describe(*m, libs));
  if (json) {
    llvm::outs() << nlohmann::ordered_json{{"libraries", libs.paths}, {"modules", modules}}.dump(2) << "\n";
    return kExitOk;
  }
  llvm::outs() << join_names(libs.paths) << ": " << libs.modules.size()
               << (libs.modules.size() == 1 ? " module, " : " modules, ") << libs.kernels.size()
               << (libs.kernels.size() == 1 ? " kernel\n" : " kernels\n");
  for (const nlohmann::ordered_json& m : modules) {
    llvm::outs() << "\n";
    print_module(m, llvm::outs());
  }
  return kExitOk;
}

}  // namespace

const Command& list_command() {
  static const Command command{&sub, &category, overview, run};
  return command;
}

}  // namespace kjit::tool
