// kjit/runtime/allocator.hpp — where arrays' memory comes from: a device's allocator, which a
// program may replace (Warp's set_device_allocator and ScopedAllocator).
#pragma once

#include <cstddef>

#include "kjit/runtime/device.hpp"

namespace kjit {

/// A source of device memory for arrays. Every NdArray allocation on a device (data, gradient
/// buffers, copies, to(), clones) calls the device's allocator, and the memory goes back through
/// the allocator that gave it, whatever the device's allocator is by then. Arrays are made and
/// freed from any thread: an allocator shared by threads must be thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// `bytes` (never 0) of memory of the device, aligned for any element type; null when there
  /// is none (the allocation then fails with a User error, "out of memory on <device>"). An
  /// exception it throws reaches the caller of the allocation.
  virtual void* allocate(size_t bytes) = 0;
  /// Gives back `ptr`, from allocate(bytes). Called when the last handle goes, on any thread; an
  /// exception it throws is dropped.
  virtual void deallocate(void* ptr, size_t bytes) = 0;
};

/// The device's built-in allocator (cpu: aligned host memory; CUDA: cuMemAlloc), to wrap.
/// It lives as long as the process.
Allocator& default_allocator(const Device& device);
/// The allocator that allocates `device`'s arrays now: the one set, else default_allocator.
Allocator& device_allocator(const Device& device);
/// Makes `allocator` allocate every later array of `device` (null: the built-in one again).
/// It must outlive the arrays it allocates. Returns the allocator set before (null: the
/// built-in one). A User error for a CUDA ordinal of 64 or more.
Allocator* set_device_allocator(const Device& device, Allocator* allocator);

/// Sets `device`'s allocator for a scope and restores the one before at its end (Warp's
/// ScopedAllocator; null: the built-in one in the scope).
class ScopedAllocator {
 public:
  ScopedAllocator(const Device& device, Allocator* allocator)
      : device_(device), saved_(set_device_allocator(device, allocator)) {}
  ~ScopedAllocator() { set_device_allocator(device_, saved_); }
  ScopedAllocator(const ScopedAllocator&) = delete;
  ScopedAllocator& operator=(const ScopedAllocator&) = delete;

 private:
  Device device_;
  Allocator* saved_;
};

}  // namespace kjit
