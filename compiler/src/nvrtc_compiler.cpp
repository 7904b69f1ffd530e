// The NVRTC driver: builds the option list from CompileOptions, compiles, and collects the
// artifact, the log and the per-kernel resources the cubin records.
#include "nvrtc_compiler.hpp"

#include <chrono>
#include <memory>

#include "elf_reader.hpp"
#include "nvrtc_api.hpp"
#include "kjit/error.hpp"

namespace kjit::compiler {

namespace {

/// Flags every NVRTC compile gets. They enter the key through nvrtc_identity(), so changing
/// them invalidates old cache entries. `-w`: the generated code is warning-free by
/// construction and warnings would only bloat logs. `--minimal`: omits texture, surface and
/// device-runtime declarations that generated code never uses; it takes several ms off
/// every compile's front end (see docs/BENCHMARKS.md).
const char* const kFixedFlags[] = {"-w", "--minimal"};

std::pair<int, int> nvrtc_version() {
  const NvrtcLibrary& lib = nvrtc_library();
  nvrtc();  // throws when there is none
  return {lib.major, lib.minor};
}

/// NVRTC's fast-compile levels (-Ofc) arrived in CUDA 12.8.
bool has_fast_compile() {
  auto [major, minor] = nvrtc_version();
  return major > 12 || (major == 12 && minor >= 8);
}

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtc().nvrtcDestroyProgram(&p); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

std::string program_log(const NvrtcApi& api, nvrtcProgram prog) {
  size_t size = 0;
  if (api.nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  if (api.nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return "";
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

}  // namespace

std::string nvrtc_version_string() {
  auto [major, minor] = nvrtc_version();
  return "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
}

const std::string& nvrtc_identity() {
  static const std::string id = [] {
    auto [major, minor] = nvrtc_version();
    std::string s = "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + " flags";
    for (const char* f : kFixedFlags) s += std::string(" ") + f;
    return s;
  }();
  return id;
}

std::vector<std::string> nvrtc_options(const Target& target, const CompileOptions& options) {
  KJIT_CHECK(target.is_gpu(), "NVRTC asked to compile for " + target.name());
  std::vector<std::string> o;
  o.push_back("--gpu-architecture=" + target.name());
  o.push_back("-std=" + options.cxx_standard);
  for (const char* f : kFixedFlags) o.push_back(f);
  if (options.fast_math) o.push_back("--use_fast_math");
  if (options.debug) o.push_back("-G");
  else if (options.line_info) o.push_back("-lineinfo");
  if (options.max_registers > 0) o.push_back("--maxrregcount=" + std::to_string(options.max_registers));
  // ptxas runs only for native targets, and -G fixes its level itself.
  if (target.kind == TargetKind::Cubin && !options.debug && options.opt_level != 3)
    o.push_back("--ptxas-options=-O" + std::to_string(options.opt_level));
  if (options.fast_compile && !options.debug && has_fast_compile()) o.push_back("-Ofc=min");
  for (const std::string& e : options.extra) o.push_back(e);
  return o;
}

CompileOutput nvrtc_compile(const std::string& text, const std::string& generated_file,
                            const Target& target, const CompileOptions& options) {
  return nvrtc_run(text, generated_file, target.kind, nvrtc_options(target, options));
}

CompileOutput nvrtc_run(const std::string& text, const std::string& generated_file, TargetKind kind,
                        const std::vector<std::string>& options, const std::vector<NvrtcHeader>& headers) {
  KJIT_CHECK(kind != TargetKind::Host, "NVRTC asked to build a host module");
  CompileOutput out;
  out.compiler = nvrtc_version_string();
  out.generated_file = generated_file;
  std::vector<const char*> argv;
  for (const std::string& s : options) {
    argv.push_back(s.c_str());
    out.options += (out.options.empty() ? "" : " ") + s;
  }
  std::vector<const char*> header_texts, header_names;
  for (const NvrtcHeader& h : headers) {
    header_texts.push_back(h.text.c_str());
    header_names.push_back(h.name.c_str());
  }

  const NvrtcApi& api = nvrtc();  // throws (Driver) when there is no NVRTC
  auto t0 = std::chrono::steady_clock::now();
  nvrtcProgram raw = nullptr;
  nvrtcResult rc = api.nvrtcCreateProgram(&raw, text.c_str(), generated_file.c_str(), int(headers.size()),
                                      header_texts.data(), header_names.data());
  if (rc != NVRTC_SUCCESS)
    throw Error(ErrorKind::Internal, std::string("nvrtcCreateProgram failed: ") + api.nvrtcGetErrorString(rc));
  Program prog(raw);
  rc = api.nvrtcCompileProgram(prog.get(), int(argv.size()), argv.data());
  out.log = program_log(api, prog.get());
  if (rc != NVRTC_SUCCESS) {
    out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (rc != NVRTC_ERROR_COMPILATION)  // e.g. an invalid option in CompileOptions::extra
      out.log = std::string("NVRTC: ") + api.nvrtcGetErrorString(rc) + "\n" + out.log;
    return out;
  }

  size_t size = 0;
  if (kind == TargetKind::Cubin) {
    if (api.nvrtcGetCUBINSize(prog.get(), &size) != NVRTC_SUCCESS || size == 0)
      throw Error(ErrorKind::Internal, "NVRTC produced no cubin");
    out.bytes.resize(size);
    if (api.nvrtcGetCUBIN(prog.get(), out.bytes.data()) != NVRTC_SUCCESS)
      throw Error(ErrorKind::Internal, "nvrtcGetCUBIN failed");
  } else {
    if (api.nvrtcGetPTXSize(prog.get(), &size) != NVRTC_SUCCESS || size == 0)
      throw Error(ErrorKind::Internal, "NVRTC produced no PTX");
    out.bytes.resize(size);
    if (api.nvrtcGetPTX(prog.get(), out.bytes.data()) != NVRTC_SUCCESS)
      throw Error(ErrorKind::Internal, "nvrtcGetPTX failed");
    while (!out.bytes.empty() && out.bytes.back() == '\0') out.bytes.pop_back();  // stored as text
  }
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.ok = true;

  if (kind == TargetKind::Cubin) {
    out.resources = nlohmann::json::object();
    for (const auto& [name, r] : cubin_resources(std::string_view(out.bytes.data(), out.bytes.size()))) {
      nlohmann::json j;
      j["registers"] = r.registers >= 0 ? nlohmann::json(r.registers) : nlohmann::json();
      j["stack_bytes"] = r.stack_bytes >= 0 ? nlohmann::json(r.stack_bytes) : nlohmann::json();
      j["shared_bytes"] = r.shared_bytes;
      out.resources[name] = j;
    }
  }
  return out;
}

}  // namespace kjit::compiler
