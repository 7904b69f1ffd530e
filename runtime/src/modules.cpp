// Loading modules ahead of launches, and building them for targets without loading.
#include "kjit/runtime/modules.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "module_input.hpp"
#include "kjit/runtime/internal/module_table.hpp"

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
  // A cpu artifact is a file; meta.json records its size.
  const nlohmann::json* artifact = a.meta.is_object() && a.meta.contains("artifact") ? &a.meta["artifact"] : nullptr;
  b.bytes = a.target.is_gpu() ? a.image.size()
                              : artifact && artifact->is_object() ? artifact->value("size", size_t(0)) : 0;
  return b;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

/// One request of build_modules_for. Each request gets its own ModuleSource, so that no
/// lazily filled field of a source is shared between threads.
ModuleBuildResult build_request(const ModuleBuildRequest& request, compiler::Cache& cache) {
  auto started = std::chrono::steady_clock::now();
  ModuleBuildResult r;
  r.build.module = request.module;
  r.build.target = request.target;
  try {
    compiler::Target target = compiler::Target::parse(request.target);
    r.build.target = target.name();
    const ModuleDef& def = find(request.module);
    detail::ModuleInput in = detail::module_input(def, request.options.value_or(def.options()));
    r.build.key = compiler::module_key(in.source, target, in.compile);
    compiler::Artifact a = compiler::build_module(in.source, target, in.compile, cache);
    r.build = describe(request.module, a);
    r.ok = true;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.build.milliseconds = ms_since(started);
  return r;
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
  if (b.from_cache) b.milliseconds = ms_since(started);
  return b;
}

std::vector<ModuleBuildResult> build_modules_for(const std::vector<ModuleBuildRequest>& requests,
                                                 compiler::Cache& cache, unsigned jobs,
                                                 const ModuleBuildCallback& on_done) {
  std::vector<ModuleBuildResult> results(requests.size());
  std::atomic<size_t> next{0};
  std::mutex report;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < requests.size();) {
      results[i] = build_request(requests[i], cache);
      if (on_done) {
        std::lock_guard<std::mutex> lock(report);
        on_done(i, results[i]);
      }
    }
  };
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  size_t threads = std::min<size_t>(jobs, requests.size());
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();  // the calling thread builds too
  for (std::thread& t : helpers) t.join();
  return results;
}

ModuleCompileInput module_compile_input(const std::string& module_name,
                                        const std::optional<ModuleOptions>& options) {
  const ModuleDef& def = find(module_name);
  detail::ModuleInput in = detail::module_input(def, options.value_or(def.options()));
  return ModuleCompileInput{std::move(in.source), std::move(in.compile)};
}

}  // namespace kjit
