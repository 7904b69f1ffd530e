// `kjit precompile`: builds every module of kernel libraries for the requested targets (GPU
// architectures, this machine's GPUs, the cpu) into the module cache, in parallel.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

#include "cli_support.hpp"
#include "commands.hpp"
#include "kernel_libraries.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/compiler/target.hpp"
#include "kjit/error.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "kjit/runtime/devices.hpp"
#include "kjit/runtime/modules.hpp"
#include "precompile_report.hpp"

namespace kjit::tool {

namespace {

namespace cl = llvm::cl;

cl::SubCommand sub("precompile", "Build the modules of kernel libraries for GPU architectures "
                                 "and the cpu into the module cache");
cl::OptionCategory category("precompile options");

cl::list<std::string> libraries(cl::Positional, cl::desc("<kernel library>..."), cl::ZeroOrMore,
                                cl::sub(sub), cl::cat(category));
cl::list<std::string> archs("arch", cl::CommaSeparated, cl::value_desc("sm_80,sm_90,..."),
                            cl::desc("Targets to build: sm_XX (native code), compute_XX (PTX) or cpu; "
                                     "comma-separated, repeatable"),
                            cl::sub(sub), cl::cat(category));
cl::opt<bool> all_devices("all-devices", cl::desc("Build for every GPU of this machine"),
                          cl::sub(sub), cl::cat(category));
cl::opt<bool> current_device("current-device",
                             cl::desc("Build for the GPU kjit uses by default here (cuda:0)"),
                             cl::sub(sub), cl::cat(category));
cl::opt<bool> ptx("ptx", cl::desc("Build PTX (compute_XX), which newer GPUs JIT-compile, instead of "
                                   "native code (sm_XX) for the GPU targets"),
                  cl::sub(sub), cl::cat(category));
cl::opt<bool> cpu("cpu", cl::desc("Also build for the cpu device (the host compiler)"), cl::sub(sub),
                  cl::cat(category));
cl::opt<bool> no_adjoint("no-adjoint",
                         cl::desc("Forward entry points only (for programs that turn adjoints off)"),
                         cl::sub(sub), cl::cat(category));
cl::opt<bool> tangent("tangent",
                      cl::desc("Also build each module's tangent module (forward mode: launch_tangent, "
                               "jvp from JAX), '<module>.tangent'"),
                      cl::sub(sub), cl::cat(category));
cl::list<std::string> module_filter("module", cl::value_desc("name"),
                                    cl::desc("Build only this module (repeatable; default: all)"),
                                    cl::sub(sub), cl::cat(category));
cl::opt<std::string> cache_dir("cache-dir", cl::value_desc("folder"),
                               cl::desc("The cache folder (default: $KJIT_CACHE_DIR, else "
                                        "$XDG_CACHE_HOME/kjit, else ~/.cache/kjit)"),
                               cl::sub(sub), cl::cat(category));
cl::opt<unsigned> jobs("jobs", cl::value_desc("N"),
                       cl::desc("Builds to run at once (default 0: one per hardware thread)"),
                       cl::init(0), cl::sub(sub), cl::cat(category));
cl::opt<bool> json("json", cl::desc("Print one JSON object instead of the table"), cl::sub(sub),
                   cl::cat(category));

const char* const overview =
    "kjit precompile: build every module of kernel libraries into the module cache, so that\n"
    "programs (and JAX jobs) using them start without compiling.\n\n"
    "  kjit precompile build/lib/libdemo_kernels.so --arch sm_80,sm_90\n"
    "  kjit precompile build/lib/libdemo_kernels.so --all-devices --cpu --json\n"
    "  kjit precompile libmine.so --arch sm_90 --module springs --cache-dir /opt/app/kjit-cache\n"
    "  kjit precompile libmine.so --arch sm_90 --tangent   # also '<module>.tangent' (forward mode)\n\n"
    "Targets are the union of --arch, --all-devices/--current-device and --cpu. Each module is\n"
    "built with its own options (forward and adjoint unless the module or --no-adjoint turns\n"
    "adjoints off). Exit status: 0 when every build succeeded, 1 when one failed (each error is\n"
    "shown), 2 for bad input (nothing is written to the cache then).\n";

/// Parses one --arch item, turning the compiler's error into a usage error.
compiler::Target parse_target(const std::string& text) {
  try {
    return compiler::Target::parse(text);
  } catch (const Error& e) {
    throw UsageError(std::string("--arch: ") + e.what());
  }
}

/// This machine's GPUs for --all-devices / --current-device.
std::vector<compiler::Target> device_targets() {
  const char* flag = all_devices ? "--all-devices" : "--current-device";
  CudaInfo info = cuda_info();
  if (!info.available || info.devices.empty())
    throw UsageError(std::string(flag) + " builds for this machine's GPUs, but none is usable: " +
                     (info.unavailable_reason.empty() ? "no CUDA device" : info.unavailable_reason) +
                     ". Name the architectures instead, e.g. --arch sm_80,sm_90 (compiling needs no GPU), "
                     "or use --cpu");
  std::vector<compiler::Target> out;
  for (const CudaDeviceInfo& d : info.devices) {
    if (d.target.empty())
      throw UsageError(std::string(flag) + ": cuda:" + std::to_string(d.ordinal) + " (" + d.name +
                       ") has no target kjit can build: " + d.target_error);
    out.push_back(compiler::Target::parse(d.target));
    if (!all_devices) break;  // the current device is cuda:0, as default_device() picks
  }
  return out;
}

/// The targets the options name, without duplicates, in the order given.
std::vector<compiler::Target> requested_targets() {
  std::vector<compiler::Target> out;
  auto add = [&](compiler::Target t) {
    if (ptx && t.kind == compiler::TargetKind::Cubin) t.kind = compiler::TargetKind::Ptx;
    for (const compiler::Target& o : out)
      if (o == t) return;
    out.push_back(t);
  };
  for (const std::string& a : archs) {
    llvm::StringRef item = llvm::StringRef(a).trim();
    if (item.empty()) throw UsageError("--arch has an empty target; write e.g. --arch sm_80,sm_90");
    add(parse_target(item.str()));
  }
  if (all_devices || current_device)
    for (const compiler::Target& t : device_targets()) add(t);
  if (cpu) add(compiler::Target::host());
  if (out.empty())
    throw UsageError("no target to build for. Give --arch sm_80,sm_90 (GPU architectures; no GPU needed), "
                     "--all-devices or --current-device (this machine's GPUs), and/or --cpu");
  return out;
}

/// SHA-256 of the module's identity (kernels' IR, codegen version and options) and compile
/// options: the same for every target; "" when the module cannot be traced.
std::string module_identity_key(const std::string& module, const std::optional<ModuleOptions>& options) {
  try {
    ModuleCompileInput in = module_compile_input(module, options);
    std::string material = "kjit module identity\nname " + in.source.name + "\noptions " +
                           in.options.fingerprint() + "\nidentity " + in.source.identity;
    return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(material)), /*LowerCase=*/true);
  } catch (const std::exception&) {
    return "";  // the build of this module reports the error
  }
}

