// Device memory: allocation, copies in every direction (synchronous or on a stream), zeroing.
#include "cuda/driver_api.hpp"
#include "kjit/error.hpp"

namespace kjit::cuda {

namespace {
CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }
}  // namespace

void* alloc(int ordinal, size_t bytes) {
  if (bytes == 0) return nullptr;  // the driver rejects empty allocations; nothing to hold
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  CUdeviceptr ptr = 0;
  CUresult r = driver().api.cuMemAlloc(&ptr, bytes);
  if (r != CUDA_SUCCESS)
    throw_driver_error(r, "cuMemAlloc(" + std::to_string(bytes) + " bytes on cuda:" +
                              std::to_string(ordinal) + ")");
  return reinterpret_cast<void*>(ptr);
}

void free(int ordinal, void* ptr) noexcept {
  if (!ptr) return;
  // Frees can run from destructors at process exit, after the driver shut down
  // (CUDA_ERROR_DEINITIALIZED): nothing useful can be done then, so errors are dropped.
  try {
    DeviceState& dev = device(ordinal);
    ContextScope scope(dev);
    driver().api.cuMemFree(dptr(ptr));
  } catch (...) {
  }
}

void copy(int ordinal, void* dst, const void* src, size_t bytes, CopyKind kind, void* stream) {
  if (bytes == 0) return;
  // Device-to-device copies use the unified-addressing cuMemcpy, which also copies between two
  // devices (the driver finds each pointer's device); `ordinal` only picks the context.
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  const DriverApi& a = driver().api;
  if (stream) {
    CUstream s = static_cast<CUstream>(stream);
    switch (kind) {
      case CopyKind::HostToDevice: KJIT_CU(a.cuMemcpyHtoDAsync(dptr(dst), src, bytes, s)); break;
      case CopyKind::DeviceToHost: KJIT_CU(a.cuMemcpyDtoHAsync(dst, dptr(src), bytes, s)); break;
      case CopyKind::DeviceToDevice: KJIT_CU(a.cuMemcpyAsync(dptr(dst), dptr(src), bytes, s)); break;
    }
    return;
  }
  // The synchronous copies run on the legacy default stream, which waits for earlier work on
  // every blocking stream, the per-thread default streams kjit launches on included.
  switch (kind) {
    case CopyKind::HostToDevice: KJIT_CU(a.cuMemcpyHtoD(dptr(dst), src, bytes)); break;
    case CopyKind::DeviceToHost: KJIT_CU(a.cuMemcpyDtoH(dst, dptr(src), bytes)); break;
    case CopyKind::DeviceToDevice: KJIT_CU(a.cuMemcpy(dptr(dst), dptr(src), bytes)); break;
  }
}

void zero(int ordinal, void* ptr, size_t bytes, void* stream) {
  if (bytes == 0) return;
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  const DriverApi& a = driver().api;
  if (stream)
    KJIT_CU(a.cuMemsetD8Async(dptr(ptr), 0, bytes, static_cast<CUstream>(stream)));
  else
    KJIT_CU(a.cuMemsetD8(dptr(ptr), 0, bytes));
}

}  // namespace kjit::cuda
