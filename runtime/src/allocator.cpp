// Device allocators: the built-in ones, the ones a program sets, and array allocations
// through them (recorded by the memory tracker while it runs).
#include "kjit/runtime/allocator.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

#include "array_memory.hpp"
#include "kjit/error.hpp"
#include "checked_size.hpp"
#include "kjit/runtime/internal/cuda_backend.hpp"
#include "memory.hpp"
#include "memory_tracker.hpp"
#include "write_log.hpp"

namespace kjit {

namespace {

class HostAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override { return detail::allocate_host(bytes); }
  void deallocate(void* ptr, size_t) override { std::free(ptr); }
};

class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int ordinal) : ordinal_(ordinal) {}
  // cuMemAlloc's own error (a Driver error naming the call and the driver's reason) says more
  // than a null would.
  void* allocate(size_t bytes) override { return cuda::alloc(ordinal_, bytes); }
  void deallocate(void* ptr, size_t) override { cuda::free(ordinal_, ptr); }

 private:
  int ordinal_;
};

constexpr int kMaxCudaDevices = 64;

/// The allocator set per device (null: the built-in one): slot 0 is the cpu, 1 + N is cuda:N.
std::atomic<Allocator*> g_set_allocators[1 + kMaxCudaDevices];

size_t slot(const Device& device) {
  if (device.is_cpu()) return 0;
  if (device.ordinal() < 0 || device.ordinal() >= kMaxCudaDevices)
    throw Error(ErrorKind::User, "allocators: " + device.name() + " is beyond the " +
                                     std::to_string(kMaxCudaDevices) + " CUDA devices kjit keeps allocators for");
  return 1 + size_t(device.ordinal());
}

void give_back(void* ptr, const Device&, void* allocator, size_t bytes) noexcept {
  detail::note_release(ptr, bytes);
  try {
    static_cast<Allocator*>(allocator)->deallocate(ptr, bytes);
  } catch (...) {  // a release runs in destructors: nowhere to report to
  }
}

void give_back_recorded(void* ptr, const Device& device, void* allocator, size_t bytes) noexcept {
  detail::record_free(ptr);
  give_back(ptr, device, allocator, bytes);
}

std::string describe(const ir::Type& element, const Shape& shape, bool gradient) {
  std::string dims = shape.size() == 1 ? std::to_string(shape[0]) : detail::shape_text(shape.data(), shape.size());
  return (gradient ? "gradient of array[" : "array[") + element.str() + ", " + dims + "]";
}

}  // namespace

Allocator& default_allocator(const Device& device) {
  // Never destroyed: arrays in other static objects may be freed after this file's statics go.
  static Allocator* const host = new HostAllocator;
  if (device.is_cpu()) return *host;
  static Allocator* const* const cuda = [] {
    auto** all = new Allocator*[kMaxCudaDevices];
    for (int i = 0; i < kMaxCudaDevices; ++i) all[i] = new CudaAllocator(i);
    return all;
  }();
  return *cuda[slot(device) - 1];
}

Allocator& device_allocator(const Device& device) {
  Allocator* set = g_set_allocators[slot(device)].load(std::memory_order_acquire);
  return set ? *set : default_allocator(device);
}

Allocator* set_device_allocator(const Device& device, Allocator* allocator) {
  return g_set_allocators[slot(device)].exchange(allocator, std::memory_order_acq_rel);
}

namespace detail {

SharedResource allocate_array(const Device& device, size_t bytes, void** data, const ir::Type& element,
                              const Shape& shape, bool gradient) {
  *data = nullptr;
  // Nothing to allocate (Warp asks no allocator for empty arrays either); an owner all the same,
  // as every array that is not a view has one.
  if (bytes == 0) return SharedResource(nullptr, device, [](void*, const Device&) {});
  Allocator& allocator = device_allocator(device);
  void* ptr = allocator.allocate(bytes);
  if (!ptr)
    throw Error(ErrorKind::User, "out of memory on " + device.name() + ": allocating " + std::to_string(bytes) +
                                     " bytes failed (the device's allocator returned null)");
  const bool recorded = memory_tracking_on();
  try {
    if (recorded) record_allocation(ptr, bytes, device, describe(element, shape, gradient));
    SharedResource owner(ptr, device, &allocator, bytes, recorded ? give_back_recorded : give_back);
    *data = ptr;
    return owner;
  } catch (...) {
    (recorded ? give_back_recorded : give_back)(ptr, device, &allocator, bytes);
    throw;
  }
}

}  // namespace detail

}  // namespace kjit
