// The fake CUDA driver's objects (contexts, memory, streams, modules, graphs) and its records.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cuda/driver_types.hpp"
#include "fake_cuda_control.hpp"
#include "fake_image.hpp"

// Every entry point of kjit's list, with C linkage and exported under the versioned name the
// dlsym fallback asks for (cuMemAlloc as cuMemAlloc_v2): the definitions must match kjit's
// table exactly, or the fake does not build.
extern "C" {
#define KJIT_CUDA_SYMBOL(name, version, exported, parameters) CUresult CUDAAPI name parameters __asm__(#exported);
#include "cuda/driver_symbols.def"
#undef KJIT_CUDA_SYMBOL
CUresult CUDAAPI cuGetProcAddress(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*)
    __asm__("cuGetProcAddress_v2");
}

namespace kjit::fake_cuda {

/// Every fake entry point starts so: records the call (by exported name), then returns the
/// failure a test injected for it, if any.
#define FAKE_ENTER()                                                                  \
  std::unique_lock<std::recursive_mutex> lock;                                        \
  State& s = ::kjit::fake_cuda::enter(lock, __func__);                                \
  if (CUresult injected = take_injected_failure(s, exported_name(__func__))) return injected

struct FakeDevice {
  int major = 8, minor = 0;
  std::string name;
};

struct Context {
  int device = 0;
  int refcount = 0;
};

struct Module;
struct Function {
  Module* module = nullptr;
  std::string name;
  FunctionInfo info;
  int max_dynamic_shared = 48 * 1024;
};

struct Module {
  int device = 0;
  ImageInfo info;
  std::map<std::string, std::unique_ptr<Function>> functions;
  std::map<std::string, std::vector<unsigned char>> globals;  ///< storage ("device memory")
};

/// Work recorded into a graph: a launch to record again, or a copy/memset to perform.
struct GraphNode {
  bool is_launch = false;
  LaunchRecord launch;
  uintptr_t dst = 0, src = 0;
  size_t bytes = 0;
  int memset_value = -1;  ///< >= 0: a memset
};

struct Graph {
  int device = 0;
  std::vector<GraphNode> nodes;
};

struct GraphExec {
  int device = 0;
  std::vector<GraphNode> nodes;
  const Graph* source = nullptr;  ///< what it was instantiated from (node updates name its nodes)
};

struct Stream {
  int device = 0;
  bool capturing = false;
  std::thread::id capture_thread;
  std::unique_ptr<Graph> graph;
};

struct Event {
  int device = 0;
};

/// Everything the fake knows, behind one lock (the fake favours simplicity over speed).
struct State {
  std::recursive_mutex mutex;
  // configuration
  std::vector<FakeDevice> devices;
  int driver_version = 13000;
  CUresult init_result = CUDA_SUCCESS;
  bool no_proc_address = false;
  bool initialised = false;
  // objects (never freed while the state lives, so stale handles stay harmless)
  std::vector<std::unique_ptr<Context>> contexts;  ///< one primary context per device
  std::map<uintptr_t, std::pair<int, size_t>> allocations;  ///< address -> (device, bytes)
  std::set<Stream*> streams;
  std::set<Event*> events;
  std::vector<std::unique_ptr<Module>> modules;
  std::set<Graph*> graphs;
  std::set<GraphExec*> graph_execs;
  // records
  std::vector<CallRecord> calls;
  std::vector<LaunchRecord> launches;
  std::vector<CopyRecord> copies;
  std::vector<ModuleRecord> module_loads;
  std::vector<ProcRequest> proc_requests;
  std::vector<uintptr_t> destroyed_execs;
  // injected failures: entry point -> the result its next call returns
  std::map<std::string, CUresult> injected;
  // function name -> the max threads per block it reports (limit_max_threads)
  std::map<std::string, int> max_threads;
  // called with each direct launch (set_launch_hook): stands in for the kernel running
  std::function<void(const LaunchRecord&)> launch_hook;
};

State& state();
/// The failure injected for the next call of `name` (CUDA_SUCCESS when none), now used up.
CUresult take_injected_failure(State& s, const char* name);
/// The calling thread's current context (nullptr when none).
Context* current_context();
/// Records a call of entry point `function` (its C++ name, __func__) under the name the driver
/// exports it as (cuMemAlloc_v2); returns the state, locked by `lock`.
State& enter(std::unique_lock<std::recursive_mutex>& lock, const char* function);
/// The exported name of entry point `function` (cuMemAlloc -> cuMemAlloc_v2).
const char* exported_name(const char* function);
/// Whether `stream` (or, for nullptr/default handles, any stream this thread captures) is
/// being captured by this thread: synchronous work then is illegal, as in the real driver.
bool this_thread_captures(State& s);
/// The fake stream behind a handle; nullptr for the legacy and per-thread default streams.
Stream* stream_of(State& s, CUstream handle, bool* valid);
/// Whether [ptr, ptr + bytes) lies in one live allocation or module global.
bool is_device_range(State& s, uintptr_t ptr, size_t bytes);
/// Makes a graph node from work on a capturing stream.
void add_node(Stream* st, GraphNode node);
/// Records a copy or memset node's work.
void record_copy(State& s, const GraphNode& node, int device, uintptr_t stream, LaunchOrigin origin);

}  // namespace kjit::fake_cuda
