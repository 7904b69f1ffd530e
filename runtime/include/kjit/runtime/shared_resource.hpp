// kjit/runtime/shared_resource.hpp — a reference-counted owner of one device resource (array
// memory, a CUDA stream), released with its last copy: what std::shared_ptr<void> did for
// NdArray and Stream, without <memory> in every program's headers.
#pragma once

#include <cstddef>

#include "kjit/ref_count.hpp"
#include "kjit/runtime/device.hpp"

namespace kjit::detail {

/// Owns `resource` of `device` together with its copies; the last copy to go calls
/// `release(resource, device)` once. Copies are thread-safe (an atomic count), like
/// std::shared_ptr. Default-constructed: owns nothing.
class SharedResource {
 public:
  using Release = void (*)(void* resource, const Device& device);
  /// A release that also gets what the resource was made with: array memory goes back to the
  /// allocator (`source`) that allocated its `bytes`.
  using ReleaseFrom = void (*)(void* resource, const Device& device, void* source, size_t bytes);

  SharedResource() = default;
  SharedResource(void* resource, const Device& device, Release release);
  SharedResource(void* resource, const Device& device, void* source, size_t bytes, ReleaseFrom release);
  SharedResource(const SharedResource& o) noexcept : block_(o.block_) { retain(block_); }
  SharedResource(SharedResource&& o) noexcept : block_(o.block_) { o.block_ = nullptr; }
  SharedResource& operator=(const SharedResource& o) noexcept {
    Count* b = o.block_;  // before reset(): `o` may be *this
    retain(b);
    reset();
    block_ = b;
    return *this;
  }
  SharedResource& operator=(SharedResource&& o) noexcept {
    if (this != &o) {
      reset();
      block_ = o.block_;
      o.block_ = nullptr;
    }
    return *this;
  }
  ~SharedResource() { reset(); }

  /// Drops this copy's share (releasing the resource when it was the last).
  void reset() noexcept {
    Count* b = block_;
    block_ = nullptr;
    if (b && drop(b)) destroy(b);
  }
  /// Whether this copy owns something.
  explicit operator bool() const { return block_ != nullptr; }
  /// How many copies share the resource (0 when empty); for tests.
  long use_count() const noexcept;
  /// The resource and its size in bytes where it was made with one (array memory from an
  /// allocator); null and 0 otherwise.
  void* resource() const noexcept;
  size_t bytes() const noexcept;
  /// A second resource that lives as long as this one and is found through any copy of it (an
  /// array's gradient buffer, shared by every handle of the memory, however early it was
  /// copied). Empty until set.
  SharedResource companion() const;
  /// The companion's resource() without copying the owner (a launch reads it): null when none.
  void* companion_resource() const noexcept;
  /// Sets the companion unless one is set already (two threads may race: the first wins);
  /// returns the companion held afterwards.
  SharedResource set_companion(const SharedResource& companion) const;

 private:
  /// The head of the shared block (the rest is in shared_resource.cpp). The count is changed
  /// inline, so copying an array (every launch argument is one) costs what a shared_ptr's
  /// copy does.
  struct Count {
    long count;
  };
  struct Block;
  static void retain(Count* b) noexcept {
    if (b) ref_retain(b->count);
  }
  /// Whether this was the last share.
  static bool drop(Count* b) noexcept { return ref_release(b->count); }
  /// Releases the resource and frees the block.
  static void destroy(Count* b) noexcept;

  Count* block_ = nullptr;
};

}  // namespace kjit::detail
