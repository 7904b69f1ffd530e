// The host-compiler driver: runs $KJIT_CXX or the compiler kjit was built with (as a child that
// cannot outlive kjit, child_process.hpp), to build a `cpu` module's shared object.
#include "host_compiler.hpp"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>

#include <unistd.h>

#include "llvm_support.hpp"

#include "child_process.hpp"
#include "file_util.hpp"
#include "kjit/error.hpp"

#ifndef KJIT_HOST_CXX
#error "compiler/CMakeLists.txt defines KJIT_HOST_CXX"
#endif

namespace kjit::compiler {

namespace {

#if defined(__x86_64__)
constexpr const char* kHostArch = "x86_64";
#elif defined(__aarch64__)
constexpr const char* kHostArch = "aarch64";
#elif defined(__powerpc64__)
constexpr const char* kHostArch = "ppc64";
#else
constexpr const char* kHostArch = "unknown-arch";
#endif

/// Flags every host compile gets (with the -march of isa_flag()); part of the key through
/// host_compiler_identity().
/// -fvisibility=hidden keeps everything but the KJ_EXPORT entry points out of the dynamic
/// symbol table, so modules never interpose on each other or on the process.
/// -ffp-contract=off: no fused multiply-adds the text does not ask for, so results do not
/// depend on the cpu's ISA level (x86-64-v3 and up have FMA) and match the host compiler's.
/// -fno-math-errno: kernels never read errno, and without it sqrt cannot be one instruction
/// inside a vectorized loop.
/// -nostdlib (with kLinkLibraries after the source): a module needs no C++ runtime, start
/// files or libgcc_s; reading libstdc++'s and libc's symbol tables was most of ld's time
/// (90 -> 17 M instructions for the saxpy module). The C library's functions (printf)
/// resolve against the process, which always has libc loaded.
const char* const kFixedFlags[] = {"-x", "c++", "-shared", "-fPIC", "-fvisibility=hidden", "-w",
                                   "-ffp-contract=off", "-fno-math-errno", "-nostdlib"};

/// Linked after the source: the math library (a module may call sinf, which the process need
/// not have loaded) and libgcc's static helpers (128-bit division, popcount below x86-64-v2).
const char* const kLinkLibraries[] = {"-lm", "-lgcc"};

/// GCC's flags that keep a small module's compile short with the same vector code (docs/
/// BENCHMARKS.md, small-module host compile). -fno-unswitch-loops: the adjoint's tests for
/// absent gradient arrays (`if (adj.data)`) are loop-invariant, and unswitching gave each
/// entry loop one copy per combination, each vectorized (a third of saxpy's compile); AVX-512
/// and AVX2 vectorize the one loop with masked loads and stores instead.
/// --param=vect-epilogues-nomask=0: no second, narrower vector loop for the remainder of
/// each vectorized loop (at most 15 iterations of a chunk of thousands run scalar).
const char* const kGccFlags[] = {"-fno-unswitch-loops", "--param=vect-epilogues-nomask=0"};

/// The x86-64 micro-architecture level of this cpu ("x86-64-v4" ... "x86-64"), as GCC and
/// Clang name them for -march: the widest vector ISA modules may use here.
const char* x86_level() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd"))
    return "x86-64-v4";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
      __builtin_cpu_supports("bmi2"))
    return "x86-64-v3";
  if (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("ssse3"))
    return "x86-64-v2";
  return "x86-64";
#else
  return "";
#endif
}

/// The -march flag of every host compile: $KJIT_CPU_ISA when set ("none" for the compiler's
/// default, or any -march value: "native", "x86-64-v2", "skylake"), else this cpu's x86-64
/// level. An ISA level rather than -march=native: the flag is part of the key, so a cache
/// moved to a cpu of another level is a miss, never a SIGILL, and machines of one level
/// share modules.
std::string isa_flag() {
  static const std::string level = x86_level();
  const char* env = std::getenv("KJIT_CPU_ISA");
  std::string isa = env && *env ? env : level;
  if (isa.empty() || isa == "none") return std::string();
  for (char c : isa)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      throw Error(ErrorKind::User, "KJIT_CPU_ISA='" + isa + "' is not a -march value (letters, digits, "
                                   "'-', '_', '.'); use e.g. x86-64-v3, native, or none");
  return "-march=" + isa;
}

/// Whether the first line of `--version` names GCC (not Clang, which also calls itself g++
/// compatible but takes none of kGccFlags).
bool is_gcc(const std::string& version_line) {
  if (version_line.find("clang") != std::string::npos) return false;
  return version_line.find("g++") != std::string::npos || version_line.find("gcc") != std::string::npos ||
         version_line.find("GCC") != std::string::npos;
}

/// kFixedFlags, the -march flag and, for GCC, kGccFlags: what every host compile gets ahead
/// of the source, and the identity names (with kLinkLibraries).
std::vector<std::string> fixed_flags(bool gcc) {
  std::vector<std::string> flags(std::begin(kFixedFlags), std::end(kFixedFlags));
  if (std::string isa = isa_flag(); !isa.empty()) flags.push_back(std::move(isa));
  if (gcc) flags.insert(flags.end(), std::begin(kGccFlags), std::end(kGccFlags));
  return flags;
}

