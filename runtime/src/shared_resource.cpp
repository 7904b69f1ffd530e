// The shared block behind detail::SharedResource: the resource, its device, how to release it
// and its companion.
#include "kjit/runtime/shared_resource.hpp"

#include <atomic>

#include "kjit/error.hpp"

namespace kjit::detail {

// Standard layout with the count first, so a Block* and its Count* convert to each other.
struct SharedResource::Block {
  Count head;
  void* resource;
  Device device;
  Release release;  // one of release and release_from is set
  ReleaseFrom release_from;
  void* source;
  size_t bytes;
  std::atomic<SharedResource*> companion;  // owned; set once, then only read (launches read it)
};

SharedResource::SharedResource(void* resource, const Device& device, Release release)
    : block_(&(new Block{{1}, resource, device, release, nullptr, nullptr, 0, nullptr})->head) {}

SharedResource::SharedResource(void* resource, const Device& device, void* source, size_t bytes,
                               ReleaseFrom release)
    : block_(&(new Block{{1}, resource, device, nullptr, release, source, bytes, nullptr})->head) {}

void SharedResource::destroy(Count* c) noexcept {
  Block* b = reinterpret_cast<Block*>(c);
  delete b->companion.load();
  if (b->release_from) b->release_from(b->resource, b->device, b->source, b->bytes);
  else b->release(b->resource, b->device);
  delete b;
}

long SharedResource::use_count() const noexcept {
  return block_ ? ref_count(block_->count) : 0;
}

void* SharedResource::resource() const noexcept {
  return block_ ? reinterpret_cast<Block*>(block_)->resource : nullptr;
}

size_t SharedResource::bytes() const noexcept {
  return block_ ? reinterpret_cast<Block*>(block_)->bytes : 0;
}

SharedResource SharedResource::companion() const {
  const SharedResource* c = block_ ? reinterpret_cast<const Block*>(block_)->companion.load(std::memory_order_acquire) : nullptr;
  return c ? *c : SharedResource();
}

void* SharedResource::companion_resource() const noexcept {
  const SharedResource* c = block_ ? reinterpret_cast<const Block*>(block_)->companion.load(std::memory_order_acquire) : nullptr;
  return c ? c->resource() : nullptr;
}

SharedResource SharedResource::set_companion(const SharedResource& companion) const {
  if (!block_) throw Error(ErrorKind::Internal, "SharedResource::set_companion on an empty owner");
  Block* b = reinterpret_cast<Block*>(block_);
  SharedResource* fresh = new SharedResource(companion);
  SharedResource* held = nullptr;
  if (b->companion.compare_exchange_strong(held, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread set one first
  return *held;
}

}  // namespace kjit::detail
