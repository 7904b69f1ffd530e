// The status of a launch is its own: concurrent launches of one module, one overflowing a
// loop's checkpoint bound and one not, each see exactly their own outcome (a status word per
// module let one miss the overflow and the other take the blame).
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <string>

#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"

using namespace kjit;

namespace status_tests {
KJIT_MODULE(runtime_status)
using namespace kjit::dsl;
KJIT_KERNEL(iterate, (Array<Double> x, Int n, Array<Double> out)) {
  Int i = tid();
  Var<Double> y = x[i];
  For(0, n, [&](Int) { y = sin(y) + 0.5 * y; });
  out[i] = y;
}
KJIT_KERNEL(check_equal, (Array<Double> a, Array<Double> b)) {
  Int i = tid();
  expect_near(a[i], b[i], 1e-9);
}
}  // namespace status_tests

TEST_CASE("concurrent adjoint launches: only the overflowing one fails, every time") {
  ModuleOptions o;
  o.loop_checkpoints = 4;  // bound: 16 iterations
  kjit::module("runtime_status").set_options(o);
  constexpr int kThreads = 4, kRounds = 60, kN = 4096;  // several pool chunks per launch
  std::atomic<int> missed{0}, blamed{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const bool overflow = t % 2 == 0;
      auto x = from_vector(std::vector<double>(kN, 0.25)), out = zeros<double>({kN});
      auto gx = zeros<double>({kN}), gout = from_vector(std::vector<double>(kN, 1.0));
      for (int r = 0; r < kRounds; ++r) {
        try {
          launch_adjoint(status_tests::iterate, kN, {x, overflow ? 17 : 12, out}, {gx, {}, gout});
          if (overflow) ++missed;
        } catch (const Error& e) {
          if (!overflow) ++blamed;
          if (std::string(e.what()).find("more than 16 iterations") == std::string::npos) ++other;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(missed == 0);
  CHECK(blamed == 0);
  CHECK(other == 0);
}

TEST_CASE("concurrent forward launches with a device-side check: a failure stays with its launch") {
  constexpr int kThreads = 4, kRounds = 30, kN = 1 << 16;  // each failing launch prints one line
  std::atomic<int> missed{0}, blamed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const bool fail = t % 2 == 0;
      auto a = from_vector(std::vector<double>(kN, 1.0));
      std::vector<double> bv(kN, 1.0);
      if (fail) bv[0] = 2.0;  // reported early: a long window for another launch to see it
      auto b = from_vector(bv);
      for (int r = 0; r < kRounds; ++r) {
        try {
          launch(status_tests::check_equal, kN, a, b);
          if (fail) ++missed;
        } catch (const Error&) {
          if (!fail) ++blamed;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(missed == 0);
  CHECK(blamed == 0);
}
