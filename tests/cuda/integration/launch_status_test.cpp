// Per-launch status on CUDA: each launch gets the calling thread's own device slot in
// launch_bounds_t::status, reads it back on its stream, and throws only what its own threads
// reported. The fake driver's launch hook plays the kernel that overflows a loop's bound.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <string>

#include "integration/fake_devices.hpp"
#include "kjit/abi.h"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"

using namespace kjit;

namespace cuda_status_probe {
using namespace kjit::dsl;
KJIT_MODULE(cuda_status_probe)
KJIT_KERNEL(iterate, (Array<Float> x, Int n, Array<Float> out)) {
  Int i = tid();
  Var<Float> y = x[i];
  For(0, n, [&](Int) { y = y * 0.5f; });
  out[i] = y;
}
}  // namespace cuda_status_probe

TEST_CASE("CUDA: concurrent adjoint launches each read their own status slot") {
  kjit::test::use_fake_devices();
  ModuleOptions o;
  o.loop_checkpoints = 4;  // bound: 16 iterations
  kjit::module("cuda_status_probe").set_options(o);
  std::mutex mutex;
  std::map<std::thread::id, std::set<uintptr_t>> slots;  // the slots each thread's launches used
  fake_cuda::set_launch_hook([&](const fake_cuda::LaunchRecord& r) {
    if (r.function.find("cuda_status_probe__iterate_adj") == std::string::npos) return;
    kj::launch_bounds_t dim;
    std::memcpy(&dim, r.params.at(0).data(), sizeof dim);
    kj::value_t<int32_t> nv{};  // n, a value parameter: kjit/abi.h's value_t
    REQUIRE(r.params.at(2).size() == sizeof nv);
    std::memcpy(&nv, r.params.at(2).data(), sizeof nv);
    const int32_t n = nv.value;
    {
      std::lock_guard<std::mutex> lock(mutex);
      slots[std::this_thread::get_id()].insert(reinterpret_cast<uintptr_t>(dim.status));
    }
    // The kernel of a launch whose loop runs past 16 iterations reports loop 1 overflowing.
    if (n > 16 && dim.status && dim.status->code == 0) dim.status->code = 1;
  });
  constexpr int kThreads = 4, kRounds = 50;
  std::atomic<int> missed{0}, blamed{0}, other{0}, finished{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const bool overflow = t % 2 == 0;
      Device d = Device::cuda(0);
      auto x = NdArray::zeros(ir_type_of<float>(), {256}, d), out = NdArray::zeros(ir_type_of<float>(), {256}, d);
      auto gx = NdArray::zeros(ir_type_of<float>(), {256}, d), gout = NdArray::zeros(ir_type_of<float>(), {256}, d);
      for (int r = 0; r < kRounds; ++r) {
        try {
          launch_adjoint(cuda_status_probe::iterate, 256, {x, overflow ? 17 : 12, out}, {gx, {}, gout});
          if (overflow) ++missed;
        } catch (const Error& e) {
          if (!overflow) ++blamed;
          if (std::string(e.what()).find("more than 16 iterations") == std::string::npos) ++other;
        }
      }
      // Stay alive until every thread is done: a thread that ends gives its slot back, and
      // the next thread may take it (which is fine, but not what is checked here).
      ++finished;
      while (finished < kThreads) std::this_thread::yield();
    });
  }
  for (auto& th : threads) th.join();
  fake_cuda::set_launch_hook(nullptr);
  CHECK(missed == 0);
  CHECK(blamed == 0);
  CHECK(other == 0);
  // One slot per thread, never null, never shared.
  std::set<uintptr_t> all;
  REQUIRE(slots.size() == size_t(kThreads));
  for (const auto& [id, used] : slots) {
    CHECK(used.size() == 1);
    CHECK(*used.begin() != 0);
    all.insert(used.begin(), used.end());
  }
  CHECK(all.size() == size_t(kThreads));
}
