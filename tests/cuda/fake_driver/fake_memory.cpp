// The fake CUDA driver's memory, stream and event entry points. "Device" memory is host
// memory, so copies really move bytes and kjit's arrays round-trip through the fake.
#include <cstdlib>
#include <cstring>

#include "fake_state.hpp"

using namespace kjit::fake_cuda;

// Calls that need a current context, as in the real driver.
#define FAKE_REQUIRE_CONTEXT()                                  \
  if (!s.initialised) return CUDA_ERROR_NOT_INITIALIZED;        \
  Context* ctx = current_context();                             \
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;                  \
  (void)ctx
// Synchronous work is illegal on a thread that captures a stream (thread-local capture mode).
#define FAKE_FORBID_DURING_CAPTURE() \
  if (this_thread_captures(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED

namespace {

/// Performs or (on a capturing stream) records a copy or memset.
CUresult enqueue(State& s, CUstream handle, GraphNode node, int device) {
  bool valid = false;
  Stream* st = stream_of(s, handle, &valid);
  if (!valid || (st && st->device != device)) return CUDA_ERROR_INVALID_HANDLE;
  if (st && st->capturing) {
    if (st->capture_thread != std::this_thread::get_id()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    record_copy(s, node, device, reinterpret_cast<uintptr_t>(handle), LaunchOrigin::Captured);
    add_node(st, std::move(node));
    return CUDA_SUCCESS;
  }
  record_copy(s, node, device, reinterpret_cast<uintptr_t>(handle), LaunchOrigin::Direct);
  if (node.memset_value >= 0)
    std::memset(reinterpret_cast<void*>(node.dst), node.memset_value, node.bytes);
  else
    std::memmove(reinterpret_cast<void*>(node.dst), reinterpret_cast<const void*>(node.src),
                 node.bytes);
  return CUDA_SUCCESS;
}

GraphNode copy_node(uintptr_t dst, uintptr_t src, size_t bytes) {
  GraphNode n;
  n.dst = dst;
  n.src = src;
  n.bytes = bytes;
  return n;
}

}  // namespace

// --- memory ----------------------------------------------------------------------------------

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* ptr, size_t bytes) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  FAKE_FORBID_DURING_CAPTURE();
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  *ptr = reinterpret_cast<CUdeviceptr>(p);
  s.allocations[*ptr] = {ctx->device, bytes};
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr ptr) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  FAKE_FORBID_DURING_CAPTURE();
  auto it = s.allocations.find(ptr);
  if (it == s.allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  s.allocations.erase(it);
  std::free(reinterpret_cast<void*>(ptr));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  size_t total = size_t(16 + 8 * ctx->device) << 30, used = 0;
  for (auto& [ptr, a] : s.allocations)
    if (a.first == ctx->device) used += a.second;
  *free_bytes = total - used;
  *total_bytes = total;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t bytes) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  FAKE_FORBID_DURING_CAPTURE();
  if (!is_device_range(s, dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t bytes) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  FAKE_FORBID_DURING_CAPTURE();
  if (!is_device_range(s, src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  FAKE_FORBID_DURING_CAPTURE();
  if (!is_device_range(s, dst, bytes) || !is_device_range(s, src, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes, CUstream st) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  if (!is_device_range(s, dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return enqueue(s, st, copy_node(dst, reinterpret_cast<uintptr_t>(src), bytes), ctx->device);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t bytes, CUstream st) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  if (!is_device_range(s, src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return enqueue(s, st, copy_node(reinterpret_cast<uintptr_t>(dst), src, bytes), ctx->device);
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream st) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  if (!is_device_range(s, dst, bytes) || !is_device_range(s, src, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  return enqueue(s, st, copy_node(dst, src, bytes), ctx->device);
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t count) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  FAKE_FORBID_DURING_CAPTURE();
  if (!is_device_range(s, dst, count)) return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void*>(dst), value, count);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count, CUstream st) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  if (!is_device_range(s, dst, count)) return CUDA_ERROR_INVALID_VALUE;
  GraphNode n = copy_node(dst, 0, count);
  n.memset_value = value;
  return enqueue(s, st, n, ctx->device);
}

// --- streams and events ----------------------------------------------------------------------

CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int flags) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  auto* st = new Stream();
  st->device = ctx->device;
  s.streams.insert(st);
  *stream = reinterpret_cast<CUstream>(st);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  auto* st = reinterpret_cast<Stream*>(stream);
  if (!s.streams.count(st)) return CUDA_ERROR_INVALID_HANDLE;
  s.streams.erase(st);
  delete st;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  bool valid = false;
  Stream* st = stream_of(s, stream, &valid);
  if (!valid) return CUDA_ERROR_INVALID_HANDLE;
  if (st && st->capturing) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return CUDA_SUCCESS;  // everything the fake does completes at once
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  bool valid = false;
  stream_of(s, stream, &valid);
  if (!valid || !s.events.count(reinterpret_cast<Event*>(event))) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int flags) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  auto* e = new Event{ctx->device};
  s.events.insert(e);
  *event = reinterpret_cast<CUevent>(e);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
  FAKE_ENTER();
  FAKE_REQUIRE_CONTEXT();
  bool valid = false;
  stream_of(s, stream, &valid);
  if (!valid || !s.events.count(reinterpret_cast<Event*>(event))) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
  FAKE_ENTER();
  return s.events.count(reinterpret_cast<Event*>(event)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  FAKE_ENTER();
  if (!s.events.count(reinterpret_cast<Event*>(start)) ||
      !s.events.count(reinterpret_cast<Event*>(end)))
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = 0.0f;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent event) {
  FAKE_ENTER();
  auto* e = reinterpret_cast<Event*>(event);
  if (!s.events.erase(e)) return CUDA_ERROR_INVALID_HANDLE;
  delete e;
  return CUDA_SUCCESS;
}
