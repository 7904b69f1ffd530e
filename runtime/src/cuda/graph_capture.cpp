// Stream capture into CUDA graphs, instantiation and replay, re-pointing captured copies, and the
// count of live captures.
#include <atomic>
#include <vector>

#include "cuda/driver_api.hpp"
#include "kjit/error.hpp"

namespace kjit::cuda {

namespace {
std::atomic<int> g_capturing{0};
thread_local void* t_capture_stream = nullptr;  // the stream this thread captures, if any

void capture_finished() {
  g_capturing.fetch_sub(1, std::memory_order_acq_rel);
  t_capture_stream = nullptr;
}
}  // namespace

bool this_thread_capturing() { return t_capture_stream != nullptr; }
void* this_thread_capture_stream() { return t_capture_stream; }
int capturing_count() { return g_capturing.load(std::memory_order_acquire); }

void capture_begin(int ordinal, void* stream) {
  if (!stream)
    throw Error(ErrorKind::User, "a CUDA graph cannot capture a default stream: capture a "
                                 "stream made by kjit::Stream::create (or wrap the caller's)");
  if (t_capture_stream)
    throw Error(ErrorKind::User, "this thread is already capturing a CUDA graph; captures do "
                                 "not nest: finish the first one before starting another");
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  // Thread-local mode: other threads (XLA runs one per device) may keep making calls that
  // are unsafe during a capture, such as loading modules or synchronous copies.
  KJIT_CU(driver().api.cuStreamBeginCapture(static_cast<CUstream>(stream),
                                            CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  g_capturing.fetch_add(1, std::memory_order_acq_rel);
  t_capture_stream = stream;
}

void* capture_end(int ordinal, void* stream) {
  return capture_end_with_copies(ordinal, stream, {}, nullptr, nullptr);
}

namespace {
/// The memcpy node of `graph` for each of `copies` (matched by destination, source and size).
std::vector<void*> find_copy_nodes(const DriverApi& a, CUgraph graph,
                                   const std::vector<CapturedCopy>& copies) {
  std::vector<void*> found(copies.size(), nullptr);
  size_t count = 0;
  KJIT_CU(a.cuGraphGetNodes(graph, nullptr, &count));
  std::vector<CUgraphNode> nodes(count);
  if (count) KJIT_CU(a.cuGraphGetNodes(graph, nodes.data(), &count));
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type;
    KJIT_CU(a.cuGraphNodeGetType(node, &type));
    if (type != CU_GRAPH_NODE_TYPE_MEMCPY) continue;
    CUDA_MEMCPY3D p{};
    KJIT_CU(a.cuGraphMemcpyNodeGetParams(node, &p));
    for (size_t i = 0; i < copies.size(); ++i) {
      if (found[i] || p.dstDevice != reinterpret_cast<CUdeviceptr>(copies[i].dst) ||
          p.srcDevice != reinterpret_cast<CUdeviceptr>(copies[i].src) ||
          p.WidthInBytes != copies[i].bytes)
        continue;
      found[i] = node;
      break;
    }
  }
  for (size_t i = 0; i < copies.size(); ++i)
    KJIT_CHECK(found[i], "captured copy " + std::to_string(i) + " (" +
                             std::to_string(copies[i].bytes) + " bytes) has no memcpy node");
  return found;
}
}  // namespace

void* capture_end_with_copies(int ordinal, void* stream, const std::vector<CapturedCopy>& copies,
                              void** graph_out, std::vector<void*>* nodes) {
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  const DriverApi& a = driver().api;
  CUgraph graph = nullptr;
  CUresult r = a.cuStreamEndCapture(static_cast<CUstream>(stream), &graph);
  capture_finished();
  if (r != CUDA_SUCCESS) {
    if (graph) a.cuGraphDestroy(graph);
    throw_driver_error(r, "cuStreamEndCapture (cuda:" + std::to_string(ordinal) + ")");
  }
  CUgraphExec exec = nullptr;
  try {
    if (nodes) *nodes = find_copy_nodes(a, graph, copies);
    r = a.cuGraphInstantiateWithFlags(&exec, graph, 0);
    if (r != CUDA_SUCCESS)
      throw_driver_error(r, "cuGraphInstantiateWithFlags (cuda:" + std::to_string(ordinal) + ")");
  } catch (...) {
    a.cuGraphDestroy(graph);
    throw;
  }
  if (graph_out)
    *graph_out = graph;  // its nodes name the executable's nodes in graph_set_copy
  else
    a.cuGraphDestroy(graph);  // the executable graph keeps what it needs
  return exec;
}

void capture_abort(int ordinal, void* stream) noexcept {
  try {
    DeviceState& dev = device(ordinal);
    ContextScope scope(dev);
    const DriverApi& a = driver().api;
    CUgraph graph = nullptr;
    a.cuStreamEndCapture(static_cast<CUstream>(stream), &graph);
    if (graph) a.cuGraphDestroy(graph);
  } catch (...) {
  }
  capture_finished();
}

void graph_launch(int ordinal, void* graph_exec, void* stream) {
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  KJIT_CU(driver().api.cuGraphLaunch(static_cast<CUgraphExec>(graph_exec), to_cu_stream(stream)));
}

void graph_destroy(int ordinal, void* graph_exec) noexcept {
  if (!graph_exec) return;
  try {
    DeviceState& dev = device(ordinal);
    ContextScope scope(dev);
    // Safe while a replay is still running: the driver frees it when the replay completes.
    driver().api.cuGraphExecDestroy(static_cast<CUgraphExec>(graph_exec));
  } catch (...) {
  }
}

bool stream_capturing(int ordinal, void* stream) {
  if (!stream) return false;  // kjit never captures a default stream
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  KJIT_CU(driver().api.cuStreamIsCapturing(static_cast<CUstream>(stream), &status));
  return status != CU_STREAM_CAPTURE_STATUS_NONE;  // an invalidated capture still owns it
}

void graph_set_copy(int ordinal, void* graph_exec, void* node, void* dst, const void* src) {
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  const DriverApi& a = driver().api;
  auto n = static_cast<CUgraphNode>(node);
  // Start from the captured parameters, so that memory types and extents stay what the driver
  // recorded (an update may only change the addresses of a one-dimensional copy).
  CUDA_MEMCPY3D p{};
  KJIT_CU(a.cuGraphMemcpyNodeGetParams(n, &p));
  p.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
  p.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  KJIT_CU(a.cuGraphExecMemcpyNodeSetParams(static_cast<CUgraphExec>(graph_exec), n, &p,
                                           primary_context(dev)));
}

void graph_release(int ordinal, void* graph) noexcept {
  if (!graph) return;
  try {
    DeviceState& dev = device(ordinal);
    ContextScope scope(dev);
    driver().api.cuGraphDestroy(static_cast<CUgraph>(graph));
  } catch (...) {
  }
}

}  // namespace kjit::cuda
