// Raw memory of a device: allocation, copies between devices, zeroing (internal).
#pragma once

#include <cstddef>

#include "kjit/runtime/device.hpp"
#include "kjit/runtime/stream.hpp"

namespace kjit::detail {

/// Alignment of every cpu allocation (cache line; room for any vector unit).
constexpr size_t kHostAlignment = 64;

/// Host memory of at least `bytes`, 64-byte aligned, or null when there is none. From
/// kHugePageBytes on it is aligned to and rounded up to huge pages and asked for transparent
/// huge pages: random access over a few MiB (gathers, atomic adds, private copies) otherwise
/// misses the TLB on most accesses. Freed with std::free.
void* allocate_host(size_t bytes) noexcept;
constexpr size_t kHugePageBytes = size_t(2) << 20;

/// Copies `bytes` between any two devices (on `stream` when it is a CUDA stream).
void copy_bytes(const Device& dst_device, void* dst, const Device& src_device, const void* src,
                size_t bytes, const Stream& stream);
/// Sets `bytes` at `ptr` to zero.
void zero_bytes(const Device& device, void* ptr, size_t bytes, const Stream& stream);

}  // namespace kjit::detail
