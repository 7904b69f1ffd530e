// Loading modules ahead of launches, and building them for targets without loading.
#include "kjit/runtime/modules.hpp"

#include <chrono>

#include "cuda/cuda_backend.hpp"
#include "kjit/compiler/build.hpp"
#include "module_input.hpp"
#include "module_table.hpp"

namespace kjit {

namespace {
const ModuleDef& find(const std::string& name) {
  const ModuleDef* m = Registry::get().find_module(name);
  if (!m || m->kernels().empty())
    throw Error(ErrorKind::User, "no module named '" + name + "' has kernels in this process");
  return *m;
}

ModuleBuild describe(const std::string& module, const compiler::Artifact& a) {
  ModuleBuild b;
  b.module = module;
  b.target = a.target.name();
  b.key = a.key;
  b.from_cache = a.origin == compiler::ArtifactOrigin::Cached;
  b.milliseconds = a.compile_ms;
  b.bytes = a.target.is_gpu() ? a.image.size() : size_t(a.meta.value("artifact_bytes", 0));
  return b;
}
}  // namespace

ModuleLoad load_module(const std::string& module_name, const Device& device) {
  const detail::LoadedModule& m = detail::module_on(find(module_name), device);
  ModuleLoad out;
  out.build = describe(module_name, m.artifact);
  out.device = device.name();
  out.load_milliseconds = m.load_milliseconds;
  return out;
}

std::vector<ModuleLoad> preload_module(const std::string& module_name, PreloadMode mode) {
  std::vector<ModuleLoad> out;
  switch (mode) {
    case PreloadMode::None:
      break;
    case PreloadMode::CurrentDevice:
      out.push_back(load_module(module_name, default_device()));
      break;
    case PreloadMode::AllDevices: {
      int n = cuda::device_count();
      if (n == 0) out.push_back(load_module(module_name, Device::cpu()));
      for (int i = 0; i < n; ++i) out.push_back(load_module(module_name, Device::cuda(i)));
      break;
    }
  }
  return out;
}

ModuleBuild build_module_for(const std::string& module_name, const std::string& target) {
  const ModuleDef& def = find(module_name);
  detail::ModuleInput in = detail::module_input(def, def.options());
  auto started = std::chrono::steady_clock::now();
  compiler::Artifact a = compiler::build_module(in.source, compiler::Target::parse(target), in.compile);
  ModuleBuild b = describe(module_name, a);
  if (b.from_cache)
    b.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return b;
}

}  // namespace kjit
