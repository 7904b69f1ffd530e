// The tangent kernels of the process: for each module whose tangents were asked for, the
// module "<module>.tangent" holding the tangent kernel of every kernel in it (so that its
// key, and what `kjit precompile --tangent` builds, does not depend on which tangent was
// asked for first), kept in step with the module's kernels and options.
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>

#include "array_uses.hpp"
#include "kjit/codegen/tangent.hpp"
#include "kjit/ir/serializer.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/launch.hpp"
#include "kjit/runtime/modules.hpp"
#include "tangent_kernels.hpp"

namespace kjit {

namespace {

/// One kernel's tangent, or why forward mode refused it.
struct TangentEntry {
  const KernelDef* primal = nullptr;
  std::string identity;  ///< the primal's serialised IR: a new kernel under an old name is rebuilt
  std::unique_ptr<KernelDef> tangent;
  detail::TangentKernel info;  ///< the tangent and its uses of the tangent slots
  std::string error;
};

/// The tangents of one module's kernels, by kernel name (entries stay where they are while
/// kept: launches hold their TangentKernel without the lock).
struct TangentModule {
  uint64_t primal_generation = ~uint64_t(0);
  std::map<std::string, std::unique_ptr<TangentEntry>> kernels;
};

struct Tangents {
  std::mutex mutex;
  std::map<std::string, TangentModule> modules;  ///< by the primal module's name
};

Tangents& tangents() {
  static Tangents* t = new Tangents;  // never destroyed: its kernels stay registered
  return *t;
}

/// Brings `t` up to date with the kernels and options of `primal`.
void sync(TangentModule& t, const ModuleDef& primal) {
  const uint64_t generation = primal.generation();
  std::map<std::string, std::unique_ptr<TangentEntry>> kept;
  for (const KernelDef* k : primal.kernels()) {
    auto entry = std::make_unique<TangentEntry>();
    TangentEntry& e = *entry;
    e.primal = k;
    try {
      e.identity = ir::serialize(k->ir());
    } catch (const Error& err) {  // a tracing error: this kernel has no tangent, the others do
      e.error = err.what();
      kept[k->name()] = std::move(entry);
      continue;
    }
    auto old = t.kernels.find(k->name());
    if (old != t.kernels.end() && old->second->primal == k && old->second->identity == e.identity) {
      kept[k->name()] = std::move(old->second);
      continue;
    }
    try {
      e.tangent = std::make_unique<KernelDef>(std::make_unique<ir::Function>(codegen::tangent_kernel(k->ir())),
                                              codegen::tangent_module_name(primal.name()));
      std::set<size_t> read, written;
      detail::array_uses(e.tangent->ir(), read, written);
      const size_t n = k->params().size();
      e.info.kernel = e.tangent.get();
      for (size_t p = 0; p < n; ++p) {
        e.info.reads.push_back(read.count(n + p) != 0);
        e.info.writes.push_back(written.count(n + p) != 0);
      }
    } catch (const Error& err) {
      if (err.kind() != ErrorKind::User) throw;
      e.error = err.what();
    }
    kept[k->name()] = std::move(entry);
  }
  t.kernels = std::move(kept);  // the tangents of kernels no longer in the module go
  ModuleOptions options = primal.options();
  options.enable_adjoint = options.enable_adjoint && options.tangent_adjoint;
  module(codegen::tangent_module_name(primal.name())).set_options(options);
  t.primal_generation = generation;
}

/// The tangents of module `name`, in step with it (the caller holds the lock).
TangentModule& synced(Tangents& all, const std::string& name) {
  const ModuleDef& primal = module(name);
  TangentModule& t = all.modules[name];
  if (t.primal_generation != primal.generation()) sync(t, primal);
  return t;
}

}  // namespace

std::string make_tangent_module(const std::string& module_name) {
  if (!Registry::get().find_module(module_name))
    throw Error(ErrorKind::User, "make_tangent_module: no module named '" + module_name + "'");
  Tangents& all = tangents();
  std::lock_guard<std::mutex> lock(all.mutex);
  for (const auto& [name, entry] : synced(all, module_name).kernels)
    if (entry->tangent) return codegen::tangent_module_name(module_name);
  return "";
}

const detail::TangentKernel& detail::tangent_kernel(const KernelDef& kernel) {
  // The launch path takes no lock once a thread has seen the kernel's tangent: its entry stays
  // while the module's generation does (a change syncs, which may replace it).
  struct Seen {
    const ModuleDef* module;
    uint64_t generation;
    const TangentKernel* info;
  };
  thread_local std::map<const KernelDef*, Seen> seen;
  auto hit = seen.find(&kernel);
  if (hit != seen.end() && hit->second.module->generation() == hit->second.generation) return *hit->second.info;
  Tangents& all = tangents();
  std::lock_guard<std::mutex> lock(all.mutex);
  const ModuleDef& primal = module(kernel.module());
  const uint64_t generation = primal.generation();
  TangentModule& t = synced(all, kernel.module());
  auto it = t.kernels.find(kernel.name());
  if (it == t.kernels.end())
    throw Error(ErrorKind::User, "tangent of kernel '" + kernel.name() + "': the kernel is not in its module '" +
                                     kernel.module() + "' (was it destroyed?)");
  if (!it->second->tangent) throw Error(ErrorKind::User, it->second->error);  // names the kernel and the line
  seen[&kernel] = Seen{&primal, generation, &it->second->info};
  return it->second->info;
}

const KernelDef& tangent_of(const KernelDef& kernel) { return *detail::tangent_kernel(kernel).kernel; }

const KernelDef* find_kernel_or_tangent(std::string_view name) {
  // The primal first: a registered tangent kernel may be one its module's next sync replaces,
  // and tangent_of syncs.
  const std::string_view suffix = ".tangent";
  if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
    if (const KernelDef* primal = find_kernel_or_tangent(name.substr(0, name.size() - suffix.size())))
      return &tangent_of(*primal);
  return Registry::get().find_kernel(name);
}

}  // namespace kjit