int run() {
  std::vector<compiler::Target> targets = requested_targets();
  KernelLibraries libs = load_kernel_libraries(libraries);
  std::vector<const ModuleDef*> modules;
  for (const std::string& name : module_filter) {
    const ModuleDef* m = &libs.module(name);
    if (std::find(modules.begin(), modules.end(), m) == modules.end()) modules.push_back(m);
  }
  if (module_filter.empty()) modules = libs.modules;

  std::vector<std::string> names;
  for (const ModuleDef* m : modules) {
    names.push_back(m->name());
    if (!tangent) continue;
    std::string t;
    try {
      t = make_tangent_module(m->name());
    } catch (const Error&) {
      continue;  // a kernel that does not trace: the module's own build reports it
    }
    if (!t.empty()) names.push_back(t);
  }

  PrecompileRun report;
  std::vector<ModuleBuildRequest> requests;
  for (const std::string& name : names) {
    std::optional<ModuleOptions> options;
    if (no_adjoint) {
      options = Registry::get().module(name).options();
      options->enable_adjoint = false;
    }
    PrecompiledModule pm{name, module_identity_key(name, options), {}};
    for (const compiler::Target& t : targets) {
      pm.builds.push_back(requests.size());
      requests.push_back({name, t.name(), options});
    }
    report.modules.push_back(std::move(pm));
  }

  // Everything asked for is valid: only now is the cache folder opened (and created).
  ::unsetenv("KJIT_NO_COMPILE");  // filling the cache is the remedy it points to
  compiler::Cache cache(cache_config(cache_dir));
  if (cache.mode() != compiler::CacheMode::ReadWrite)
    throw std::runtime_error("cannot precompile into " + cache.dir() + ": " + cache.mode_reason());
  report.cache_dir = cache.dir();
  report.jobs = jobs ? unsigned(jobs) : std::max(1u, std::thread::hardware_concurrency());
  for (const compiler::Target& t : targets)
    if (t.kind != compiler::TargetKind::Host) report.nvrtc = compiler::nvrtc_info();

  auto started = std::chrono::steady_clock::now();
  {
    ProgressLine progress(requests.size());
    report.results = build_modules_for(requests, cache, report.jobs,
                                     [&](size_t, const ModuleBuildResult& r) { progress.done(r); });
  }
  report.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();

  if (json)
    llvm::outs() << precompile_json(report).dump(2) << "\n";
  else
    print_precompile_table(report, llvm::outs());
  llvm::outs().flush();
  print_failures(report, llvm::errs());
  return report.failed() ? kExitFailed : kExitOk;
}

}  // namespace

const Command& precompile_command() {
  static const Command command{&sub, &category, overview, run};
  return command;
}

}  // namespace kjit::tool
