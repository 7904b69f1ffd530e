// The shared block behind detail::SharedResource: the resource, its device and how to release it.
#include "kjit/runtime/shared_resource.hpp"

namespace kjit::detail {

// Standard layout with the count first, so a Block* and its Count* convert to each other.
struct SharedResource::Block {
  Count head;
  void* resource;
  Device device;
  Release release;
};

SharedResource::SharedResource(void* resource, const Device& device, Release release)
    : block_(&(new Block{{1}, resource, device, release})->head) {}

void SharedResource::destroy(Count* c) noexcept {
  Block* b = reinterpret_cast<Block*>(c);
  b->release(b->resource, b->device);
  delete b;
}

long SharedResource::use_count() const noexcept {
  return block_ ? ref_count(block_->count) : 0;
}

}  // namespace kjit::detail
