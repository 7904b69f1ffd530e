// A test fixture that points kjit at the fake CUDA driver with a chosen set of devices, and
// gives both a fresh start.
#pragma once

#include "cuda/driver_api.hpp"
#include "fake_cuda_control.hpp"
#include "test_support.hpp"

namespace kjit::test {

/// While it lives, kjit's CUDA backend talks to the fake driver configured by the arguments
/// (see fake_cuda_control.hpp); kjit and the fake both start from scratch.
class FakeDriver {
 public:
  explicit FakeDriver(const char* devices = "8.0,9.0", const char* driver_version = nullptr,
                      const char* init_result = nullptr, const char* no_proc_address = nullptr)
      : driver_("KJIT_CUDA_DRIVER", KJIT_FAKE_CUDA_LIBRARY),
        devices_("KJIT_FAKE_CUDA_DEVICES", devices),
        version_("KJIT_FAKE_CUDA_DRIVER_VERSION", driver_version),
        init_("KJIT_FAKE_CUDA_INIT_RESULT", init_result),
        no_proc_("KJIT_FAKE_CUDA_NO_PROC_ADDRESS", no_proc_address) {
    fake_cuda::reset();
    cuda::detail::reset_for_testing();
  }
  ~FakeDriver() { cuda::detail::reset_for_testing(); }

 private:
  ScopedEnv driver_, devices_, version_, init_, no_proc_;
};

/// Names of the recorded driver calls, in order.
inline std::vector<std::string> call_names() {
  std::vector<std::string> out;
  for (auto& c : fake_cuda::calls()) out.push_back(c.name);
  return out;
}

/// Index of the first recorded call named `name` (-1 when absent).
inline int first_call(const std::string& name) {
  auto calls = fake_cuda::calls();
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].name == name) return int(i);
  return -1;
}

}  // namespace kjit::test
