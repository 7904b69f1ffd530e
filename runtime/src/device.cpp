// Device names ("cpu", "cuda:N"), parsing with reasons, and the default device.
#include "kjit/runtime/device.hpp"

#include <cstring>
#include <string>
#include <string_view>

#include <cctype>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/error.hpp"

namespace kjit {

std::string Device::name() const {
  return is_cpu() ? "cpu" : "cuda:" + std::to_string(ordinal_);
}

Device Device::parse(const char* name) { return parse(name, name ? std::strlen(name) : 0); }

Device Device::parse(const char* name, size_t length) {
  const std::string_view text(name, length);
  if (text == "cpu") return cpu();
  int ordinal = -1;
  if (text == "cuda") {
    ordinal = 0;
  } else if (text.substr(0, 5) == "cuda:" && text.size() > 5 && text.size() < 12) {
    ordinal = 0;
    for (char c : text.substr(5)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        ordinal = -1;
        break;
      }
      ordinal = ordinal * 10 + (c - '0');
    }
  }
  if (ordinal < 0)
    throw Error(ErrorKind::User, "unknown device '" + std::string(text) +
                                     "': devices are named cpu, cuda or cuda:N");
  if (!cuda::unavailable_reason().empty())
    throw Error(ErrorKind::Driver, "device " + std::string(text) + " cannot be used: " +
                                       cuda::unavailable_reason());
  int count = cuda::device_count();
  if (ordinal >= count)
    throw Error(ErrorKind::Driver, "device cuda:" + std::to_string(ordinal) +
                                       " is out of range: " + std::to_string(count) +
                                       (count == 1 ? " CUDA device" : " CUDA devices"));
  return cuda(ordinal);
}

Device default_device() {
  static const Device device = cuda::device_count() > 0 ? Device::cuda(0) : Device::cpu();
  return device;
}

}  // namespace kjit
