// Opens NVRTC at run time: finds libnvrtc.so.<major> (KJIT_NVRTC_PATH, a venv's
// nvidia-cuda-nvrtc wheel, the CUDA toolkit, the loader's search path), resolves every entry
// point of nvrtc_symbols.def and preloads the builtins library beside it. libkjit.so links no
// NVRTC, so it starts fast and works (cpu device) on machines without one.
#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "nvrtc_api.hpp"
#include "kjit/error.hpp"

namespace kjit::compiler {

namespace {

/// The origin of a KJIT_NVRTC_PATH that names a file.
const char* const kFileOrigin = "KJIT_NVRTC_PATH (a file)";

/// The oldest NVRTC major release kjit calls (every entry of nvrtc_symbols.def exists there).
constexpr int kMinNvrtcMajor = 12;

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

/// The library folders of the nvidia-cuda-nvrtc wheels in the venv `venv`: the 13.x wheel
/// puts libnvrtc.so.13 in nvidia/cu13/lib, the 12.x one (nvidia-cuda-nvrtc-cu12) in
/// nvidia/cuda_nvrtc/lib, both under lib/python3.X/site-packages.
std::vector<std::string> wheel_folders(const std::string& venv) {
  std::vector<std::string> pythons;
  if (DIR* d = ::opendir((venv + "/lib").c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name).rfind("python3", 0) == 0) pythons.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(pythons.begin(), pythons.end());
  std::vector<std::string> out;
  for (const std::string& py : pythons)
    for (const char* sub : {"nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"})
      out.push_back(venv + "/lib/" + py + "/site-packages/" + sub);
  return out;
}

void add_folder(std::vector<NvrtcCandidate>& out, const std::string& folder, const std::string& origin) {
  for (const std::string& soname : nvrtc_sonames()) out.push_back({folder + "/" + soname, origin});
}

std::string folder_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string sonames_text() {
  std::string s;
  const auto& names = nvrtc_sonames();
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

/// "/a (KJIT_NVRTC_PATH), /b (the CUDA toolkit), ...": the folders searched, in order.
std::string searched_text(const std::vector<NvrtcCandidate>& candidates, bool* loader_path) {
  std::vector<std::string> seen;
  std::string s;
  for (const NvrtcCandidate& c : candidates) {
    if (c.path.find('/') == std::string::npos) {
      *loader_path = true;
      continue;
    }
    std::string entry = folder_of(c.path) + " (" + c.origin + ")";
    if (std::find(seen.begin(), seen.end(), entry) != seen.end()) continue;
    seen.push_back(entry);
    s += (s.empty() ? "" : ", ") + entry;
  }
  return s;
}

const char* const kHowToGet =
    "To compile for GPU targets, install the CUDA toolkit (12 or newer), run `pip install "
    "nvidia-cuda-nvrtc` in the active or the project's venv, or set KJIT_NVRTC_PATH to the "
    "folder (or the file) of libnvrtc.so; the cpu target needs no NVRTC";

/// Resolves every entry point; returns the names missing from `handle`.
std::vector<std::string> resolve(void* handle, NvrtcApi& api) {
  std::vector<std::string> missing;
#define KJIT_NVRTC_SYMBOL(name, result, parameters)                      \
  api.name = reinterpret_cast<decltype(api.name)>(::dlsym(handle, #name)); \
  if (!api.name) missing.push_back(#name);
#include "nvrtc_symbols.def"
#undef KJIT_NVRTC_SYMBOL
  return missing;
}

/// The folder `handle` was loaded from (for a bare soname the loader found).
std::string loaded_folder(void* handle, const std::string& fallback) {
  char origin[4096] = {};
  if (::dlinfo(handle, RTLD_DI_ORIGIN, origin) == 0 && origin[0]) return origin;
  return folder_of(fallback);
}

/// NVRTC dlopens libnvrtc-builtins.so.<major>.<minor> by soname when it first compiles. The
/// wheel's libnvrtc finds it through its RPATH ($ORIGIN), a toolkit's through the loader's
/// path; loading it first from NVRTC's own folder makes any layout work (an already loaded
/// soname satisfies the later dlopen).
void preload_builtins(NvrtcLibrary& lib, void* handle) {
  std::string folder = loaded_folder(handle, lib.path);
  std::string file = folder + "/libnvrtc-builtins.so." + std::to_string(lib.major) + "." +
                     std::to_string(lib.minor);
  if (exists(file) && ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) lib.builtins_path = file;
}

NvrtcLibrary open_nvrtc() {
  NvrtcLibrary lib;
  const char* env = std::getenv("KJIT_NVRTC_PATH");
  if (env && std::string(env) == "none") {
    lib.reason = "NVRTC is disabled (KJIT_NVRTC_PATH=none), so GPU targets cannot be compiled; "
                 "unset KJIT_NVRTC_PATH to search for the CUDA toolkit's or the "
                 "nvidia-cuda-nvrtc wheel's NVRTC";
    return lib;
  }
  std::vector<NvrtcCandidate> candidates = nvrtc_candidates([](const char* name) -> const char* { return std::getenv(name); });
  std::string failures;  // libraries that exist but could not be opened or used
  void* handle = nullptr;
  for (const NvrtcCandidate& c : candidates) {
    bool bare = c.path.find('/') == std::string::npos;
    if (!bare && !exists(c.path)) continue;
    void* h = ::dlopen(c.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      if (!bare) {
        const char* err = ::dlerror();
        failures += "; " + c.path + " cannot be opened (" + (err ? err : "dlopen failed") + ")";
      }
      continue;
    }
    std::vector<std::string> missing = resolve(h, lib.api);
    if (!missing.empty()) {
      failures += "; " + c.path + " is not a usable NVRTC (it lacks " + missing.front() + ")";
      lib.api = NvrtcApi{};
      continue;  // never dlclose-d: harmless, and closing libraries with threads is not
    }
    if (lib.api.nvrtcVersion(&lib.major, &lib.minor) != NVRTC_SUCCESS || lib.major < kMinNvrtcMajor) {
      failures += "; " + c.path + " is NVRTC " + std::to_string(lib.major) + "." +
                  std::to_string(lib.minor) + ", older than kjit's oldest, " +
                  std::to_string(kMinNvrtcMajor) + ".0";
      lib.api = NvrtcApi{};
      continue;
    }
    lib.path = c.path;
    lib.origin = c.origin;
    handle = h;
    break;
  }
  if (!handle && candidates.size() == 1 && candidates[0].origin == kFileOrigin) {
    lib.reason = "NVRTC could not be loaded from KJIT_NVRTC_PATH" +
                 (failures.empty() ? "=" + candidates[0].path : ": " + failures.substr(2)) + ". " + kHowToGet;
    return lib;
  }
  if (!handle) {
    bool loader_path = false;
    std::string searched = searched_text(candidates, &loader_path);
    lib.reason = "NVRTC was not found: no " + sonames_text() + " in " + searched +
                 (loader_path ? ", nor on the dynamic loader's search path" : "") + failures +
                 ". " + kHowToGet;
    return lib;
  }
  preload_builtins(lib, handle);
  return lib;
}

}  // namespace

const std::vector<std::string>& nvrtc_sonames() {
  static const std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12"};
  return names;
}

std::vector<NvrtcCandidate> nvrtc_candidates(const std::function<const char*(const char*)>& getenv) {
  std::vector<NvrtcCandidate> out;
  auto var = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v ? v : "";
  };
  // An explicit KJIT_NVRTC_PATH is the only place searched: asking for one NVRTC and silently
  // getting another would be worse than an error.
  if (std::string p = var("KJIT_NVRTC_PATH"); !p.empty()) {
    if (p == "none") return out;
    if (is_dir(p)) add_folder(out, p, "KJIT_NVRTC_PATH");
    else if (exists(p)) out.push_back({p, kFileOrigin});
    else add_folder(out, p, "KJIT_NVRTC_PATH, which does not exist");
    return out;
  }
  std::string venv = var("VIRTUAL_ENV");
  if (!venv.empty())
    for (const std::string& f : wheel_folders(venv)) add_folder(out, f, "VIRTUAL_ENV's nvidia-cuda-nvrtc");
#ifdef KJIT_PROJECT_VENV
  // The project's venv (scripts/python_env.sh installs the wheel there on a machine without
  // a toolkit), so that programs built in the tree find it without an activated venv.
  if (std::string(KJIT_PROJECT_VENV) != venv)
    for (const std::string& f : wheel_folders(KJIT_PROJECT_VENV))
      add_folder(out, f, "the project venv's nvidia-cuda-nvrtc");
#endif
  for (const char* root_var : {"CUDA_PATH", "CUDA_HOME"})
    if (std::string root = var(root_var); !root.empty()) {
      add_folder(out, root + "/lib64", root_var);
      add_folder(out, root + "/lib", root_var);
    }
  add_folder(out, "/usr/local/cuda/lib64", "the CUDA toolkit");
  add_folder(out, "/usr/local/cuda/lib", "the CUDA toolkit");
  for (const std::string& soname : nvrtc_sonames()) out.push_back({soname, "the dynamic loader's search path"});
  return out;
}

const NvrtcLibrary& nvrtc_library() {
  static const NvrtcLibrary lib = open_nvrtc();  // thread-safe, once
  return lib;
}

const NvrtcApi& nvrtc() {
  const NvrtcLibrary& lib = nvrtc_library();
  if (!lib.reason.empty()) throw Error(ErrorKind::Driver, lib.reason);
  return lib.api;
}

}  // namespace kjit::compiler
