// Streams: the cpu's implicit one, and CUDA streams created or wrapped.
#include "kjit/runtime/stream.hpp"

#include "kjit/runtime/internal/cuda_backend.hpp"

namespace kjit {

Stream Stream::default_for(const Device& device) {
  Stream s;
  s.device_ = device;
  return s;
}

Stream Stream::create(const Device& device) {
  Stream s;
  s.device_ = device;
  if (device.is_cuda()) {
    s.handle_ = cuda::stream_create(device.ordinal());
    s.owner_ = detail::SharedResource(s.handle_, device, [](void* h, const Device& d) {
      cuda::stream_destroy(d.ordinal(), h);
    });
  }
  return s;
}

Stream Stream::wrap(const Device& device, void* handle) {
  Stream s;
  s.device_ = device;
  s.handle_ = handle;
  return s;
}

void Stream::synchronize() const {
  if (device_.is_cuda()) cuda::stream_synchronize(device_.ordinal(), handle_);
}

}  // namespace kjit
