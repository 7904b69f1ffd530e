// The fake CUDA driver's module, function, launch and graph entry points. Launches do not run
// anything: they record the configuration and the exact parameter bytes, read with the layout
// the image declares (PTX .param list or the cubin's .nv.info).
#include <algorithm>
#include <cstring>

#include "fake_state.hpp"

using namespace kjit::fake_cuda;

#define FAKE_REQUIRE_CONTEXT()                           \
  if (!s.initialised) return CUDA_ERROR_NOT_INITIALIZED; \
  Context* ctx = current_context();                      \
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;           \
  (void)ctx

namespace {

Module* module_of(State& s, CUmodule handle) {
  for (auto& m : s.modules)
    if (m.get() == reinterpret_cast<Module*>(handle)) return m.get();
  return nullptr;
}

Function* function_of(State& s, CUfunction handle) {
  for (auto& m : s.modules)
    for (auto& [name, f] : m->functions)
      if (f.get() == reinterpret_cast<Function*>(handle)) return f.get();
  return nullptr;
}

void replay(State& s, const std::vector<GraphNode>& nodes, int device, uintptr_t stream) {
  for (const GraphNode& n : nodes) {
    if (n.is_launch) {
      LaunchRecord r = n.launch;
      r.origin = LaunchOrigin::Replayed;
      r.stream = stream;
      s.launches.push_back(r);
      continue;
    }
    record_copy(s, n, device, stream, LaunchOrigin::Replayed);
    if (n.memset_value >= 0) {
      std::memset(reinterpret_cast<void*>(n.dst), n.memset_value, n.bytes);
    } else {
      std::memmove(reinterpret_cast<void*>(n.dst), reinterpret_cast<const void*>(n.src), n.bytes);
    }
  }
}

/// The live graph holding node `handle` (a pointer into its node list) and the node's index.
Graph* graph_of_node(State& s, CUgraphNode handle, size_t* index) {
  auto* n = reinterpret_cast<const GraphNode*>(handle);
  for (Graph* g : s.graphs)
    if (!g->nodes.empty() && n >= g->nodes.data() && n < g->nodes.data() + g->nodes.size()) {
      *index = size_t(n - g->nodes.data());
      return g;
    }
  return nullptr;
}

}  // namespace

// --- modules ---------------------------------------------------------------------------------

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int num_options,
                                    CUjit_option* options, void** values) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  if (this_thread_captures(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  auto m = std::make_unique<Module>();
  m->device = ctx->device;
  std::string error;
  if (!parse_image(image, m->info, error)) return CUDA_ERROR_INVALID_IMAGE;
  const FakeDevice& dev = s.devices[size_t(ctx->device)];
  int arch = dev.major * 10 + dev.minor;
  // As the real driver: a cubin runs only on its own architecture (within a major release, a
  // newer minor also runs it), PTX is JIT-compiled for any device at least as new as its target.
  if (m->info.cubin && (m->info.arch / 10 != arch / 10 || m->info.arch > arch))
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  if (!m->info.cubin && m->info.arch > arch) {
    for (unsigned i = 0; i < num_options; ++i)
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
        std::strcpy(static_cast<char*>(values[i]),
                    "ptxas fatal: SM version specified by .target is higher than default");
    return CUDA_ERROR_INVALID_PTX;
  }
  size_t size = m->info.cubin ? 0 : std::strlen(static_cast<const char*>(image)) + 1;
  if (m->info.cubin) {
    // An ELF image's size: the end of its section header table.
    uint64_t shoff = 0;
    uint16_t shentsize = 0, shnum = 0;
    std::memcpy(&shoff, static_cast<const char*>(image) + 0x28, 8);
    std::memcpy(&shentsize, static_cast<const char*>(image) + 0x3a, 2);
    std::memcpy(&shnum, static_cast<const char*>(image) + 0x3c, 2);
    size = size_t(shoff + uint64_t(shentsize) * shnum);
  }
  const char* bytes = static_cast<const char*>(image);
  s.module_loads.push_back({ctx->device, m->info.cubin, m->info.arch,
                            std::vector<char>(bytes, bytes + size)});
  for (auto& [name, bytes_of] : m->info.globals)
    m->globals[name].assign(bytes_of ? bytes_of : 1, 0);
  *module = reinterpret_cast<CUmodule>(m.get());
  s.modules.push_back(std::move(m));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  Module* m = module_of(s, module);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  auto info = m->info.functions.find(name);
  if (info == m->info.functions.end()) return CUDA_ERROR_NOT_FOUND;
  auto& f = m->functions[name];
  if (!f) {
    f = std::make_unique<Function>();
    f->module = m;
    f->name = name;
    f->info = info->second;
    if (auto limit = s.max_threads.find(name); limit != s.max_threads.end())
      f->info.max_threads = limit->second;
  }
  *fn = reinterpret_cast<CUfunction>(f.get());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr* ptr, size_t* bytes, CUmodule module,
                                   const char* name) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  Module* m = module_of(s, module);
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  auto it = m->globals.find(name);
  if (it == m->globals.end()) return CUDA_ERROR_NOT_FOUND;
  if (ptr) *ptr = reinterpret_cast<CUdeviceptr>(it->second.data());
  if (bytes) *bytes = m->info.globals[name];
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attr, CUfunction fn) {
  FAKE_ENTER();
  Function* f = function_of(s, fn);
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = f->info.max_threads; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = f->max_dynamic_shared; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction fn, CUfunction_attribute attr, int value) {
  FAKE_ENTER();
  Function* f = function_of(s, fn);
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  if (attr != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value > 99 * 1024)
    return CUDA_ERROR_INVALID_VALUE;
  f->max_dynamic_shared = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction fn) {
  FAKE_ENTER();
  Function* f = function_of(s, fn);
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  *name = f->name.c_str();
  return CUDA_SUCCESS;
}

