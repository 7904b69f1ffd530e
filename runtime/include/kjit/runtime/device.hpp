// kjit/runtime/device.hpp — devices as users name them: "cpu", "cuda:0", "cuda:1", ...
#pragma once

#include <cstddef>

#include "kjit/string_fwd.hpp"  // name() returns std::string; parse() takes string types

namespace kjit {

/// The kind of a device.
enum class DeviceKind { Cpu, Cuda };

/// A place where kernels run and arrays live. Cheap to copy and compare.
class Device {
 public:
  /// The host (`cpu`): every kernel runs here, on all hardware threads.
  Device() = default;
  static Device cpu() { return Device(); }
  /// `cuda:<ordinal>`. Not validated until used; see Device::parse for checked lookup.
  static Device cuda(int ordinal) { return Device(DeviceKind::Cuda, ordinal); }
  /// Parses "cpu", "cuda" (= cuda:0) or "cuda:N". Throws a User error for malformed names,
  /// and a Driver error saying why ("no CUDA driver found", "no CUDA device", "cuda:3 is out
  /// of range: 2 devices") for CUDA devices that cannot be used.
  static Device parse(const char* name, size_t length);
  static Device parse(const char* name);
  /// From any string type with data() and size() (std::string, std::string_view).
  template <class S, class = detail::if_string_like<S>>
  static Device parse(const S& name) { return parse(name.data(), name.size()); }

  DeviceKind kind() const { return kind_; }
  bool is_cpu() const { return kind_ == DeviceKind::Cpu; }
  bool is_cuda() const { return kind_ == DeviceKind::Cuda; }
  /// CUDA ordinal; -1 for the cpu.
  int ordinal() const { return ordinal_; }
  /// "cpu" or "cuda:N" (include <string> to call it).
  std::string name() const;

  bool operator==(const Device& o) const { return kind_ == o.kind_ && ordinal_ == o.ordinal_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  Device(DeviceKind kind, int ordinal) : kind_(kind), ordinal_(ordinal) {}
  DeviceKind kind_ = DeviceKind::Cpu;
  int ordinal_ = -1;
};

/// `cuda:0` when a CUDA driver and at least one GPU are usable, else `cpu`.
Device default_device();

}  // namespace kjit
