// Array memory through the device's allocator, recorded by the memory tracker (internal).
#pragma once

#include <cstddef>

#include "kjit/runtime/ndarray.hpp"

namespace kjit::detail {

/// `bytes` for an array's data (or, `gradient`, its gradient buffer) of `element` and `shape`
/// from `device`'s allocator, in *data; null for 0 bytes. The owner returned gives the memory
/// back to that same allocator. A User error when the allocator has none.
SharedResource allocate_array(const Device& device, size_t bytes, void** data, const ir::Type& element,
                              const Shape& shape, bool gradient);

}  // namespace kjit::detail
