// kjit/runtime/stream.hpp — an ordered queue of work on a device (a CUDA stream; on the cpu
// every operation completes before it returns).
#pragma once

#include "kjit/runtime/device.hpp"
#include "kjit/runtime/shared_resource.hpp"

namespace kjit {

/// A stream of a device. Default-constructed: the device's default stream. Copies share
/// the same underlying stream; a stream created by Stream::create is destroyed with its
/// last copy, a wrapped one never.
class Stream {
 public:
  /// The default stream of the cpu.
  Stream() = default;
  /// The default stream of `device` (for CUDA: the per-thread default stream).
  static Stream default_for(const Device& device);
  /// A new stream on `device`, owned by the returned object and its copies.
  static Stream create(const Device& device);
  /// A stream created elsewhere (an XLA stream, a CUstream of the application); not owned.
  static Stream wrap(const Device& device, void* handle);

  const Device& device() const { return device_; }
  /// The CUstream (nullptr for default streams and the cpu).
  void* handle() const { return handle_; }
  /// Waits until all work queued on the stream has finished.
  void synchronize() const;

 private:
  Device device_;
  void* handle_ = nullptr;
  detail::SharedResource owner_;  ///< destroys a created stream with the last copy
};

}  // namespace kjit