// --- launches --------------------------------------------------------------------------------

CUresult CUDAAPI cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                unsigned by, unsigned bz, unsigned shared_bytes, CUstream stream,
                                void** params, void** extra) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  Function* f = function_of(s, fn);
  if (!f) return CUDA_ERROR_INVALID_HANDLE;
  // A function belongs to the context its module was loaded in.
  if (f->module->device != ctx->device) return CUDA_ERROR_INVALID_HANDLE;
  bool valid = false;
  Stream* st = stream_of(s, stream, &valid);
  if (!valid || (st && st->device != ctx->device)) return CUDA_ERROR_INVALID_HANDLE;
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || bx * by * bz > 1024 ||
      gx > 0x7fffffffu || extra)
    return CUDA_ERROR_INVALID_VALUE;
  if (int(bx * by * bz) > f->info.max_threads) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  if (int(shared_bytes) > f->max_dynamic_shared) return CUDA_ERROR_INVALID_VALUE;
  if (!f->info.params.empty() && !params) return CUDA_ERROR_INVALID_VALUE;
  LaunchRecord r;
  r.device = ctx->device;
  r.function = f->name;
  r.grid[0] = gx, r.grid[1] = gy, r.grid[2] = gz;
  r.block[0] = bx, r.block[1] = by, r.block[2] = bz;
  r.shared_bytes = shared_bytes;
  r.stream = reinterpret_cast<uintptr_t>(stream);
  for (size_t i = 0; i < f->info.params.size(); ++i) {
    const auto* p = static_cast<const unsigned char*>(params[i]);
    r.params.emplace_back(p, p + f->info.params[i].size);
  }
  if (st && st->capturing) {
    if (st->capture_thread != std::this_thread::get_id()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    r.origin = LaunchOrigin::Captured;
    GraphNode n;
    n.is_launch = true;
    n.launch = r;
    add_node(st, n);
  }
  s.launches.push_back(r);
  if (r.origin == LaunchOrigin::Direct && s.launch_hook) {
    // A copy: the hook may replace itself while it runs.
    auto hook = s.launch_hook;
    hook(r);
  }
  return CUDA_SUCCESS;
}

// --- graphs ----------------------------------------------------------------------------------

CUresult CUDAAPI cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode mode) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  bool valid = false;
  Stream* st = stream_of(s, stream, &valid);
  if (!valid) return CUDA_ERROR_INVALID_HANDLE;
  if (!st) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // default streams cannot be captured
  if (st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = true;
  st->capture_thread = std::this_thread::get_id();
  st->graph = std::make_unique<Graph>();
  st->graph->device = st->device;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream stream, CUgraph* graph) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  bool valid = false;
  Stream* st = stream_of(s, stream, &valid);
  if (!valid || !st) return CUDA_ERROR_INVALID_HANDLE;
  if (!st->capturing) return CUDA_ERROR_ILLEGAL_STATE;
  st->capturing = false;
  Graph* g = st->graph.release();
  s.graphs.insert(g);
  *graph = reinterpret_cast<CUgraph>(g);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  FAKE_ENTER();
  bool valid = false;
  Stream* st = stream_of(s, stream, &valid);
  if (!valid) return CUDA_ERROR_INVALID_HANDLE;
  *status = st && st->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph,
                                             unsigned long long flags) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  auto* g = reinterpret_cast<Graph*>(graph);
  if (!s.graphs.count(g)) return CUDA_ERROR_INVALID_HANDLE;
  auto* e = new GraphExec{g->device, g->nodes, g};
  s.graph_execs.insert(e);
  *exec = reinterpret_cast<CUgraphExec>(e);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  auto* e = reinterpret_cast<GraphExec*>(exec);
  if (!s.graph_execs.count(e) || e->device != ctx->device) return CUDA_ERROR_INVALID_HANDLE;
  bool valid = false;
  Stream* st = stream_of(s, stream, &valid);
  if (!valid || (st && st->device != ctx->device)) return CUDA_ERROR_INVALID_HANDLE;
  replay(s, e->nodes, e->device, reinterpret_cast<uintptr_t>(stream));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec exec) {
  FAKE_ENTER();
  auto* e = reinterpret_cast<GraphExec*>(exec);
  if (!s.graph_execs.erase(e)) return CUDA_ERROR_INVALID_HANDLE;
  // Not freed: a later executable must never reuse the handle, so tests can tell them apart.
  s.destroyed_execs.push_back(reinterpret_cast<uintptr_t>(exec));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph graph) {
  FAKE_ENTER();
  auto* g = reinterpret_cast<Graph*>(graph);
  if (!s.graphs.erase(g)) return CUDA_ERROR_INVALID_HANDLE;
  delete g;
  return CUDA_SUCCESS;
}

