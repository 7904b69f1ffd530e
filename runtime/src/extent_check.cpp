// Launch checks from the kernel's IR: unguarded extents, empty arrays and views without data.
#include "extent_check.hpp"

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kjit/ir/extent_facts.hpp"
#include "kjit/kernel.hpp"

namespace kjit::detail {

namespace {

std::string shape_str(const kj::launch_bounds_t& b) {
  std::string s = "{";
  for (int d = 0; d < b.ndim; ++d) s += (d ? ", " : "") + std::to_string(b.shape[d]);
  return s + "}";
}

void check_one(const KernelDef& kernel, const kj::launch_bounds_t& bounds, const std::vector<LaunchArg>& args,
               const ir::ExtentFacts& facts, const char* role) {
  const auto& params = kernel.params();
  for (size_t p = 0; p < args.size() && p < params.size(); ++p) {
    if (!args[p].is_array() || !facts.accessed[p]) continue;
    const NdArray& a = args[p].array();
    if (a.size() == 0)
      throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "': " + role + " '" + params[p].name +
                                       "' is empty but the launch " + shape_str(bounds) + " has " +
                                       std::to_string(bounds.size) + " threads and the kernel reads or writes its elements");
    if (!a.data())
      throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "': " + role + " '" + params[p].name +
                                       "' has no data (a view of a null pointer) but " + std::to_string(a.size()) +
                                       " elements, which the kernel reads or writes");
  }
  for (const ir::ExtentFact& f : facts.unguarded) {
    if (size_t(f.param) >= args.size() || !args[size_t(f.param)].is_array()) continue;
    const NdArray& a = args[size_t(f.param)].array();
    if (f.dim >= a.ndim()) continue;
    const int64_t threads = f.launch_dim < 0 ? bounds.size : bounds.shape[f.launch_dim];
    const int64_t need = f.needed(threads), have = a.shape(f.dim);
    if (have >= need) continue;
    throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "' over " + shape_str(bounds) + ": " + role +
                                     " '" + params[size_t(f.param)].name + "' has extent " + std::to_string(have) +
                                     " in dimension " + std::to_string(f.dim) + ", but the kernel indexes it at " +
                                     f.index_str() + " (" + f.loc.short_str() + ") with no guard, which needs " +
                                     std::to_string(need));
  }
}

/// The extent facts of `kernel`'s IR, computed once per kernel (tracing it first; a tracing
/// error is thrown as from KernelDef::ir()). Lock-free after the first call per thread and
/// kernel, so launches can check every call.
const ir::ExtentFacts& kernel_extent_facts(const KernelDef& kernel) {
  // Keyed by the definition and its traced IR: a kernel made at run time and freed may leave
  // its address to another, whose IR is then a different object.
  using Key = std::pair<const KernelDef*, const ir::Function*>;
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<const void*>()(k.first) * 31 + std::hash<const void*>()(k.second); }
  };
  const ir::Function& fn = kernel.ir();
  const Key key{&kernel, &fn};
  thread_local std::unordered_map<Key, const ir::ExtentFacts*, KeyHash> mine;
  if (auto it = mine.find(key); it != mine.end()) return *it->second;
  // Facts are kept for good (a map never moves its nodes), as the registry keeps definitions.
  static std::mutex mutex;
  static std::map<Key, ir::ExtentFacts> all;
  const ir::ExtentFacts* facts;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = all.find(key);
    if (it == all.end()) it = all.emplace(key, ir::extent_facts(fn)).first;
    facts = &it->second;
  }
  mine.emplace(key, facts);
  return *facts;
}

}  // namespace

void check_extents(const KernelDef& kernel, const kj::launch_bounds_t& bounds, const std::vector<LaunchArg>& args,
                   const std::vector<LaunchArg>* adj_args) {
  if (bounds.size == 0) return;
  const ir::ExtentFacts& facts = kernel_extent_facts(kernel);
  check_one(kernel, bounds, args, facts, "array");
  if (adj_args) check_one(kernel, bounds, *adj_args, facts, "adjoint array");
}

}  // namespace kjit::detail
