// Target names ("sm_90", "compute_90", "cpu"): parsing, printing, and the architectures the
// NVRTC that was found supports.
#include "kjit/compiler/target.hpp"

#include <algorithm>
#include <cctype>

#include "kjit/error.hpp"
#include "nvrtc_api.hpp"

namespace kjit::compiler {

namespace {

std::string supported_list() {
  // A misspelt target is reported as such on machines without NVRTC too.
  if (!nvrtc_library().reason.empty()) return "none (" + nvrtc_library().reason + ")";
  std::string s;
  for (int a : nvrtc_supported_archs()) {
    if (!s.empty()) s += ", ";
    s += "sm_" + std::to_string(a);
  }
  return s;
}

[[noreturn]] void bad_target(std::string_view text, const std::string& why) {
  throw Error(ErrorKind::User,
              "invalid compilation target '" + std::string(text) + "': " + why +
                  ". Use 'cpu', 'sm_XX' (native code) or 'compute_XX' (PTX) with XX one of the "
                  "architectures this NVRTC supports: " +
                  supported_list());
}

}  // namespace

NvrtcInfo nvrtc_info() {
  const NvrtcLibrary& lib = nvrtc_library();
  NvrtcInfo info;
  info.available = lib.reason.empty();
  info.path = lib.path;
  info.origin = lib.origin;
  info.major = lib.major;
  info.minor = lib.minor;
  info.reason = lib.reason;
  return info;
}

std::string describe(const NvrtcInfo& info) {
  if (!info.available) return "no NVRTC: " + info.reason;
  return "NVRTC " + std::to_string(info.major) + "." + std::to_string(info.minor) + " (" + info.origin + ": " +
         info.path + ")";
}

int nvrtc_cuda_version() {
  nvrtc();  // throws (Driver) when there is no NVRTC
  return nvrtc_library().major * 1000 + nvrtc_library().minor * 10;
}

const std::vector<int>& nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    const NvrtcApi& api = nvrtc();  // throws (Driver) when there is no NVRTC
    std::vector<int> v;
    int n = 0;
    if (api.nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
      v.resize(size_t(n));
      if (api.nvrtcGetSupportedArchs(v.data()) != NVRTC_SUCCESS) v.clear();
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  }();
  return archs;
}

Target Target::parse(std::string_view text) {
  if (text == "cpu") return host();
  TargetKind kind;
  std::string_view digits;
  if (text.substr(0, 3) == "sm_") {
    kind = TargetKind::Cubin;
    digits = text.substr(3);
  } else if (text.substr(0, 8) == "compute_") {
    kind = TargetKind::Ptx;
    digits = text.substr(8);
  } else {
    bad_target(text, "not a target name");
  }
  if (digits.empty() || digits.size() > 4 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit((unsigned char)c); }))
    bad_target(text, "the architecture must be a number such as 90 (suffixed variants like "
                     "sm_90a are not supported)");
  int arch = std::stoi(std::string(digits));
  const auto& archs = nvrtc_supported_archs();
  if (!std::binary_search(archs.begin(), archs.end(), arch))
    bad_target(text, "architecture " + std::to_string(arch) + " is not supported by the installed NVRTC");
  return Target{kind, arch};
}

std::string Target::name() const {
  switch (kind) {
    case TargetKind::Cubin: return "sm_" + std::to_string(arch);
    case TargetKind::Ptx: return "compute_" + std::to_string(arch);
    case TargetKind::Host: return "cpu";
  }
  return "cpu";
}

}  // namespace kjit::compiler
