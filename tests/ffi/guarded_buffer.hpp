// Memory that ends exactly at an inaccessible page, for tests that must fault on any access
// past a buffer (vmap strides, the frame fuzzer).
#pragma once

#include <cstddef>

namespace kjit::test {

/// `bytes` bytes (zeroed) whose last byte is followed by a PROT_NONE page: reading or writing
/// one byte past them faults. Zero bytes: data() points at the guard page itself.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  size_t bytes_, map_bytes_ = 0;
  char* base_ = nullptr;
  void* data_ = nullptr;
};

}  // namespace kjit::test
