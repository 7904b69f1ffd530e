// Raw memory of the cpu and of CUDA devices.
#include "memory.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/error.hpp"

namespace kjit::detail {

void* allocate_host(size_t bytes) noexcept {
  const size_t align = bytes >= kHugePageBytes ? kHugePageBytes : kHostAlignment;
  if (bytes > SIZE_MAX - align) return nullptr;
  const size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  // Advice only: where the kernel has no huge pages to give, the memory stays in small pages.
  if (p && align == kHugePageBytes) (void)madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

void copy_bytes(const Device& dst_device, void* dst, const Device& src_device, const void* src,
                size_t bytes, const Stream& stream) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  void* s = stream.device().is_cuda() ? stream.handle() : nullptr;
  if (dst_device.is_cuda() && src_device.is_cuda()) {
    cuda::copy(dst_device.ordinal(), dst, src, bytes, cuda::CopyKind::DeviceToDevice, s);
  } else if (dst_device.is_cuda()) {
    cuda::copy(dst_device.ordinal(), dst, src, bytes, cuda::CopyKind::HostToDevice, s);
  } else {
    cuda::copy(src_device.ordinal(), dst, src, bytes, cuda::CopyKind::DeviceToHost, s);
  }
}

void zero_bytes(const Device& device, void* ptr, size_t bytes, const Stream& stream) {
  if (bytes == 0) return;
  if (device.is_cpu()) {
    std::memset(ptr, 0, bytes);
    return;
  }
  cuda::zero(device.ordinal(), ptr, bytes, stream.device().is_cuda() ? stream.handle() : nullptr);
}

}  // namespace kjit::detail
