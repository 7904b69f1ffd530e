// Devices: their properties as the driver reports them, and the target kjit compiles for each
// (a cubin for the exact architecture, else PTX for the newest NVRTC architecture below it).
#include <doctest/doctest.h>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "cuda/device_query.hpp"
#include "fake_driver_fixture.hpp"
#include "kjit/error.hpp"

using namespace kjit;
using kjit::compiler::Target;
using kjit::test::FakeDriver;

TEST_CASE("device properties come from the driver") {
  FakeDriver fake("8.0,8.6");
  REQUIRE(cuda::device_count() == 2);
  const cuda::DeviceProperties& p0 = cuda::properties(0);
  CHECK(p0.name == "Fake CUDA Device 0 (sm_80)");
  CHECK(p0.major == 8);
  CHECK(p0.minor == 0);
  CHECK(p0.sm_count == 8);
  CHECK(p0.total_memory == size_t(16) << 30);
  CHECK(p0.max_threads_per_block == 1024);
  CHECK(p0.max_blocks_per_sm == 16);
  CHECK(p0.max_threads_per_sm == 2048);
  CHECK(p0.max_shared_bytes_per_block == 99 * 1024);
  const cuda::DeviceProperties& p1 = cuda::properties(1);
  CHECK(p1.minor == 6);
  CHECK(p1.sm_count == 16);
  CHECK(p1.total_memory == size_t(24) << 30);
}

TEST_CASE("choose_target: the exact architecture as a cubin, else PTX of the one below") {
  std::vector<int> archs{75, 80, 86, 90, 100, 120};
  CHECK(cuda::choose_target(80, archs) == Target::cubin(80));
  CHECK(cuda::choose_target(120, archs) == Target::cubin(120));
  CHECK(cuda::choose_target(89, archs) == Target::ptx(86));
  CHECK(cuda::choose_target(121, archs) == Target::ptx(120));
  CHECK(cuda::choose_target(150, archs) == Target::ptx(120));
  CHECK_FALSE(cuda::choose_target(70, archs).has_value());
  CHECK_FALSE(cuda::choose_target(80, {}).has_value());
}

TEST_CASE("a device newer than NVRTC's newest architecture gets PTX the driver JIT-compiles") {
  const std::vector<int>& archs = compiler::nvrtc_supported_archs();
  REQUIRE(!archs.empty());
  int newest = archs.back();
  // One minor version past NVRTC's newest, and a whole generation past it.
  std::string newer = std::to_string(newest / 10) + "." + std::to_string(newest % 10 + 1);
  std::string devices = "8.0," + newer + ",99.0";
  FakeDriver fake(devices.c_str());
  REQUIRE(cuda::device_count() == 3);
  CHECK(cuda::target_for(0) == Target::cubin(80));
  CHECK(cuda::target_for(1) == Target::ptx(newest));
  CHECK(cuda::target_for(2) == Target::ptx(newest));
}

TEST_CASE("a device older than every NVRTC architecture cannot be used") {
  SUBCASE("beside a usable one, it is an error to target it") {
    FakeDriver fake("9.0,3.5");
    REQUIRE(cuda::device_count() == 2);
    CHECK(cuda::target_for(0) == Target::cubin(90));
    try {
      cuda::target_for(1);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::Driver);
      CHECK(std::string(e.what()).find("cuda:1 (Fake CUDA Device 1 (sm_35), compute capability "
                                       "3.5) is older than every architecture") !=
            std::string::npos);
    }
  }
  SUBCASE("alone, CUDA is unavailable") {
    FakeDriver fake("3.5");
    CHECK(cuda::device_count() == 0);
    CHECK(cuda::unavailable_reason().find("no CUDA device is usable") != std::string::npos);
  }
}
