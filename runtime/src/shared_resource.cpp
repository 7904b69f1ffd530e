// The shared block behind detail::SharedResource: the resource, its device and how to release it.
#include "kjit/runtime/shared_resource.hpp"

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
};

SharedResource::SharedResource(void* resource, const Device& device, Release release)
    : block_(&(new Block{{1}, resource, device, release, nullptr, nullptr, 0})->head) {}

SharedResource::SharedResource(void* resource, const Device& device, void* source, size_t bytes,
                               ReleaseFrom release)
    : block_(&(new Block{{1}, resource, device, nullptr, release, source, bytes})->head) {}

void SharedResource::destroy(Count* c) noexcept {
  Block* b = reinterpret_cast<Block*>(c);
  if (b->release_from) b->release_from(b->resource, b->device, b->source, b->bytes);
  else b->release(b->resource, b->device);
  delete b;
}

long SharedResource::use_count() const noexcept {
  return block_ ? ref_count(block_->count) : 0;
}

}  // namespace kjit::detail