// Node handles are pointers into a graph's node list, which never changes after the capture.
// The fake keeps only what kjit asks of nodes: their type, a copy's parameters, and updating a
// copy in an executable instantiated from the graph.

CUresult CUDAAPI cuGraphGetNodes(CUgraph graph, CUgraphNode* nodes, size_t* count) {
  FAKE_ENTER();
  auto* g = reinterpret_cast<Graph*>(graph);
  if (!s.graphs.count(g) || !count) return CUDA_ERROR_INVALID_VALUE;
  if (nodes) {
    for (size_t i = 0; i < *count; ++i)
      nodes[i] = i < g->nodes.size() ? reinterpret_cast<CUgraphNode>(&g->nodes[i]) : nullptr;
    *count = std::min(*count, g->nodes.size());
  } else {
    *count = g->nodes.size();
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType* type) {
  FAKE_ENTER();
  size_t i = 0;
  Graph* g = graph_of_node(s, node, &i);
  if (!g) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode& n = g->nodes[i];
  *type = n.is_launch ? CU_GRAPH_NODE_TYPE_KERNEL
                      : n.memset_value >= 0 ? CU_GRAPH_NODE_TYPE_MEMSET : CU_GRAPH_NODE_TYPE_MEMCPY;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode node, CUDA_MEMCPY3D* params) {
  FAKE_ENTER();
  size_t i = 0;
  Graph* g = graph_of_node(s, node, &i);
  if (!g || !params) return CUDA_ERROR_INVALID_VALUE;
  const GraphNode& n = g->nodes[i];
  if (n.is_launch || n.memset_value >= 0) return CUDA_ERROR_INVALID_VALUE;
  *params = CUDA_MEMCPY3D{};
  params->srcMemoryType = CU_MEMORYTYPE_DEVICE;
  params->srcDevice = n.src;
  params->dstMemoryType = CU_MEMORYTYPE_DEVICE;
  params->dstDevice = n.dst;
  params->WidthInBytes = n.bytes;
  params->Height = 1;
  params->Depth = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphExecMemcpyNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                                const CUDA_MEMCPY3D* params, CUcontext ctx) {
  FAKE_ENTER();
  auto* e = reinterpret_cast<GraphExec*>(exec);
  if (!s.graph_execs.count(e)) return CUDA_ERROR_INVALID_HANDLE;
  size_t i = 0;
  Graph* g = graph_of_node(s, node, &i);
  // As the real driver: the node must come from the graph the executable was instantiated
  // from, stay a one-dimensional device copy of a non-zero size, and run in its context.
  if (!g || g != e->source || !params || !ctx) return CUDA_ERROR_INVALID_VALUE;
  if (reinterpret_cast<Context*>(ctx)->device != e->device) return CUDA_ERROR_INVALID_CONTEXT;
  GraphNode& n = e->nodes[i];
  if (n.is_launch || n.memset_value >= 0 || params->Height != 1 || params->Depth != 1 ||
      params->WidthInBytes == 0 || params->srcMemoryType != CU_MEMORYTYPE_DEVICE ||
      params->dstMemoryType != CU_MEMORYTYPE_DEVICE ||
      !is_device_range(s, params->dstDevice, params->WidthInBytes) ||
      !is_device_range(s, params->srcDevice, params->WidthInBytes))
    return CUDA_ERROR_INVALID_VALUE;
  n.dst = params->dstDevice;
  n.src = params->srcDevice;
  n.bytes = params->WidthInBytes;
  return CUDA_SUCCESS;
}
