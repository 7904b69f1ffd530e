// examples/warp/spin_lock.cpp — Warp 1.19's warp/examples/core/example_spin_lock.py in kjit: 1024
// threads take turns in a critical section guarded by a spin lock (atomic_cas to acquire,
// atomic_exch to release) and count there, beside an atomic counter. Writes counter, atomic
// counter and lock (int32) to --out and prints the milliseconds per launch, for
// scripts/warp_examples.sh to compare with Warp's.
// Usage: warp_spin_lock [--threads N] [--frames N] [--out FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "port_output.hpp"

namespace spin_lock {
using namespace kjit::dsl;
KJIT_MODULE(warp_spin_lock)

/// Tries to take the lock by setting it to 1 where it is 0, until it succeeds.
inline const auto spinlock_acquire = func("spinlock_acquire", [](Array<Int> lock) {
  While([&] { return atomic_cas(lock, 0, 0, 1) == 1; }, [] {});
});
/// Releases the lock by setting it back to 0.
inline const auto spinlock_release = func("spinlock_release", [](Array<Int> lock) { atomic_exch(lock, 0, 0); });
/// A read that goes to memory (Warp's arrays cannot be volatile either).
inline const auto volatile_read = func("volatile_read", [](Array<Int> ptr, Int index) {
  Int value = atomic_exch(ptr, index, 0);
  atomic_exch(ptr, index, value);
  return value;
});

KJIT_KERNEL(test_spinlock_counter, (Array<Int> counter, Array<Int> atomic_counter, Array<Int> lock)) {
  // Try to acquire the lock
  spinlock_acquire(lock);
  // Critical section - increment counter
  Int value = volatile_read(counter, 0);
  counter[0] = value + 1;
  // Release the lock
  spinlock_release(lock);
  // Increment atomic counter for comparison
  atomic_add(atomic_counter, 0, 1);
}
}  // namespace spin_lock

int main(int argc, char** argv) {
  int n = 1024, frames = 5;
  std::string out;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--threads")) n = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--frames")) frames = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--out")) out = argv[a + 1];
  }
  kjit::NdArray lock = kjit::zeros<int>({1}), counter = kjit::zeros<int>({1}), atomic_counter = kjit::zeros<int>({1});
  auto frame = [&] {
    lock.zero();
    counter.zero();
    atomic_counter.zero();
    kjit::launch(spin_lock::test_spinlock_counter, n, counter, atomic_counter, lock);
  };
  const double median = warp_port::median_ms(frames, frame);
  const int values[3] = {counter.to_vector<int>()[0], atomic_counter.to_vector<int>()[0], lock.to_vector<int>()[0]};
  if (values[1] != n) std::printf("Atomic counter must equal the thread count %d, got %d\n", n, values[1]);
  if (values[0] != n) std::printf("Spin-lock counter must equal the thread count %d, got %d\n", n, values[0]);
  if (values[2] != 0) std::printf("Lock must be released with value 0, got %d\n", values[2]);
  std::printf("Final counter value: %d\nFinal atomic counter value: %d\n", values[0], values[1]);
  if (!out.empty()) std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(values), sizeof values);
  std::printf("spin lock, %d threads: %.3f ms per frame (median of %d)\n", n, median, frames);
  return values[0] == n && values[1] == n && values[2] == 0 ? 0 : 1;
}