/// Runs `program args...` with stdout and stderr sent to a temporary file; returns the exit
/// code (-1 when it could not run) and the output in *output.
int run_captured(const std::string& program, const std::vector<std::string>& args,
                 const std::string& log_path, std::string* output, std::string* error) {
  int rc = run_compiler_process(program, args, log_path, error);
  int fd = open_nofollow(log_path);
  if (fd >= 0) {
    read_fd(fd, output);
    ::close(fd);
  }
  ::unlink(log_path.c_str());
  return rc;
}

std::string env_cxx() {
  const char* v = std::getenv("KJIT_CXX");
  return v && *v ? v : "";
}

}  // namespace

std::string host_compiler_path() {
  std::string cxx = env_cxx();
  if (cxx.empty()) return KJIT_HOST_CXX;
  if (cxx.find('/') != std::string::npos) return cxx;
  auto found = llvm::sys::findProgramByName(cxx);
  if (!found)
    throw Error(ErrorKind::User, "KJIT_CXX='" + cxx + "' names no program in PATH; set it to a C++ "
                                 "compiler (a path or a name in PATH) or unset it to use " KJIT_HOST_CXX);
  return *found;
}

namespace {
/// The default compiler's CMake id ("GNU-12.2.0"), or the first line of `$KJIT_CXX --version`
/// (run once per compiler path).
std::string compiler_name() {
  if (env_cxx().empty()) return KJIT_HOST_CXX_ID;
  static std::mutex mu;
  static std::map<std::string, std::string> known;  // compiler path -> first line of --version
  std::string path = host_compiler_path();
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(path);
  if (it == known.end()) {
    std::string dir_error, out, err;
    std::string dir = make_private_dir(P_tmpdir, "kjit-cxx-", &dir_error);
    if (dir.empty()) throw Error(ErrorKind::Compile, "cannot identify KJIT_CXX: " + dir_error);
    int rc = run_captured(path, {"--version"}, dir + "/version.txt", &out, &err);
    remove_tree(dir);
    std::string first = out.substr(0, out.find('\n'));
    if (rc != 0 || first.empty())
      throw Error(ErrorKind::User, "KJIT_CXX='" + path + "' does not run as a C++ compiler ('" + path +
                                       " --version' " + (rc < 0 ? "could not start: " + err : "failed") +
                                       "); set KJIT_CXX to a working compiler or unset it");
    it = known.emplace(path, first).first;
  }
  return it->second;
}

bool compiler_is_gcc() {
  if (env_cxx().empty()) return std::string(KJIT_HOST_CXX_ID).rfind("GNU", 0) == 0;
  return is_gcc(compiler_name());
}
}  // namespace

std::string host_compiler_identity() {
  std::string suffix = std::string(" ") + kHostArch + "-linux flags";
  for (const std::string& f : fixed_flags(compiler_is_gcc())) suffix += " " + f;
  for (const char* l : kLinkLibraries) suffix += std::string(" ") + l;
  return "host " + compiler_name() + suffix;
}

std::vector<std::string> host_options(const CompileOptions& options) {
  std::vector<std::string> o = fixed_flags(compiler_is_gcc());
  o.push_back("-std=" + options.cxx_standard);
  if (options.debug) {
    o.push_back("-O0");
    o.push_back("-g");
  } else {
    o.push_back("-O" + std::to_string(options.opt_level));
    if (options.line_info) o.push_back("-g");
  }
  if (options.fast_math) o.push_back("-ffast-math");
  for (const std::string& e : options.extra) o.push_back(e);
  return o;
}

CompileOutput host_compile(const std::string& text, const CompileOptions& options,
                           const std::string& work_dir) {
  CompileOutput out;
  out.compiler = host_compiler_path();
  const std::string src = work_dir + "/" + kSourceFile;
  const std::string lib = work_dir + "/" + kHostLibraryFile;
  out.generated_file = src;
  std::string werr = write_new_file(src, text);
  if (!werr.empty()) throw Error(ErrorKind::Cache, "cannot write the module source: " + werr);
  std::vector<std::string> args = host_options(options);
  for (const std::string& a : args) out.options += (out.options.empty() ? "" : " ") + a;
  args.push_back(src);
  for (const char* l : kLinkLibraries) args.push_back(l);
  args.push_back("-o");
  args.push_back(lib);

  auto t0 = std::chrono::steady_clock::now();
  std::string err;
  int rc = run_captured(out.compiler, args, work_dir + "/compile.log", &out.log, &err);
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (rc < 0)
    throw Error(ErrorKind::Compile, "cannot run the host compiler " + out.compiler + ": " + err +
                                        " (set KJIT_CXX to a working C++ compiler)");
  if (rc != 0) return out;
  int fd = open_nofollow(lib);
  std::string bytes;
  if (fd < 0 || !read_fd(fd, &bytes)) {
    if (fd >= 0) ::close(fd);
    out.log += "\nthe compiler succeeded but wrote no readable " + lib;
    return out;
  }
  ::close(fd);
  ::chmod(lib.c_str(), 0600);  // owner-only, like everything in the cache
  out.bytes.assign(bytes.begin(), bytes.end());
  out.ok = true;
  return out;
}

}  // namespace kjit::compiler
