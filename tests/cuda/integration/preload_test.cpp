// Preloading through the module table on two fake devices: each module is loaded once per
// device, later preloads and launches load nothing, and the target follows the device.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "integration/fake_devices.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/modules.hpp"
#include "kjit/runtime/devices.hpp"

using namespace kjit;

namespace preload_probe {
using namespace kjit::dsl;
KJIT_MODULE(cuda_preload_probe)
KJIT_KERNEL(scale, (Array<Float> x, Float s, Array<Float> out)) {
  Int i = tid();
  out[i] = x[i] * s;
}
}  // namespace preload_probe

namespace preload_current {
using namespace kjit::dsl;
KJIT_MODULE(cuda_preload_current)
KJIT_KERNEL(shift, (Array<Float> x, Float s, Array<Float> out)) {
  Int i = tid();
  out[i] = x[i] + s;
}
}  // namespace preload_current

namespace {

/// Loads recorded per device of images that define `entry`.
std::vector<int> loads_of(const std::string& entry) {
  std::vector<int> per_device(2, 0);
  for (auto& load : fake_cuda::module_loads()) {
    std::string image(load.image.begin(), load.image.end());
    if (image.find(entry) != std::string::npos) ++per_device.at(size_t(load.device));
  }
  return per_device;
}

}  // namespace

TEST_CASE("preloading on all devices loads each module once per device") {
  kjit::test::use_fake_devices();
  std::string entry = codegen::entry_name("preload_probe::scale", codegen::EntryKind::Forward);
  CHECK(loads_of(entry) == std::vector<int>{0, 0});

  std::vector<ModuleLoad> loads = preload_module("cuda_preload_probe", PreloadMode::AllDevices);
  REQUIRE(loads.size() == 2);
  CHECK(loads[0].device == "cuda:0");
  CHECK(loads[1].device == "cuda:1");
  CHECK(loads[0].build.target == "sm_80");
  CHECK(loads[1].build.target ==
        "compute_" + std::to_string(compiler::nvrtc_supported_archs().back()));
  CHECK(loads_of(entry) == std::vector<int>{1, 1});

  // Again, and then launches on both devices: nothing more is loaded.
  preload_module("cuda_preload_probe", PreloadMode::AllDevices);
  for (int d : {0, 1}) {
    auto x = NdArray::zeros(ir_type_of<float>(), {64}, Device::cuda(d));
    auto out = NdArray::zeros(ir_type_of<float>(), {64}, Device::cuda(d));
    launch(preload_probe::scale, 64, x, 2.0f, out);
    CHECK(fake_cuda::launches().back().device == d);
  }
  CHECK(loads_of(entry) == std::vector<int>{1, 1});
}

TEST_CASE("preloading on the current device loads on cuda:0 only") {
  kjit::test::use_fake_devices();
  CHECK(default_device() == Device::cuda(0));
  std::string entry = codegen::entry_name("preload_current::shift", codegen::EntryKind::Forward);
  std::vector<ModuleLoad> loads = preload_module("cuda_preload_current", PreloadMode::CurrentDevice);
  REQUIRE(loads.size() == 1);
  CHECK(loads[0].device == "cuda:0");
  CHECK(loads_of(entry) == std::vector<int>{1, 0});
  CHECK(preload_module("cuda_preload_current", PreloadMode::None).empty());
}

TEST_CASE("device names parse against the fake devices") {
  kjit::test::use_fake_devices();
  CHECK(Device::parse("cuda:1") == Device::cuda(1));
  CHECK(Device::parse("cuda") == Device::cuda(0));
  try {
    Device::parse("cuda:2");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Driver);
    CHECK(std::string(e.what()).find("out of range") != std::string::npos);
  }
}

TEST_CASE("cuda_info describes the driver and each device with its target") {
  kjit::test::use_fake_devices();
  CudaInfo info = cuda_info();
  CHECK(info.available);
  CHECK(info.unavailable_reason.empty());
  CHECK(info.driver_version == 13000);
  CHECK(info.driver_path == KJIT_FAKE_CUDA_LIBRARY);
  REQUIRE(info.devices.size() == 2);
  CHECK(info.devices[0].name == "Fake CUDA Device 0 (sm_80)");
  CHECK(info.devices[0].compute_major == 8);
  CHECK(info.devices[0].sm_count == 8);
  CHECK(info.devices[0].total_memory == size_t(16) << 30);
  CHECK(info.devices[0].max_threads_per_block == 1024);
  CHECK(info.devices[0].max_blocks_per_sm == 16);
  CHECK(info.devices[0].target == "sm_80");
  CHECK(info.devices[1].target ==
        "compute_" + std::to_string(compiler::nvrtc_supported_archs().back()));
  CHECK(info.devices[1].target_error.empty());
}
