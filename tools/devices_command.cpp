// `kjit devices`: this machine's CUDA driver and GPUs, and the target kjit builds for each.
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "commands.hpp"
#include "kjit/runtime/devices.hpp"

namespace kjit::tool {

namespace {

namespace cl = llvm::cl;

cl::SubCommand sub("devices", "List this machine's GPUs and the target kjit builds for each");
cl::OptionCategory category("devices options");
cl::opt<bool> json("json", cl::desc("Print one JSON object"), cl::sub(sub), cl::cat(category));

const char* const overview =
    "kjit devices: the CUDA driver and the GPUs kjit can use here, each with its name, compute\n"
    "capability and the target kjit builds for it (sm_XX: native code; compute_XX: PTX for a GPU\n"
    "newer than the installed NVRTC). Without a driver or a GPU it says why; kernels then run on\n"
    "the cpu device, and `kjit precompile --arch ...` still builds for any GPU. The first line\n"
    "says which NVRTC builds GPU targets (the CUDA toolkit's, or the nvidia-cuda-nvrtc wheel's).\n\n"
    "  kjit devices\n"
    "  kjit devices --json\n";

std::string driver_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

int run() {
  CudaInfo info = cuda_info();
  compiler::NvrtcInfo nvrtc = compiler::nvrtc_info();
  if (json) {
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (const CudaDeviceInfo& d : info.devices)
      devices.push_back({{"device", "cuda:" + std::to_string(d.ordinal)},
                         {"name", d.name},
                         {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
                         {"target", d.target.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.target)},
                         {"target_error", d.target_error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.target_error)},
                         {"sm_count", d.sm_count},
                         {"memory_bytes", d.total_memory}});
    nlohmann::ordered_json j = {{"available", info.available},
                        {"reason", info.available ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(info.unavailable_reason)},
                        {"driver", info.driver_path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(info.driver_path)},
                        {"driver_version", info.driver_version ? nlohmann::ordered_json(driver_version(info.driver_version))
                                                               : nlohmann::ordered_json(nullptr)},
                        {"nvrtc", nvrtc_json(nvrtc)},
                        {"devices", std::move(devices)}};
    llvm::outs() << j.dump(2) << "\n";
    return kExitOk;
  }
  auto& out = llvm::outs();
  out << compiler::describe(nvrtc) << "\n";
  if (info.driver_version)
    out << "CUDA driver " << driver_version(info.driver_version) << " (" << info.driver_path << ")\n";
  if (!info.available) {
    out << "no usable GPU: " << info.unavailable_reason
        << "\nkjit runs kernels on the cpu device; `kjit precompile --arch sm_80,sm_90` still builds for GPUs.\n";
    return kExitOk;
  }
  Table t({"device", "name", "compute", "SMs", "memory", "target"}, {false, false, false, true, true});
  for (const CudaDeviceInfo& d : info.devices)
    t.add({"cuda:" + std::to_string(d.ordinal), d.name,
           std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor), std::to_string(d.sm_count),
           format_bytes(d.total_memory), d.target.empty() ? "none: " + d.target_error : d.target});
  out << "\n";
  t.print(out);
  return kExitOk;
}

}  // namespace

const Command& devices_command() {
  static const Command command{&sub, &category, overview, run};
  return command;
}

}  // namespace kjit::tool
