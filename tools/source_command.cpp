// `kjit source`: a kernel's traced IR, or the text codegen generates for it (forward, or
// forward and adjoint), as NVRTC and the host compiler receive it.
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include "cli_support.hpp"
#include "commands.hpp"
#include "kernel_libraries.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/codegen/passes.hpp"
#include "kjit/compiler/key.hpp"
#include "kjit/compiler/target.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/printer.hpp"

namespace kjit::tool {

namespace {

namespace cl = llvm::cl;

cl::SubCommand sub("source", "Print a kernel's IR or its generated source text");
cl::OptionCategory category("source options");
cl::list<std::string> arguments(cl::Positional, cl::desc("<kernel library> <kernel>"), cl::ZeroOrMore,
                                cl::sub(sub), cl::cat(category));
cl::opt<std::string> target_name("target", cl::value_desc("sm_90|compute_90|cpu"),
                                 cl::desc("Name the compiler that builds the text for this target "
                                          "(the text is the same for every target)"),
                                 cl::sub(sub), cl::cat(category));
cl::opt<bool> ir("ir", cl::desc("Print the traced IR instead of the generated text"), cl::sub(sub),
                 cl::cat(category));
cl::opt<bool> passes("passes",
                     cl::desc("Print the IR after each of codegen's passes (with --adjoint, the adjoint's "
                              "analyses too) instead of the generated text"),
                     cl::sub(sub), cl::cat(category));
cl::opt<bool> adjoint("adjoint", cl::desc("Generate the adjoint entry point too"), cl::sub(sub),
                      cl::cat(category));

const char* const overview =
    "kjit source: print what kjit makes of one kernel: its traced IR (--ir), or the C++ text\n"
    "codegen generates for it — the prelude parts it needs and its forward entry points (with\n"
    "--adjoint, the adjoint's too). One text compiles with NVRTC and with the host compiler;\n"
    "the preprocessor selects the CUDA or the cpu entry point. A module compiles the text of\n"
    "all its kernels together; this prints the named kernel's alone.\n\n"
    "  kjit source build/lib/libdemo_kernels.so demo::saxpy\n"
    "  kjit source build/lib/libdemo_kernels.so springs --adjoint --target sm_90\n"
    "  kjit source build/lib/libdemo_kernels.so demo::damp --ir\n"
    "  kjit source build/lib/libdemo_kernels.so demo::damp --passes --adjoint\n";

int run() {
  if (arguments.size() != 2)
    throw UsageError(arguments.empty()
                         ? "give a kernel library and a kernel, e.g. kjit source build/lib/libdemo_kernels.so demo::saxpy"
                     : arguments.size() == 1
                         ? "which kernel of '" + arguments[0] + "'? Name it after the library, e.g. demo::saxpy "
                           "(kjit list " + arguments[0] + " lists them)"
                         : "too many arguments: give one kernel library and one kernel name");
  if (ir && adjoint)
    throw UsageError("--adjoint applies to the generated text: the IR holds the forward pass only, and "
                     "codegen derives the adjoint from it. Drop --ir to see the adjoint");
  if (ir && passes) throw UsageError("--ir and --passes: --passes already starts with the traced IR; give one");
  if (passes && !target_name.empty())
    throw UsageError("--target applies to the generated text; the passes are the same for every target");
  if (ir && !target_name.empty())
    throw UsageError("--target applies to the generated text; the IR is the same for every target");
  compiler::Target target;
  if (!target_name.empty()) {
    try {
      target = compiler::Target::parse(target_name.getValue());
    } catch (const Error& e) {
      throw UsageError(std::string("--target: ") + e.what());
    }
  }

  KernelLibraries libs = load_kernel_libraries({arguments[0]});
  const KernelDef& kernel = libs.kernel(arguments[1]);
  const ir::Function& fn = kernel.ir();  // a tracing mistake is a User error naming the line
  if (ir) {
    llvm::outs() << "# " << kernel.name() << " (module " << kernel.module() << "), traced from "
                 << kernel.loc().str() << "\n"
                 << ir::print(fn);
    return kExitOk;
  }

  ModuleOptions mo = Registry::get().find_module(kernel.module())->options();
  codegen::CodegenOptions cg;
  cg.enable_adjoint = adjoint;
  cg.loop_checkpoints = mo.loop_checkpoints;
  if (passes) {
    llvm::outs() << "# " << kernel.name() << " (module " << kernel.module() << "), codegen's passes"
                 << (adjoint ? " with the adjoint's analyses" : "") << ", traced from " << kernel.loc().str() << "\n";
    for (const codegen::PassSnapshot& s : codegen::pass_snapshots({&fn}, cg))
      llvm::outs() << "\n# after " << s.pass << ": " << s.function << "\n" << s.ir;
    return kExitOk;
  }
  if (adjoint) {
    nlohmann::json d = codegen::describe_module({&fn}, cg).at(0);
    if (d["adjoint"].is_null())
      throw Error(ErrorKind::User, kernel.name() + " has no adjoint: " + d.value("adjoint_error", std::string("unknown reason")));
  }
  codegen::GeneratedModule g = codegen::generate_module(kernel.module(), {&fn}, cg);
  llvm::outs() << "// kjit source: " << kernel.name() << " (module " << kernel.module() << "), "
               << (adjoint ? "forward and adjoint" : "forward only") << ", from " << kernel.loc().str() << "\n";
  if (!target_name.empty())
    llvm::outs() << "// for " << target.name() << ", compiled by " << compiler::compiler_identity(target) << "\n";
  llvm::outs() << g.text;
  if (!g.text.empty() && g.text.back() != '\n') llvm::outs() << "\n";
  return kExitOk;
}

}  // namespace

const Command& source_command() {
  static const Command command{&sub, &category, overview, run};
  return command;
}

}  // namespace kjit::tool
