// The one writer of a value parameter's slot as the kernel ABI lays it out (kj::value_t: where
// to read the value, then the value): the C++ packer and the XLA FFI's both write through it
// (internal).
#pragma once

#include <cstddef>
#include <cstring>

#include "kjit/abi.h"

namespace kjit::detail {

/// The value field's offset in kj::value_t<T>: the same for every T the ABI allows (their
/// alignment is at most the pointer's).
constexpr size_t kValueFieldOffset = offsetof(kj::value_t<double>, value);
static_assert(offsetof(kj::value_t<char>, value) == kValueFieldOffset &&
                  offsetof(kj::value_t<kj_int64>, value) == kValueFieldOffset,
              "kj::value_t's value moved with its type");

/// A value slot for a value of `element_bytes` bytes: kj::value_bytes(element_bytes) bytes,
/// 8-aligned.
struct ValueSlot {
  unsigned char* slot;

  /// Bytes the slot occupies in the packed parameters.
  static size_t bytes(size_t element_bytes) { return size_t(kj::value_bytes(int64_t(element_bytes))); }
  /// Clears the slot: no pointer, the value all zeros (padding included).
  void clear(size_t element_bytes) const { std::memset(slot, 0, bytes(element_bytes)); }
  /// Where the value goes when the slot carries it (ptr null).
  unsigned char* value() const { return slot + kValueFieldOffset; }
  /// The pointer the kernel reads the value through when set.
  void** pointer() const { return reinterpret_cast<void**>(slot + offsetof(kj::value_t<double>, ptr)); }
  /// The slot carrying the value `bytes` itself.
  void hold(const void* bytes_in, size_t element_bytes) const {
    clear(element_bytes);
    std::memcpy(value(), bytes_in, element_bytes);
  }
  /// The slot pointing at `where`, where every thread reads the value.
  void point_at(void* where, size_t element_bytes) const {
    clear(element_bytes);
    *pointer() = where;
  }
};

}  // namespace kjit::detail
