// Stream capture into CUDA graphs, instantiation and replay, and the count of live captures.
#include <atomic>

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
  r = a.cuGraphInstantiateWithFlags(&exec, graph, 0);
  a.cuGraphDestroy(graph);  // the executable graph keeps what it needs
  if (r != CUDA_SUCCESS)
    throw_driver_error(r, "cuGraphInstantiateWithFlags (cuda:" + std::to_string(ordinal) + ")");
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

}  // namespace kjit::cuda
