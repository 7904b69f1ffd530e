// Building, loading and finding modules per device.
#include "kjit/runtime/internal/module_table.hpp"

#include <dlfcn.h>

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/internal/cuda_entry_launch.hpp"
#include "kjit/compiler/build.hpp"
#include "array_uses.hpp"
#include "module_input.hpp"

namespace kjit::detail {

namespace {

constexpr int kMaxCudaDevices = 64;
constexpr int kSlots = 1 + kMaxCudaDevices;

/// Per-kernel state behind KernelDef::runtime_state: the module and one entry per device.
struct KernelRuntime {
  const ModuleDef* module = nullptr;
  std::atomic<const KernelEntry*> slots[kSlots] = {};
  std::once_flag uses_once;
  ArrayUses uses;  ///< kernel_array_uses, once uses_once has run
};

int slot_of(const Device& d) {
  if (d.is_cpu()) return 0;
  if (d.ordinal() < 0 || d.ordinal() >= kMaxCudaDevices)
    throw Error(ErrorKind::User, "device " + d.name() + " is beyond the " + std::to_string(kMaxCudaDevices) +
                                     " CUDA devices kjit supports");
  return 1 + d.ordinal();
}

KernelRuntime& runtime_of(const KernelDef& k) {
  void* p = k.runtime_state.load(std::memory_order_acquire);
  if (p) return *static_cast<KernelRuntime*>(p);
  auto* fresh = new KernelRuntime;
  fresh->module = &Registry::get().module(k.module());
  // The kernel frees its state when it goes (a kernel made at run time would leak it).
  k.runtime_state_deleter.store([](void* p) { delete static_cast<KernelRuntime*>(p); }, std::memory_order_release);
  void* expected = nullptr;
  if (!k.runtime_state.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
    delete fresh;
    return *static_cast<KernelRuntime*>(expected);
  }
  return *fresh;
}

}  // namespace

const ArrayUses& kernel_array_uses(const KernelDef& kernel) {
  KernelRuntime& r = runtime_of(kernel);
  std::call_once(r.uses_once, [&] {
    r.uses = array_uses_of(kernel.ir());
    r.uses.atomics = has_atomics(kernel.ir());
  });
  return r.uses;
}

namespace {

/// All loaded modules: one slot per (module, device), each building at most once at a time.
struct Table {
  struct Slot {
    std::mutex mutex;  // serialises builds of this module on this device
    std::deque<LoadedModule> versions;  // every generation loaded; the last is current
  };
  std::mutex mutex;
  std::map<std::pair<std::string, int>, std::unique_ptr<Slot>> slots;
};

Table& table() {
  static Table* t = new Table;  // never destroyed: modules stay loaded
  return *t;
}

void* symbol(void* library, const std::string& name, const std::string& module) {
  void* p = ::dlsym(library, name.c_str());
  if (!p)
    throw Error(ErrorKind::Cache, "module '" + module + "': entry point " + name +
                                      " is missing from its artifact; clear the cache entry");
  return p;
}

void build_and_load(LoadedModule& m, const ModuleDef& def, const Device& device) {
  m.name = def.name();
  m.device = device;
  m.generation = def.generation();
  m.options = with_environment(def.options());
  auto started = std::chrono::steady_clock::now();
  ModuleInput input = module_input(def, m.options);
  compiler::Target target = device.is_cpu() ? compiler::Target::host() : cuda::target_for(device.ordinal());
  m.artifact = compiler::build_module(input.source, target, input.compile);

  if (device.is_cpu()) {
    // The verified descriptor (a hit) or the file just written; m.artifact keeps it open for
    // as long as the library stays loaded (always).
    m.library = ::dlopen(m.artifact.load_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m.library)
      throw Error(ErrorKind::Cache, "module '" + m.name + "': cannot load " + m.artifact.library_path + ": " +
                                        ::dlerror());
  } else {
    m.cuda_module = cuda::module_load(device.ordinal(), m.artifact.image);
  }
  for (const compiler::KernelDescription& k : m.artifact.kernels) {
    KernelEntry e;
    e.module = &m;
    e.generation = m.generation;
    auto resolve = [&](const std::string& entry) {
      return device.is_cpu() ? symbol(m.library, entry, m.name)
                             : cuda::module_function(device.ordinal(), m.cuda_module, entry);
    };
    e.forward = resolve(k.forward);
    if (!k.adjoint.empty()) e.adjoint = resolve(k.adjoint);
    if (e.adjoint) e.own_adds = own_adds_of(k);
    if (device.is_cpu()) {
      e.cpu_private[0] = cpu_private_adds(k, false);
      if (e.adjoint) e.cpu_private[1] = cpu_private_adds(k, true);
    }
    if (device.is_cuda()) {  // limits and shared memory, once: launches check them for free
      e.forward_cuda = cuda_entry_facts(m, k, k.forward, false, e.forward);
      if (e.adjoint) e.adjoint_cuda = cuda_entry_facts(m, k, k.adjoint, true, e.adjoint);
    }
    e.adjoint_error = k.adjoint_error;
    if (!m.options.enable_adjoint)
      e.adjoint_error = "kernel '" + k.name + "' has no adjoint: module '" + m.name +
                        "' is built with enable_adjoint = false";
    for (const compiler::LoopDescription& loop : k.loops) m.loop_locations[loop.status] = loop.loc;
    if (k.checks) m.checks = true;  // expect_near reports in forward launches too
    m.kernels[k.name] = e;
  }
  if (m.options.bounds_check) m.checks = true;
  m.adjoint_reports = m.checks || !m.loop_locations.empty();
  m.load_milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace

const LoadedModule& module_on(const ModuleDef& def, const Device& device) {
  int slot = slot_of(device);
  Table& t = table();
  Table::Slot* s;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto& p = t.slots[{def.name(), slot}];
    if (!p) p = std::make_unique<Table::Slot>();
    s = p.get();
  }
  std::lock_guard<std::mutex> lock(s->mutex);
  if (!s->versions.empty() && s->versions.back().generation == def.generation()) return s->versions.back();
  s->versions.emplace_back();
  try {
    build_and_load(s->versions.back(), def, device);
  } catch (...) {
    s->versions.pop_back();
    throw;
  }
  return s->versions.back();
}

const KernelEntry& kernel_entry(const KernelDef& kernel, const Device& device) {
  KernelRuntime& rt = runtime_of(kernel);
  int slot = slot_of(device);
  const KernelEntry* e = rt.slots[slot].load(std::memory_order_acquire);
  if (e && e->generation == rt.module->generation()) return *e;
  const LoadedModule& m = module_on(*rt.module, device);
  auto it = m.kernels.find(kernel.name());
  KJIT_CHECK(it != m.kernels.end(), "kernel " + kernel.name() + " missing from its module " + m.name);
  rt.slots[slot].store(&it->second, std::memory_order_release);
  return it->second;
}

}  // namespace kjit::detail
