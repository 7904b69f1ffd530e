// CUDA streams: create, destroy, synchronise.
#include "cuda/driver_api.hpp"

namespace kjit::cuda {

void* stream_create(int ordinal) {
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  CUstream s = nullptr;
  // A blocking stream: synchronous copies (legacy default stream) wait for its work, which is
  // what users of NdArray::to_vector after an asynchronous launch expect.
  KJIT_CU(driver().api.cuStreamCreate(&s, CU_STREAM_DEFAULT));
  return s;
}

void stream_destroy(int ordinal, void* stream) noexcept {
  if (!stream) return;
  try {
    DeviceState& dev = device(ordinal);
    ContextScope scope(dev);
    driver().api.cuStreamDestroy(static_cast<CUstream>(stream));
  } catch (...) {
    // At process exit the driver may be gone; a stream cannot leak past that.
  }
}

void stream_synchronize(int ordinal, void* stream) {
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  KJIT_CU(driver().api.cuStreamSynchronize(to_cu_stream(stream)));
}

}  // namespace kjit::cuda
