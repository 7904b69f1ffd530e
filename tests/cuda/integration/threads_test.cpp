// Launches from several threads at once, one per device and two per device (XLA calls its
// handlers from one thread per device): first loads race, contexts are made current per call.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "integration/fake_devices.hpp"
#include "kjit/kjit.hpp"

using namespace kjit;

namespace thread_probe {
using namespace kjit::dsl;
KJIT_MODULE(cuda_thread_probe)
KJIT_KERNEL(axpb, (Array<Float> x, Float a, Float b, Array<Float> out)) {
  Int i = tid();
  out[i] = a * x[i] + b;
}
}  // namespace thread_probe

TEST_CASE("concurrent launches on two devices from four threads") {
  kjit::test::use_fake_devices();
  const int per_thread = 200;
  size_t before = fake_cuda::launches().size();
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        Device d = Device::cuda(t % 2);
        auto x = NdArray::zeros(ir_type_of<float>(), {512}, d);
        auto out = NdArray::zeros(ir_type_of<float>(), {512}, d);
        for (int i = 0; i < per_thread; ++i) launch(thread_probe::axpb, 512, x, float(t), 1.0f, out);
      } catch (...) {
        ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  auto all = fake_cuda::launches();
  int per_device[2] = {0, 0};
  for (size_t i = before; i < all.size(); ++i) ++per_device[all[i].device];
  CHECK(per_device[0] == 2 * per_thread);
  CHECK(per_device[1] == 2 * per_thread);
  // The module was loaded once per device, however the first launches raced.
  int loads[2] = {0, 0};
  for (auto& load : fake_cuda::module_loads()) {
    std::string image(load.image.begin(), load.image.end());
    if (image.find("kjit_thread_probe__axpb_fwd") != std::string::npos) ++loads[load.device];
  }
  CHECK(loads[0] == 1);
  CHECK(loads[1] == 1);
}
