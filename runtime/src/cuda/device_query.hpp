// Describing a device: its properties from the driver and the compilation target kjit picks.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "cuda/driver_api.hpp"

namespace kjit::cuda {

/// Queries device `ordinal` (name, compute capability, limits) and picks its target, given the
/// driver's CUDA version (cuDriverGetVersion). Throws a Driver error when the driver cannot
/// answer.
std::unique_ptr<DeviceState> query_device(const DriverApi& api, int driver_version, int ordinal);

/// The target for a device of compute capability `arch` (×10) given the architectures NVRTC
/// supports (ascending): a cubin for `arch` itself when NVRTC has it, else PTX for the highest
/// architecture below it, which the driver JIT-compiles; nothing when the device is older than
/// every architecture NVRTC supports.
std::optional<compiler::Target> choose_target(int arch, const std::vector<int>& nvrtc_archs);

}  // namespace kjit::cuda
