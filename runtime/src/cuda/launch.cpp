// Kernel launches: grid and block sizes, shared memory, and launch failures explained.
#include <algorithm>

#include "cuda/driver_api.hpp"
#include "kjit/error.hpp"

namespace kjit::cuda {

namespace {

constexpr unsigned kStaticSharedLimit = 48 * 1024;  // larger sizes need an explicit opt-in

std::string function_name(CUfunction fn) {
  const char* name = nullptr;
  if (driver().api.cuFuncGetName(&name, fn) == CUDA_SUCCESS && name) return name;
  return "(unnamed)";
}

std::string where(const DeviceState& dev) {
  return "cuda:" + std::to_string(dev.ordinal) + " (" + dev.props.name + ")";
}

/// Turns a failed launch into the most useful error: a User error when the block or shared
/// memory size is one the kernel cannot run with, else the driver's error.
[[noreturn]] void launch_failed(CUresult r, const DeviceState& dev, CUfunction fn, int block_dim,
                                unsigned shared_bytes) {
  const DriverApi& a = driver().api;
  int max_threads = 0, static_shared = 0;
  if (a.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn) ==
          CUDA_SUCCESS &&
      max_threads > 0 && block_dim > max_threads)
    throw Error(ErrorKind::User,
                "kernel " + function_name(fn) + " cannot run " + std::to_string(block_dim) +
                    " threads per block on " + where(dev) + ": at most " +
                    std::to_string(max_threads) +
                    " (its register use or launch bounds limit it); pass a smaller block_dim "
                    "(LaunchOptions::block_dim, the kernel's set_block_dim or its module's "
                    "ModuleOptions::block_dim)");
  a.cuFuncGetAttribute(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
  if (size_t(shared_bytes) + size_t(static_shared) > dev.props.max_shared_bytes_per_block)
    throw Error(ErrorKind::User,
                "kernel " + function_name(fn) + " asks for " + std::to_string(shared_bytes) +
                    " bytes of dynamic shared memory on " + where(dev) + " (plus " +
                    std::to_string(static_shared) + " static), more than the " +
                    std::to_string(dev.props.max_shared_bytes_per_block) +
                    " a block can have");
  throw_driver_error(r, "cuLaunchKernel(" + function_name(fn) + ", block " +
                            std::to_string(block_dim) + ", " + std::to_string(shared_bytes) +
                            " shared bytes on " + where(dev) + ")");
}

}  // namespace

unsigned grid_size(const DeviceProperties& props, int64_t size, int block_dim) {
  if (size <= 0 || block_dim <= 0) return 0;
  int64_t needed = (size + block_dim - 1) / block_dim;
  // The kernels loop over their indices with a grid-sized stride, so a grid of what the device
  // keeps resident at once covers any size without a second wave of blocks.
  int per_sm = props.max_blocks_per_sm > 0 ? props.max_blocks_per_sm : 16;
  if (props.max_threads_per_sm > 0) per_sm = std::min(per_sm, props.max_threads_per_sm / block_dim);
  int64_t resident = int64_t(std::max(props.sm_count, 1)) * std::max(per_sm, 1);
  return unsigned(std::min(needed, resident));
}

void launch(int ordinal, void* function, int64_t size, int block_dim, unsigned shared_bytes,
            void* stream, void** params) {
  DeviceState& dev = device(ordinal);
  if (block_dim == 0) block_dim = kDefaultBlockDim;
  if (block_dim < 0 || block_dim > dev.props.max_threads_per_block)
    throw Error(ErrorKind::User, "block_dim " + std::to_string(block_dim) +
                                     " is not a valid block size on " + where(dev) +
                                     ": use 1 to " +
                                     std::to_string(dev.props.max_threads_per_block) +
                                     " threads (a multiple of 32 runs best)");
  if (void* captured = this_thread_capture_stream(); captured && captured != stream)
    throw Error(ErrorKind::User,
                "a kernel was launched on another stream while this thread captures a CUDA "
                "graph, so the graph would miss it: launch on the stream the captured work is "
                "given (LaunchOptions::stream)");
  if (size <= 0) return;  // no index to run: the kernel would do nothing
  unsigned grid = grid_size(dev.props, size, block_dim);
  ContextScope scope(dev);
  const DriverApi& a = driver().api;
  auto fn = static_cast<CUfunction>(function);
  if (shared_bytes > kStaticSharedLimit) {
    CUresult r = a.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      int(shared_bytes));
    if (r != CUDA_SUCCESS) launch_failed(r, dev, fn, block_dim, shared_bytes);
  }
  CUresult r = a.cuLaunchKernel(fn, grid, 1, 1, unsigned(block_dim), 1, 1, shared_bytes,
                                to_cu_stream(stream), params, nullptr);
  if (r != CUDA_SUCCESS) launch_failed(r, dev, fn, block_dim, shared_bytes);
}

}  // namespace kjit::cuda
