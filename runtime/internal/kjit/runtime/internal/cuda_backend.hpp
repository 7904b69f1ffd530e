// The CUDA backend as the rest of the runtime sees it: devices, memory, streams, modules and
// launches over the CUDA driver API, which is opened at run time (never linked).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kjit/compiler/target.hpp"

namespace kjit::cuda {

/// Threads per block when neither the launch, the kernel nor its module asks for another size.
constexpr int kDefaultBlockDim = 256;

/// "" when a CUDA driver and at least one device are usable; otherwise why not, in words
/// ("no CUDA driver found (libcuda.so.1: ...)", "the CUDA driver reports no device").
const std::string& unavailable_reason();
/// Number of usable devices (0 when unavailable).
int device_count();

/// Facts about one device.
struct DeviceProperties {
  std::string name;
  int major = 0, minor = 0;   ///< compute capability
  int sm_count = 0;
  size_t total_memory = 0;
  int max_threads_per_block = 0;
  int max_blocks_per_sm = 0;  ///< resident blocks per multiprocessor
  int max_threads_per_sm = 0;  ///< resident threads per multiprocessor
  size_t max_shared_bytes_per_block = 0;  ///< dynamic + static shared memory, opted in
};
/// Properties of device `ordinal`; a Driver error for ordinals out of range.
const DeviceProperties& properties(int ordinal);
/// What to compile for device `ordinal`: CUBIN for its exact architecture when NVRTC
/// supports it, else PTX for the highest architecture NVRTC supports.
compiler::Target target_for(int ordinal);

/// Direction of a copy.
enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

/// Device memory of `bytes` on device `ordinal`.
void* alloc(int ordinal, size_t bytes);
void free(int ordinal, void* ptr) noexcept;
/// Copies `bytes`; asynchronous on `stream` when it is not null (host memory should then be
/// pinned for real overlap), else synchronous.
void copy(int ordinal, void* dst, const void* src, size_t bytes, CopyKind kind, void* stream);
/// Sets `bytes` to zero, on `stream` when not null.
void zero(int ordinal, void* ptr, size_t bytes, void* stream);

void* stream_create(int ordinal);
void stream_destroy(int ordinal, void* stream) noexcept;
void stream_synchronize(int ordinal, void* stream);

/// Loads a cubin or NUL-terminated PTX image on device `ordinal` (a CUmodule).
void* module_load(int ordinal, const std::vector<char>& image);
/// The CUfunction `name` of a loaded module; a Driver error when missing.
void* module_function(int ordinal, void* module, const std::string& name);
/// The device address of global `name` (nullptr when the module has none).
void* module_global(int ordinal, void* module, const std::string& name, size_t* bytes);
/// Largest block size the function can be launched with.
int function_max_threads(int ordinal, void* function);

/// Launches `function` over `size` flat indices with `block_dim` threads per block and a
/// grid capped at what the device keeps resident (the kernels loop over the rest), with
/// kernel parameters `params` (cuLaunchKernel's array of pointers) on `stream` (nullptr: the
/// calling thread's default stream). `block_dim` 0 means 256. A block size or shared memory
/// size the kernel cannot run with is a User error naming the kernel and the limit.
void launch(int ordinal, void* function, int64_t size, int block_dim, unsigned shared_bytes,
            void* stream, void** params);
/// The grid `launch` uses: enough blocks to cover `size`, capped at the blocks `props`' device
/// keeps resident at once (SM count × resident blocks of `block_dim` threads per SM).
unsigned grid_size(const DeviceProperties& props, int64_t size, int block_dim);

/// Graph capture (see kjit/runtime/graph.hpp for the public API).
/// Starts capturing `stream` (a created stream, not a default one) in thread-local mode.
void capture_begin(int ordinal, void* stream);
/// Ends the capture of `stream` and instantiates it; returns the CUgraphExec.
void* capture_end(int ordinal, void* stream);
/// Ends a capture that failed part-way and drops what was captured; never throws.
void capture_abort(int ordinal, void* stream) noexcept;
/// Replays an instantiated graph on `stream` (nullptr: the thread's default stream).
void graph_launch(int ordinal, void* graph_exec, void* stream);
void graph_destroy(int ordinal, void* graph_exec) noexcept;
/// Whether `stream` is being captured right now by anyone (kjit or the application): work
/// put on it joins that capture, and a second capture cannot begin on it.
bool stream_capturing(int ordinal, void* stream);

/// A device-to-device copy issued on a stream during its capture.
struct CapturedCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
};
/// Ends the capture of `stream` like capture_end, but keeps the captured graph (`*graph`,
/// released with graph_release after the executable) and finds the memcpy node of each of
/// `copies` in it (`nodes`, in the same order), so that graph_set_copy can re-point them
/// between replays. A copy without its node is an Internal error.
void* capture_end_with_copies(int ordinal, void* stream, const std::vector<CapturedCopy>& copies,
                              void** graph, std::vector<void*>* nodes);
/// Makes memcpy node `node` of the executable `graph_exec` copy from `src` to `dst` from the
/// next launch on (the size stays that of the capture). Launches already queued keep the old
/// addresses; the caller serialises this with its own launches of `graph_exec`.
void graph_set_copy(int ordinal, void* graph_exec, void* node, void* dst, const void* src);
/// Destroys a graph kept by capture_end_with_copies.
void graph_release(int ordinal, void* graph) noexcept;
/// Streams being captured right now, process-wide. Modules must not be unloaded while it is
/// above zero (kjit's module tables never unload; anything that does must check this).
int capturing_count();
/// Whether the calling thread is capturing a stream right now: synchronous device work (a
/// blocking copy, a module load) would break the capture, so callers skip or refuse it.
bool this_thread_capturing();
/// Module loads refused so far on this thread because it was capturing (module_load's User
/// error). A caller that captures work it did not write compares it before and after, to tell
/// "a module was not loaded yet" from other failures, and can then run the work eagerly once.
uint64_t refused_module_loads();

}  // namespace kjit::cuda
