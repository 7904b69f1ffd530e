// What tests see of the fake CUDA driver: its configuration and everything it recorded.
//
// The fake is a shared library exporting the driver entry points kjit uses. Tests link it and
// point KJIT_CUDA_DRIVER at the same file, so kjit's dlopen finds this very copy and the
// functions below read what kjit did to it. Configuration (read by reset()):
//   KJIT_FAKE_CUDA_DEVICES         compute capabilities, "8.0,9.0" (default); "" = no device
//   KJIT_FAKE_CUDA_DRIVER_VERSION  what cuDriverGetVersion reports (default 13000)
//   KJIT_FAKE_CUDA_INIT_RESULT     the CUresult cuInit returns (default 0)
//   KJIT_FAKE_CUDA_NO_PROC_ADDRESS "1": cuGetProcAddress fails, so kjit must fall back to dlsym
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kjit::fake_cuda {

/// How a recorded launch happened.
enum class LaunchOrigin { Direct, Captured, Replayed };

/// One kernel launch as the fake driver saw it.
struct LaunchRecord {
  int device = -1;
  std::string function;
  unsigned grid[3] = {0, 0, 0};
  unsigned block[3] = {0, 0, 0};
  unsigned shared_bytes = 0;
  uintptr_t stream = 0;
  LaunchOrigin origin = LaunchOrigin::Direct;
  /// Each parameter's bytes, read through kernelParams with the sizes the image declares.
  std::vector<std::vector<unsigned char>> params;
};

/// One copy or memset on a stream: performed at once (Direct), recorded into a graph by a
/// capture (Captured), or performed by a graph launch (Replayed). Synchronous copies are not
/// recorded here (see calls()).
struct CopyRecord {
  int device = -1;
  uintptr_t dst = 0, src = 0;  ///< src is 0 for a memset
  size_t bytes = 0;
  bool memset = false;
  uintptr_t stream = 0;
  LaunchOrigin origin = LaunchOrigin::Direct;
};

/// One module load.
struct ModuleRecord {
  int device = -1;
  bool cubin = false;
  int arch = 0;
  std::vector<char> image;
};

/// One cuGetProcAddress request.
struct ProcRequest {
  std::string name;
  int version = 0;
  bool found = false;
};

/// One driver call: its exported name and the device whose context was current (-1: none).
struct CallRecord {
  std::string name;
  int device = -1;
};

/// Re-reads the configuration and forgets all state and records. Pair it with
/// kjit::cuda::detail::reset_for_testing() so that kjit opens the driver afresh.
void reset();
/// Forgets the records and injected failures, keeping state (contexts, memory, modules).
void clear_records();
/// Makes the next call of entry point `name` ("cuGraphInstantiateWithFlags") return `result`
/// (a CUresult) without doing anything; later calls behave normally again.
void fail_next_call(const std::string& name, int result);

/// Makes every function named `name` (an entry point) report at most `threads` threads per
/// block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, enforced by cuLaunchKernel), as registers
/// or launch bounds would: functions looked up later and those already looked up. Kept until
/// reset(); clear_records() keeps it.
void limit_max_threads(const std::string& name, int threads);

/// Calls `hook` with every direct launch, inside cuLaunchKernel, as the kernel would run: it
/// may write device memory the launch's parameters point to (a status slot, say). Null
/// removes it; reset() does too.
void set_launch_hook(std::function<void(const LaunchRecord&)> hook);

std::vector<CallRecord> calls();
std::vector<LaunchRecord> launches();
std::vector<CopyRecord> copies();
std::vector<ModuleRecord> module_loads();
std::vector<ProcRequest> proc_requests();
/// Number of primary-context retains minus releases of `device`.
int context_refcount(int device);
/// Live device allocations (bytes) of `device`.
size_t allocated_bytes(int device);
/// Graph executables instantiated and not yet destroyed.
int live_graph_execs();
/// Graph executables destroyed so far, in order (their handles).
std::vector<uintptr_t> destroyed_graph_execs();

/// Reads a module global (e.g. kjit_status) of the most recent module on `device` that has it.
bool read_global(int device, const std::string& name, void* out, size_t bytes);
/// Writes it (to simulate a kernel reporting a status).
bool write_global(int device, const std::string& name, const void* in, size_t bytes);

}  // namespace kjit::fake_cuda
