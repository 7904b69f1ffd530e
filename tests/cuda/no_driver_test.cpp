// A process without a CUDA driver (KJIT_CUDA_DRIVER names a missing library): default_device()
// is cpu, cuda:0 fails saying why, and the cpu still runs kernels. default_device() is decided
// once per process, so the checks run in a fresh one: this binary, run again on one test case.
#include <doctest/doctest.h>


#include <cstdio>
#include <cstdlib>
#include <functional>

#include "kjit/kjit.hpp"
#include "saxpy.hpp"
#include "test_support.hpp"

using namespace kjit;

namespace {
constexpr const char* kMissingDriver = "/nonexistent/kjit-test/libcuda.so.1";

/// "<what>: <the Error's message>" (or "<what>: no error") on one line of stdout.
void report(const char* what, const std::function<void()>& f) {
  std::string message = "no error";
  try {
    f();
  } catch (const Error& e) {
    message = std::string(e.kind() == ErrorKind::Driver ? "Driver error: " : "other error: ") + e.what();
  }
  std::printf("%s: %s\n", what, message.c_str());
}
}  // namespace

// Run by the test below in a second process (KJIT_NO_DRIVER_PROBE set).
TEST_CASE("no driver probe" * doctest::skip(std::getenv("KJIT_NO_DRIVER_PROBE") == nullptr)) {
  std::printf("default_device: %s\n", default_device().name().c_str());
  report("parse cuda:0", [] { Device::parse("cuda:0"); });
  report("array on cuda:0", [] { NdArray::zeros(ir_type_of<float>(), {4}, Device::cuda(0)); });
  NdArray x = from_vector(std::vector<float>{1, 2}), y = from_vector(std::vector<float>{3, 4});
  NdArray out = zeros<float>({2});
  launch(demo::saxpy, 2, x, y, 2.0f, out);
  std::printf("cpu saxpy: %g %g\n", double(out.to_vector<float>()[0]), double(out.to_vector<float>()[1]));
}

TEST_CASE("without a driver, default_device() is cpu and cuda:0 fails saying why") {
  std::string output;
  int rc = test::run_test_case(std::string("KJIT_NO_DRIVER_PROBE=1 KJIT_CUDA_DRIVER=") + kMissingDriver,
                               "no driver probe", &output);
  INFO(output);
  REQUIRE(rc == 0);
  const std::string reason = std::string("no CUDA driver found (") + kMissingDriver +
                             ": cannot open shared object file: No such file or directory); KJIT_CUDA_DRIVER "
                             "names a library that cannot be opened";
  CHECK(output.find("default_device: cpu\n") != std::string::npos);
  CHECK(output.find("parse cuda:0: Driver error: device cuda:0 cannot be used: " + reason + "\n") !=
        std::string::npos);
  CHECK(output.find("array on cuda:0: Driver error: cuda:0 is not available: " + reason + "\n") !=
        std::string::npos);
  CHECK(output.find("cpu saxpy: 5 8\n") != std::string::npos);
}
