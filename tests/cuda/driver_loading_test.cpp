// Opening the driver: explicit ABI versions through cuGetProcAddress, the dlsym fallback, the
// order of the first calls, and the reasons CUDA is unusable (no driver, no device, too old).
#include <doctest/doctest.h>

#include <algorithm>

#include "cuda/driver_api.hpp"
#include "kjit/compiler/target.hpp"
#include "kjit/runtime/internal/cuda_backend.hpp"
#include "fake_driver_fixture.hpp"
#include "kjit/error.hpp"

using namespace kjit;
using kjit::test::FakeDriver;
using kjit::test::ScopedEnv;

namespace {

/// The Driver error a call throws (fails the test when it throws nothing or something else).
template <class F>
std::string driver_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Driver);
    return e.what();
  }
  FAIL("expected a Driver error");
  return "";
}

bool requested(const std::string& name, int version) {
  for (auto& r : fake_cuda::proc_requests())
    if (r.name == name && r.version == version && r.found) return true;
  return false;
}

}  // namespace

TEST_CASE("every entry point is resolved through cuGetProcAddress at its stated ABI version") {
  FakeDriver fake;
  REQUIRE(cuda::device_count() == 2);
  CHECK(cuda::unavailable_reason().empty());
  CHECK(cuda::driver().via_proc_address);
  // The versions that select the _v2 entry points cuda.h's macros name.
  CHECK(requested("cuMemAlloc", 3020));
  CHECK(requested("cuCtxPushCurrent", 4000));
  CHECK(requested("cuDevicePrimaryCtxRelease", 11000));
  CHECK(requested("cuStreamBeginCapture", 10010));
  CHECK(requested("cuGraphInstantiateWithFlags", 11040));
  CHECK(requested("cuLaunchKernel", 4000));
  for (auto& r : fake_cuda::proc_requests()) CHECK_MESSAGE(r.found, r.name);
}

TEST_CASE("without cuGetProcAddress the versioned exports are found with dlsym") {
  FakeDriver fake("8.0,9.0", nullptr, nullptr, "1");
  REQUIRE(cuda::device_count() == 2);
  CHECK_FALSE(cuda::driver().via_proc_address);
  void* p = cuda::alloc(1, 64);
  CHECK(p != nullptr);
  cuda::free(1, p);
  auto names = kjit::test::call_names();
  CHECK(std::find(names.begin(), names.end(), "cuMemAlloc_v2") != names.end());
}

TEST_CASE("the first calls: version, symbols, cuInit, then devices; no context until needed") {
  FakeDriver fake;
  REQUIRE(cuda::device_count() == 2);
  int version = kjit::test::first_call("cuDriverGetVersion");
  int proc = kjit::test::first_call("cuGetProcAddress_v2");
  int init = kjit::test::first_call("cuInit");
  int count = kjit::test::first_call("cuDeviceGetCount");
  REQUIRE(version >= 0);
  CHECK(version < proc);
  CHECK(proc < init);
  CHECK(init < count);
  // Enumerating devices must not create contexts on GPUs that are never used.
  CHECK(kjit::test::first_call("cuDevicePrimaryCtxRetain") == -1);
  CHECK(fake_cuda::context_refcount(0) == 0);
  CHECK(fake_cuda::context_refcount(1) == 0);
}

TEST_CASE("each call runs in its device's primary context, retained once, and restores the caller's") {
  FakeDriver fake;
  fake_cuda::clear_records();
  void* a = cuda::alloc(1, 128);
  void* b = cuda::alloc(1, 256);
  void* c = cuda::alloc(0, 64);
  CHECK(fake_cuda::context_refcount(1) == 1);  // retained once, however many calls
  CHECK(fake_cuda::context_refcount(0) == 1);
  std::vector<int> alloc_devices;
  for (auto& call : fake_cuda::calls())
    if (call.name == "cuMemAlloc_v2") alloc_devices.push_back(call.device);
  CHECK(alloc_devices == std::vector<int>{1, 1, 0});
  // Nothing stays current on the calling thread after kjit returns.
  CHECK(fake_cuda::calls().back().name == "cuCtxPopCurrent_v2");
  CHECK(fake_cuda::allocated_bytes(1) == 384);
  cuda::free(1, a);
  cuda::free(1, b);
  cuda::free(0, c);
  CHECK(fake_cuda::allocated_bytes(1) == 0);
  CHECK(fake_cuda::allocated_bytes(0) == 0);
}

TEST_CASE("the primary contexts are released when the driver state goes away") {
  {
    FakeDriver fake;
    cuda::free(0, cuda::alloc(0, 16));
    CHECK(fake_cuda::context_refcount(0) == 1);
    cuda::detail::reset_for_testing();
    CHECK(fake_cuda::context_refcount(0) == 0);
  }
}

