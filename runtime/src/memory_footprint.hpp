// The bytes an array's elements occupy, and whether two arrays' elements share a byte: what
// the tape's write log compares when a write may overwrite a recorded read (views included).
#pragma once

#include <cstdint>

#include "kjit/abi.h"
#include "kjit/runtime/ndarray.hpp"

namespace kjit::detail {

/// An array's elements as memory: the first element's address, the extents and byte strides,
/// and the bounding byte range [begin, end) (empty when the array has no element).
struct MemoryFootprint {
  intptr_t data = 0;
  int ndim = 0;
  int64_t shape[kj::kMaxDims] = {};
  int64_t strides[kj::kMaxDims] = {};
  int64_t element_bytes = 0;
  intptr_t begin = 0, end = 0;
  bool empty() const { return begin == end; }
  /// The same elements at the same place.
  bool same(const MemoryFootprint& o) const;
};

/// The footprint of `ndim` extents and byte strides (zero or negative too) from `data`;
/// empty when an extent is 0.
MemoryFootprint footprint(intptr_t data, int ndim, const int64_t* shape, const int64_t* strides, int64_t element_bytes);
/// The footprint of the array a kernel receives as `d` (an array argument's or a struct
/// field's descriptor), of elements of `element_bytes`; empty for an absent array.
MemoryFootprint footprint_of(const kj::array_t<void>& d, int64_t element_bytes);
/// `a`'s footprint.
MemoryFootprint footprint_of(const NdArray& a);

/// Whether some byte belongs to an element of both. Exact (a bounded search over the index
/// equations, as NumPy's shares_memory); true when the search would take too long, so a
/// write is never missed.
bool shares_memory(const MemoryFootprint& a, const MemoryFootprint& b);

}  // namespace kjit::detail
