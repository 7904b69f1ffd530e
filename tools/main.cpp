// kjit: the command-line tool. Parses the command line (llvm::cl subcommands), runs the chosen
// subcommand, and turns errors into one "kjit: error: ..." line and an exit status.
#include <cstring>
#include <exception>

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include "cli_support.hpp"
#include "commands.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/key.hpp"
#include "kjit/compiler/target.hpp"
#include "kjit/error.hpp"

namespace {

using namespace kjit::tool;

const char* const kOverview =
    "kjit: precompile differentiable kernels for GPU architectures, inspect them, manage the "
    "module cache.\n\n"
    "  kjit precompile build/lib/libdemo_kernels.so --arch sm_80,sm_90 --cpu\n"
    "  kjit list build/lib/libdemo_kernels.so\n"
    "  kjit source build/lib/libdemo_kernels.so demo::saxpy --adjoint\n"
    "  kjit cache stats\n"
    "  kjit devices\n\n"
    "Run 'kjit <subcommand> --help' for a subcommand's options. docs/CLI.md has the details.\n";

void print_version(llvm::raw_ostream& out) {
  using namespace kjit::compiler;
  out << "kjit " << KJIT_VERSION << "\n"
      << "  cache format v" << kCacheFormatVersion << ", codegen v" << kjit::codegen::kCodegenVersion
      << "\n";
  try {
    std::string archs;
    for (int a : nvrtc_supported_archs()) archs += (archs.empty() ? "" : " ") + std::string("sm_") + std::to_string(a);
    out << "  GPU modules: " << compiler_identity(Target::cubin(nvrtc_supported_archs().back()))
        << "\n  GPU architectures: " << archs << "\n";
  } catch (const kjit::Error& e) {  // no NVRTC: the version still prints, and says why
    out << "  GPU modules: none (" << e.what() << ")\n";
  }
  out << "  cpu modules: " << compiler_identity(Target::host()) << "\n";
}

const char* const kSubcommands =
    "Use one of: precompile, list, source, cache, devices ('kjit --help' describes them)";

int run(const Command& command) {
  try {
    return command.run();
  } catch (const UsageError& e) {
    llvm::errs() << "kjit: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const kjit::Error& e) {
    llvm::errs() << "kjit: error: " << e.what() << "\n";
    return e.kind() == kjit::ErrorKind::User ? kExitUsage : kExitFailed;
  } catch (const std::exception& e) {
    llvm::errs() << "kjit: error: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace

int main(int argc, char** argv) {
  namespace cl = llvm::cl;
  std::vector<const Command*> commands = all_commands();
  // Each subcommand's --help starts with its own overview and shows only its options (the
  // statically linked LLVMSupport registers a few of its own).
  const char* overview = kOverview;
  for (const Command* c : commands) {
    if (argc > 1 && c->sub->getName() == argv[1]) overview = c->overview;
    cl::HideUnrelatedOptions(*c->options, *c->sub);
  }
  static cl::OptionCategory no_options("kjit");
  cl::HideUnrelatedOptions(no_options, *cl::TopLevelSubCommand);
  cl::SetVersionPrinter(print_version);

  if (argc < 2) {
    llvm::errs() << "kjit: error: no subcommand given. " << kSubcommands << "\n";
    return kExitUsage;
  }
  // llvm::cl would call an unknown subcommand "too many positional arguments".
  bool known = argv[1][0] == '-';
  for (const Command* c : commands) known = known || c->sub->getName() == argv[1];
  if (!known) {
    llvm::errs() << "kjit: error: unknown subcommand '" << argv[1] << "'. " << kSubcommands << "\n";
    return kExitUsage;
  }
  std::string parse_errors;
  llvm::raw_string_ostream errs(parse_errors);
  if (!cl::ParseCommandLineOptions(argc, argv, overview, &errs, nullptr, /*LongOptionsUseDoubleDash=*/true)) {
    errs.flush();
    llvm::errs() << parse_errors;
    return kExitUsage;
  }
  for (const Command* c : commands)
    if (*c->sub) return run(*c);
  llvm::errs() << "kjit: error: no subcommand given. " << kSubcommands << "\n";
  return kExitUsage;
}