TEST_CASE("no driver library: CUDA is unavailable, and says why") {
  FakeDriver fake;
  ScopedEnv missing("KJIT_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  cuda::detail::reset_for_testing();
  CHECK(cuda::device_count() == 0);
  const std::string& reason = cuda::unavailable_reason();
  CHECK(reason.find("no CUDA driver found") != std::string::npos);
  CHECK(reason.find("/nonexistent/libcuda.so.1") != std::string::npos);
  CHECK(reason.find("KJIT_CUDA_DRIVER") != std::string::npos);
  std::string err = driver_error([] { cuda::alloc(0, 16); });
  CHECK(err.find("cuda:0 is not available") != std::string::npos);
  CHECK(err.find("no CUDA driver found") != std::string::npos);
  CHECK(driver_error([] { cuda::target_for(0); }).find("no CUDA driver") != std::string::npos);
}

TEST_CASE("KJIT_CUDA_DRIVER=none disables CUDA") {
  FakeDriver fake;
  ScopedEnv none("KJIT_CUDA_DRIVER", "none");
  cuda::detail::reset_for_testing();
  CHECK(cuda::device_count() == 0);
  CHECK(cuda::unavailable_reason() == "CUDA is disabled (KJIT_CUDA_DRIVER=none)");
}

TEST_CASE("a driver without devices") {
  SUBCASE("cuInit reports CUDA_ERROR_NO_DEVICE") {
    FakeDriver fake("8.0", nullptr, "100");
    CHECK(cuda::device_count() == 0);
    CHECK(cuda::unavailable_reason() ==
          "the CUDA driver reports no device (cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable "
          "device is detected))");
  }
  SUBCASE("cuDeviceGetCount reports zero") {
    FakeDriver fake("");
    CHECK(cuda::device_count() == 0);
    CHECK(cuda::unavailable_reason() == "the CUDA driver reports no device");
  }
  SUBCASE("cuInit fails otherwise") {
    FakeDriver fake("8.0", nullptr, "3");
    CHECK(cuda::device_count() == 0);
    CHECK(cuda::unavailable_reason().find("failed to initialise (cuInit: "
                                          "CUDA_ERROR_NOT_INITIALIZED") != std::string::npos);
  }
}

TEST_CASE("a driver older than the newest entry point kjit calls") {
  FakeDriver fake("8.0,9.0", "12040");
  CHECK(cuda::device_count() == 0);
  const std::string& reason = cuda::unavailable_reason();
  CHECK(reason.find("too old") != std::string::npos);
  CHECK(reason.find("CUDA 12.4") != std::string::npos);
  CHECK(reason.find("needs a driver for CUDA " + cuda::version_text(cuda::kMinDriverVersion) + " or newer") !=
        std::string::npos);
}

TEST_CASE("code from a newer NVRTC than the driver's release: the device says which to update") {
  // Cubins and PTX of NVRTC X.y load on drivers of release X or newer only.
  const int nvrtc = compiler::nvrtc_cuda_version();
  const int older = (nvrtc / 1000 - 1) * 1000 + 80;  // the last minor of the release before
  if (older < cuda::kMinDriverVersion) {
    MESSAGE("NVRTC " << cuda::version_text(nvrtc) << " is the oldest release kjit runs with: nothing to check");
    return;
  }
  FakeDriver fake("8.0,9.0", std::to_string(older).c_str());
  CHECK(cuda::device_count() == 0);
  const std::string& reason = cuda::unavailable_reason();
  CHECK(reason.find("NVRTC " + cuda::version_text(nvrtc) + " builds code for CUDA " +
                    std::to_string(nvrtc / 1000) + " drivers, but the driver supports CUDA " +
                    cuda::version_text(older)) != std::string::npos);
  CHECK(reason.find("update the NVIDIA driver, or use an NVRTC " + std::to_string(older / 1000) + ".x") !=
        std::string::npos);
}

TEST_CASE("driver errors carry the call, the error's name and the driver's description") {
  FakeDriver fake;
  std::string err = driver_error([] { cuda::stream_synchronize(0, reinterpret_cast<void*>(0x1234)); });
  CHECK(err.find("cuStreamSynchronize") != std::string::npos);
  CHECK(err.find("CUDA_ERROR_INVALID_HANDLE (invalid resource handle)") != std::string::npos);
}

TEST_CASE("ordinals out of range are errors that name the devices there are") {
  FakeDriver fake;
  CHECK(driver_error([] { cuda::properties(2); }) ==
        "cuda:2 is out of range: the CUDA driver reports 2 devices (cuda:0 to cuda:1)");
  CHECK(driver_error([] { cuda::alloc(-1, 8); }).find("cuda:-1 is out of range") !=
        std::string::npos);
  FakeDriver one("9.0");
  CHECK(driver_error([] { cuda::properties(1); }) ==
        "cuda:1 is out of range: the CUDA driver reports 1 device (cuda:0)");
}

TEST_CASE("libkjit.so does not link the CUDA driver") {
  std::string lib = std::string(KJIT_BINARY_DIR) + "/lib/libkjit.so";
  std::string out;
  REQUIRE(kjit::test::run_command("ldd " + lib, &out) == 0);
  CHECK(out.find("libkjit") == std::string::npos);  // ldd lists dependencies, not the library
  CHECK(out.find("libcuda") == std::string::npos);
  REQUIRE(kjit::test::run_command("nm -D --undefined-only " + lib, &out) == 0);
  CHECK(out.find(" cuInit") == std::string::npos);
  CHECK(out.find(" cuLaunchKernel") == std::string::npos);
}
