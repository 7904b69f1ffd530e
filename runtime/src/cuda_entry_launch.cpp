// CUDA launches of a kernel's entry points: block size choice, the limits read at load, and the
// checks made before every launch.
#include "kjit/runtime/internal/cuda_entry_launch.hpp"

#include "kjit/runtime/internal/cuda_backend.hpp"

namespace kjit::detail {

namespace {

const char* which(bool adjoint) { return adjoint ? "adjoint" : "forward"; }

std::string launch_of(const KernelDef& kernel, const LoadedModule& m) {
  return "launch of kernel '" + kernel.name() + "' on " + m.device.name() + ": ";
}

}  // namespace

CudaEntryFacts cuda_entry_facts(const LoadedModule& m, const compiler::KernelDescription& kernel,
                                const std::string& entry_name, bool adjoint, void* function) {
  CudaEntryFacts f;
  f.max_threads = cuda::function_max_threads(m.device.ordinal(), function);
  f.dynamic_shared_bytes = adjoint ? kernel.dynamic_shared_adjoint : kernel.dynamic_shared_forward;
  const nlohmann::json& resources = m.artifact.meta.value("resources", nlohmann::json());
  if (resources.is_object() && resources.contains(entry_name)) {
    const nlohmann::json& r = resources[entry_name];
    if (r.is_object() && r.value("shared_bytes", nlohmann::json()).is_number_integer() &&
        r["shared_bytes"].get<int64_t>() > 0)
      f.static_shared_bytes = unsigned(r["shared_bytes"].get<int64_t>());
  }
  return f;
}

BlockChoice cuda_block_dim(const KernelDef& kernel, const LoadedModule& m, int launch_block) {
  if (launch_block != 0) return {launch_block, "LaunchOptions::block_dim"};
  if (int own = kernel.block_dim()) return {own, "the kernel's own block_dim"};
  if (m.options.block_dim != 0)
    return {m.options.block_dim, "ModuleOptions::block_dim of its module"};
  return {cuda::kDefaultBlockDim, "the default"};
}

void launch_cuda_entry(const KernelEntry& e, const KernelDef& kernel, bool adjoint, int64_t size,
                       int launch_block, void* stream, void** params) {
  const LoadedModule& m = *e.module;
  void* fn = adjoint ? e.adjoint : e.forward;
  KJIT_CHECK(fn != nullptr, "kernel " + kernel.name() + " has no " + which(adjoint) + " entry point");
  const CudaEntryFacts& f = adjoint ? e.adjoint_cuda : e.forward_cuda;
  const BlockChoice block = cuda_block_dim(kernel, m, launch_block);
  if (block.threads < 1 || (f.max_threads > 0 && block.threads > f.max_threads)) {
    const std::string range = "use 1 to " + std::to_string(f.max_threads) + " threads per block";
    if (block.threads < 1)
      throw Error(ErrorKind::User, launch_of(kernel, m) + "block_dim " + std::to_string(block.threads) +
                                       " (from " + block.source + ") is not a block size: " + range);
    throw Error(ErrorKind::User,
                launch_of(kernel, m) + "block_dim " + std::to_string(block.threads) + " (from " +
                    block.source + ") is more than the " + std::to_string(f.max_threads) +
                    " threads per block its " + which(adjoint) +
                    " entry point can run (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its register "
                    "use or launch bounds limit it); " + range + ", a multiple of 32 runs best");
  }
  if (f.dynamic_shared_bytes || f.static_shared_bytes) {
    const size_t limit = cuda::properties(m.device.ordinal()).max_shared_bytes_per_block;
    if (size_t(f.dynamic_shared_bytes) + f.static_shared_bytes > limit)
      throw Error(ErrorKind::User,
                  launch_of(kernel, m) + "its " + which(adjoint) + " entry point needs " +
                      std::to_string(f.dynamic_shared_bytes) +
                      " bytes of dynamic shared memory (meta.json) plus " +
                      std::to_string(f.static_shared_bytes) + " static, more than the " +
                      std::to_string(limit) + " bytes a block can have on this device");
  }
  cuda::launch(m.device.ordinal(), fn, size, block.threads, f.dynamic_shared_bytes, stream, params);
}

}  // namespace kjit::detail
