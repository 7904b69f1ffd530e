// Loading kernel libraries with dlopen and collecting the kernels and modules they register.
#include "kernel_libraries.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <climits>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "cli_support.hpp"

namespace kjit::tool {

namespace {

std::set<std::string> registered_kernel_names() {
  std::set<std::string> names;
  for (const KernelDef* k : Registry::get().kernels()) names.insert(k->name());
  return names;
}

void check_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw UsageError("cannot open kernel library '" + path + "': " + std::strerror(errno) +
                     ". Give the path of a shared library built with kjit_add_kernel_library "
                     "(for the examples: build/lib/libdemo_kernels.so)");
  if (!S_ISREG(st.st_mode))
    throw UsageError("'" + path + "' is not a file. Give the path of a kernel library (.so)");
}

}  // namespace

std::vector<std::string> KernelLibraries::module_names() const {
  std::vector<std::string> names;
  for (const ModuleDef* m : modules) names.push_back(m->name());
  return names;
}

std::vector<std::string> KernelLibraries::kernel_names() const {
  std::vector<std::string> names;
  for (const KernelDef* k : kernels) names.push_back(k->name());
  return names;
}

const ModuleDef& KernelLibraries::module(const std::string& name) const {
  for (const ModuleDef* m : modules)
    if (m->name() == name) return *m;
  throw UsageError("no module named '" + name + "' in " + join_names(paths) + "." +
                   did_you_mean(name, module_names()) + " Its modules: " + join_names(module_names()) +
                   " (`kjit list` shows them with their kernels)");
}

const KernelDef& KernelLibraries::kernel(const std::string& name) const {
  for (const KernelDef* k : kernels)
    if (k->name() == name) return *k;
  std::vector<const KernelDef*> unqualified;
  for (const KernelDef* k : kernels) {
    const std::string& q = k->name();
    if (q.size() > name.size() + 2 && q.compare(q.size() - name.size(), name.size(), name) == 0 &&
        q.compare(q.size() - name.size() - 2, 2, "::") == 0)
      unqualified.push_back(k);
  }
  if (unqualified.size() == 1) return *unqualified.front();
  if (unqualified.size() > 1) {
    std::vector<std::string> names;
    for (const KernelDef* k : unqualified) names.push_back(k->name());
    throw UsageError("several kernels are named '" + name + "': " + join_names(names) +
                     ". Give the qualified name");
  }
  throw UsageError("no kernel named '" + name + "' in " + join_names(paths) + "." +
                   did_you_mean(name, kernel_names()) + " Its kernels: " + join_names(kernel_names()));
}

KernelLibraries load_kernel_libraries(const std::vector<std::string>& paths) {
  if (paths.empty())
    throw UsageError("no kernel library given. Name one or more shared libraries built with "
                     "kjit_add_kernel_library, e.g. build/lib/libdemo_kernels.so");
  for (const std::string& p : paths) check_file(p);

  KernelLibraries out;
  out.paths = paths;
  std::set<std::string> seen = registered_kernel_names();  // what libkjit.so itself holds
  std::set<std::string> added, loaded_files;
  for (const std::string& path : paths) {
    char real[PATH_MAX];
    if (::realpath(path.c_str(), real) && !loaded_files.insert(real).second) continue;  // named twice
    // A name without a slash would be searched for in the library path, not the folder.
    std::string file = path.find('/') == std::string::npos ? "./" + path : path;
    // The library's own libkjit.so dependency resolves (by soname) to the copy this tool
    // already runs, so its kernels register into our registry. RTLD_LOCAL keeps libraries
    // from binding to each other's copies of shared inline kernels (the registry treats a
    // second kernel of one name as an alias); RTLD_NOW reports a missing symbol now, with
    // the loader's message, rather than as a crash in the middle of a build.
    if (!::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      const char* why = ::dlerror();
      throw UsageError("cannot load '" + path + "' as a kernel library: " + (why ? why : "unknown error") +
                       ". A kernel library is a shared library (.so) built with "
                       "kjit_add_kernel_library whose dependencies the loader can find");
    }
    size_t before = added.size();
    for (const std::string& name : registered_kernel_names())
      if (!seen.count(name)) added.insert(name);
    seen.insert(added.begin(), added.end());
    if (added.size() == before)
      throw UsageError("'" + path + "' registers no kjit kernels" +
                       std::string(loaded_files.size() > 1 ? " that the libraries before it did not" : "") +
                       ". A kernel library includes headers with KJIT_KERNEL definitions and is "
                       "built with kjit_add_kernel_library");
  }
  std::set<std::string> module_names;
  for (const std::string& name : added) {
    const KernelDef* k = Registry::get().find_kernel(name);
    out.kernels.push_back(k);
    module_names.insert(k->module());
  }
  for (const std::string& m : module_names) out.modules.push_back(Registry::get().find_module(m));
  return out;
}

}  // namespace kjit::tool
