// Device memory and streams through the fake driver, whose "device memory" is host memory, so
// bytes really round-trip: synchronous and stream-ordered copies in every direction, zeroing.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "fake_driver_fixture.hpp"
#include "kjit/error.hpp"

using namespace kjit;
using kjit::test::FakeDriver;

TEST_CASE("copies in every direction, synchronous and on a stream, and zeroing") {
  FakeDriver fake;
  std::vector<int> host(100);
  std::iota(host.begin(), host.end(), 1);
  size_t bytes = host.size() * sizeof(int);
  for (bool on_stream : {false, true}) {
    CAPTURE(on_stream);
    void* stream = on_stream ? cuda::stream_create(1) : nullptr;
    void* a = cuda::alloc(1, bytes);
    void* b = cuda::alloc(1, bytes);
    cuda::copy(1, a, host.data(), bytes, cuda::CopyKind::HostToDevice, stream);
    cuda::copy(1, b, a, bytes, cuda::CopyKind::DeviceToDevice, stream);
    cuda::zero(1, a, bytes / 2, stream);
    std::vector<int> back(host.size(), -1), zeroed(host.size(), -1);
    cuda::copy(1, back.data(), b, bytes, cuda::CopyKind::DeviceToHost, stream);
    cuda::copy(1, zeroed.data(), a, bytes, cuda::CopyKind::DeviceToHost, stream);
    if (stream) cuda::stream_synchronize(1, stream);
    CHECK(back == host);
    CHECK(std::all_of(zeroed.begin(), zeroed.begin() + 50, [](int v) { return v == 0; }));
    CHECK(zeroed[50] == 51);
    cuda::free(1, a);
    cuda::free(1, b);
    cuda::stream_destroy(1, stream);
  }
  CHECK(fake_cuda::allocated_bytes(1) == 0);
  auto names = kjit::test::call_names();
  for (const char* call : {"cuMemcpyHtoD_v2", "cuMemcpy", "cuMemcpyDtoH_v2", "cuMemsetD8_v2",
                           "cuMemcpyHtoDAsync_v2", "cuMemcpyAsync", "cuMemcpyDtoHAsync_v2",
                           "cuMemsetD8Async", "cuStreamCreate", "cuStreamDestroy_v2"})
    CHECK_MESSAGE(std::find(names.begin(), names.end(), call) != names.end(), call);
}

TEST_CASE("device-to-device copies also copy between two devices") {
  FakeDriver fake;
  std::vector<double> host{1.5, -2.5, 3.25};
  void* on0 = cuda::alloc(0, sizeof(double) * 3);
  void* on1 = cuda::alloc(1, sizeof(double) * 3);
  cuda::copy(0, on0, host.data(), sizeof(double) * 3, cuda::CopyKind::HostToDevice, nullptr);
  cuda::copy(1, on1, on0, sizeof(double) * 3, cuda::CopyKind::DeviceToDevice, nullptr);
  std::vector<double> back(3);
  cuda::copy(1, back.data(), on1, sizeof(double) * 3, cuda::CopyKind::DeviceToHost, nullptr);
  CHECK(back == host);
  cuda::free(0, on0);
  cuda::free(1, on1);
}

TEST_CASE("empty allocations and copies do not reach the driver") {
  FakeDriver fake;
  fake_cuda::clear_records();
  CHECK(cuda::alloc(0, 0) == nullptr);
  cuda::free(0, nullptr);
  cuda::copy(0, nullptr, nullptr, 0, cuda::CopyKind::HostToDevice, nullptr);
  cuda::zero(0, nullptr, 0, nullptr);
  CHECK(fake_cuda::calls().empty());
}

TEST_CASE("a failed copy is a Driver error naming the call") {
  FakeDriver fake;
  void* a = cuda::alloc(0, 16);
  int host[8] = {};
  try {
    cuda::copy(0, a, host, sizeof(host), cuda::CopyKind::HostToDevice, nullptr);  // 32 > 16
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Driver);
    CHECK(std::string(e.what()).find("cuMemcpyHtoD") != std::string::npos);
    CHECK(std::string(e.what()).find("CUDA_ERROR_INVALID_VALUE") != std::string::npos);
  }
  cuda::free(0, a);
}

TEST_CASE("out of memory explains itself") {
  FakeDriver fake;
  try {
    cuda::alloc(0, size_t(1) << 62);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Driver);
    CHECK(std::string(e.what()).find("bytes on cuda:0") != std::string::npos);
  }
}

TEST_CASE("the default stream is the calling thread's per-thread stream") {
  FakeDriver fake;
  cuda::stream_synchronize(0, nullptr);
  CHECK(cuda::to_cu_stream(nullptr) == CU_STREAM_PER_THREAD);
}
