// Device enumeration: the properties of each device and the target kjit compiles for it.
#include "cuda/device_query.hpp"

#include "kjit/error.hpp"

namespace kjit::cuda {

namespace {

// Runs while the driver is being opened, so errors are described through `api` directly
// (driver() is not available yet).
void check_query(const DriverApi& api, CUresult r, const std::string& call) {
  if (r != CUDA_SUCCESS)
    throw Error(ErrorKind::Driver, "CUDA driver call " + call + " failed: " + describe(api, r));
}

int attribute(const DriverApi& api, CUdevice dev, CUdevice_attribute attr, const char* what) {
  int value = 0;
  check_query(api, api.cuDeviceGetAttribute(&value, attr, dev),
              std::string("cuDeviceGetAttribute(") + what + ")");
  return value;
}

std::string arch_list(const std::vector<int>& archs) {
  std::string out;
  for (int a : archs) out += (out.empty() ? "sm_" : ", sm_") + std::to_string(a);
  return out;
}

}  // namespace

std::optional<compiler::Target> choose_target(int arch, const std::vector<int>& nvrtc_archs) {
  int best = 0;
  for (int a : nvrtc_archs) {
    if (a == arch) return compiler::Target::cubin(arch);
    if (a < arch && a > best) best = a;
  }
  if (best == 0) return std::nullopt;
  return compiler::Target::ptx(best);
}

std::unique_ptr<DeviceState> query_device(const DriverApi& api, int driver_version, int ordinal) {
  auto dev = std::make_unique<DeviceState>();
  dev->ordinal = ordinal;
  check_query(api, api.cuDeviceGet(&dev->handle, ordinal), "cuDeviceGet");
  char name[256] = {};
  check_query(api, api.cuDeviceGetName(name, sizeof(name) - 1, dev->handle), "cuDeviceGetName");
  DeviceProperties& p = dev->props;
  p.name = name;
  CUdevice h = dev->handle;
  p.major = attribute(api, h, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute major");
  p.minor = attribute(api, h, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute minor");
  p.sm_count = attribute(api, h, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  p.max_threads_per_block =
      attribute(api, h, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block");
  p.max_blocks_per_sm =
      attribute(api, h, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, "blocks per SM");
  p.max_threads_per_sm =
      attribute(api, h, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, "threads per SM");
  p.max_shared_bytes_per_block = size_t(attribute(
      api, h, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared memory per block"));
  check_query(api, api.cuDeviceTotalMem(&p.total_memory, h), "cuDeviceTotalMem");

  std::vector<int> archs;
  try {
    archs = compiler::nvrtc_supported_archs();
  } catch (const Error& e) {  // no NVRTC: the device is listed, but nothing can be built for it
    dev->target_error = "cuda:" + std::to_string(ordinal) + " (" + p.name + ") cannot be used: " + e.what();
    return dev;
  }
  // Cubins and PTX from NVRTC X.y load on drivers of release X or newer only.
  const int nvrtc_version = compiler::nvrtc_cuda_version();
  if (nvrtc_version / 1000 > driver_version / 1000) {
    const std::string driver_major = std::to_string(driver_version / 1000);
    dev->target_error = "cuda:" + std::to_string(ordinal) + " (" + p.name + ") cannot be used: NVRTC " +
                        version_text(nvrtc_version) + " builds code for CUDA " +
                        std::to_string(nvrtc_version / 1000) + " drivers, but the driver supports CUDA " +
                        version_text(driver_version) + "; update the NVIDIA driver, or use an NVRTC " +
                        driver_major + ".x (KJIT_NVRTC_PATH, or pip install nvidia-cuda-nvrtc-cu" + driver_major + ")";
    return dev;
  }
  int arch = p.major * 10 + p.minor;
  if (auto target = choose_target(arch, archs)) {
    dev->target = *target;
  } else {
    dev->target_error = "cuda:" + std::to_string(ordinal) + " (" + p.name +
                        ", compute capability " + std::to_string(p.major) + "." +
                        std::to_string(p.minor) + ") is older than every architecture the " +
                        "installed NVRTC compiles for (" + arch_list(archs) + ")";
  }
  return dev;
}

const DeviceProperties& properties(int ordinal) { return device(ordinal).props; }

compiler::Target target_for(int ordinal) {
  DeviceState& dev = device(ordinal);
  if (!dev.target_error.empty()) throw Error(ErrorKind::Driver, dev.target_error);
  return dev.target;
}

}  // namespace kjit::cuda
