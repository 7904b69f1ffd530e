// CUDA launches of a kernel's entry points: the block size (launch, kernel, module, 256), and the
// function's thread limit and shared memory (read once at load) checked before each launch
// (internal; used by kjit::launch and the FFI's CUDA handler).
#pragma once

#include <nlohmann/json.hpp>

#include "kjit/runtime/internal/module_table.hpp"

namespace kjit::detail {

/// The launch facts of entry point `entry_name` (the CUfunction `function` of module `m` on a
/// CUDA device), from the driver and from `kernel`, the kernel's validated description.
CudaEntryFacts cuda_entry_facts(const LoadedModule& m, const compiler::KernelDescription& kernel,
                                const std::string& entry_name, bool adjoint, void* function);

/// A launch's block size and where it came from (for messages).
struct BlockChoice {
  int threads = 0;
  const char* source = "";  ///< "LaunchOptions::block_dim", "the kernel's block_dim", ...
};
/// The block size of a launch of `kernel` in module `m`: `launch_block` when not 0, else the
/// kernel's own (KernelDef::block_dim), else the module's ModuleOptions::block_dim, else 256.
BlockChoice cuda_block_dim(const KernelDef& kernel, const LoadedModule& m, int launch_block);

/// Launches the forward (or adjoint) entry point of `entry` on its module's CUDA device over
/// `size` flat indices with `params` on `stream`, with the block size cuda_block_dim chooses
/// and the entry's dynamic shared memory. First checks both, also while a stream is being
/// captured: a block size outside 1..the function's CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
/// or more shared memory than a block of the device has, is a User error naming the kernel,
/// the block size (or bytes) and the limit, and nothing is launched.
void launch_cuda_entry(const KernelEntry& entry, const KernelDef& kernel, bool adjoint,
                       int64_t size, int launch_block, void* stream, void** params);

}  // namespace kjit::detail
