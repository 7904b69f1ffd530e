// Launches from many threads at once on one kernel are correct (XLA runs handlers
// concurrently); the first launch from all of them builds the module once.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "kjit/kjit.hpp"

using namespace kjit;

namespace cc_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_concurrency)
KJIT_KERNEL(affine, (Array<Double> x, Double a, Double b, Array<Double> out)) {
  Int i = tid();
  out[i] = a * x[i] + b;
}
}  // namespace cc_tests

TEST_CASE("8 threads launching one kernel at once") {
  const int n = 50000;
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) x[size_t(i)] = i * 0.001;
  auto X = from_vector(x);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto out = zeros<double>({n});
      for (int rep = 0; rep < 20; ++rep) {
        launch(cc_tests::affine, n, X, double(t), double(rep), out);
        auto o = out.to_vector<double>();
        for (int i = 0; i < n; i += 97)
          if (o[size_t(i)] != double(t) * x[size_t(i)] + double(rep)) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
}
