// What the graph-mode tests share: the callables they register, XLA-like buffers on a fake
// CUDA device, a session that calls a callable's CUDA handler on its own stream, and views of
// what the fake driver recorded since a point.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "frame_builder.hpp"
#include "integration/fake_devices.hpp"
#include "kjit/ffi.hpp"

namespace kjit::test::graphs {

/// Elements of the default buffers.
constexpr int kN = 256;

/// The buffers XLA would hand graphs::step: inputs x, y; results out = a x + y and x_copy.
struct Buffers {
  NdArray x, y, out, x_copy;
  Buffers(const Device& d, float seed, int n = kN);
  /// New contents for x (seed + i) at the same addresses.
  void fill(float seed);
};

/// Calls one callable's CUDA handler in one graph mode on device 0, on a stream of its own
/// that the fake XLA api reports; starts and ends with an empty graph cache.
class Session {
 public:
  Session(const std::string& callable, ffi::GraphMode mode, int ordinal = 0);
  ~Session();
  /// Calls the handler with `b` (x, y in; out, x_copy out) and static value `a`.
  Outcome call(const Buffers& b, float a);
  uintptr_t stream_id() const { return reinterpret_cast<uintptr_t>(stream.handle()); }

  Device device;
  Stream stream;
  xla::Handler* handler = nullptr;

 private:
  std::string callable_;
};

/// The fake driver's records since construction or the last reset().
class Records {
 public:
  Records() { reset(); }
  void reset();
  std::vector<fake_cuda::LaunchRecord> launches() const;
  std::vector<fake_cuda::CopyRecord> copies() const;
  int count_calls(const std::string& name) const;
  /// The names of the calls named `a` or `b`, in order.
  std::vector<std::string> call_names(const std::string& a, const std::string& b) const;

 private:
  size_t calls_ = 0, launches_ = 0, copies_ = 0;
};

/// The data pointer of array parameter `i` of a recorded launch (0 is the launch bounds).
inline const void* array_param(const fake_cuda::LaunchRecord& l, size_t i) {
  kj::array_t<void> a;
  std::memcpy(&a, l.params.at(i).data(), sizeof a);
  return a.data;
}

/// Parameter `i` of a recorded launch as the kj::value_t<T> it is (kjit/abi.h).
template <class T>
inline kj::value_t<T> value_param(const fake_cuda::LaunchRecord& l, size_t i) {
  kj::value_t<T> v{};
  REQUIRE(l.params.at(i).size() == sizeof v);
  std::memcpy(&v, l.params.at(i).data(), sizeof v);
  return v;
}

/// Float parameter `i` of a recorded launch, passed by value (no pointer to read it from).
inline float float_param(const fake_cuda::LaunchRecord& l, size_t i) {
  kj::value_t<float> v = value_param<float>(l, i);
  CHECK(v.ptr == nullptr);
  return v.value;
}

/// Pointer parameter `i` of a recorded launch (a value's adjoint slot).
inline const void* pointer_param(const fake_cuda::LaunchRecord& l, size_t i) {
  const void* p = nullptr;
  REQUIRE(l.params.at(i).size() == sizeof p);
  std::memcpy(&p, l.params.at(i).data(), sizeof p);
  return p;
}

}  // namespace kjit::test::graphs
