// examples/warp/custom_allocator.cpp — Warp 1.19's warp/examples/core/example_custom_allocator.py
// in kjit: a logging allocator wrapping the device's built-in one allocates two arrays, a
// ScopedAllocator gives the built-in one back for a third, and the two are freed through the
// logging one. Writes the allocator's calls ("alloc 4000", "dealloc 4000", ..., the totals) to
// --out, which scripts/warp_examples.sh compares with the calls Warp's allocator logs.
// Usage: warp_custom_allocator [--device cpu|cuda:N] [--frames N] [--out FILE]
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/allocator.hpp"

namespace {

/// Wraps a device's built-in allocator and prints every allocation and free.
class LoggingAllocator : public kjit::Allocator {
 public:
  LoggingAllocator(const kjit::Device& device, bool quiet)
      : inner_(kjit::default_allocator(device)), quiet_(quiet) {}

  void* allocate(size_t bytes) override {
    void* ptr = inner_.allocate(bytes);
    total_allocated += bytes;
    if (!quiet_)
      std::printf("  [alloc]   %10zu bytes -> ptr=0x%016" PRIXPTR "  (total: %zu)\n", bytes, uintptr_t(ptr), total_allocated);
    calls += "alloc " + std::to_string(bytes) + "\n";
    return ptr;
  }
  void deallocate(void* ptr, size_t bytes) override {
    inner_.deallocate(ptr, bytes);
    total_deallocated += bytes;
    if (!quiet_)
      std::printf("  [dealloc] %10zu bytes    ptr=0x%016" PRIXPTR "  (freed: %zu)\n", bytes, uintptr_t(ptr), total_deallocated);
    calls += "dealloc " + std::to_string(bytes) + "\n";
  }

  size_t total_allocated = 0;
  size_t total_deallocated = 0;
  std::string calls;  ///< one line per call, for the comparison with Warp's

 private:
  kjit::Allocator& inner_;
  bool quiet_;
};

/// The example as Warp's Example.__init__ runs it; returns the calls its allocator saw.
std::string run_example(const kjit::Device& device, bool quiet) {
  auto say = [&](const char* text) {
    if (!quiet) std::printf("%s", text);
  };
  LoggingAllocator alloc(device, quiet);
  say("Setting custom allocator...\n");
  kjit::set_device_allocator(device, &alloc);

  say("\nCreating arrays:\n");
  auto a = kjit::zeros<float>({1000}, device);
  auto b = kjit::empty<float>({500}, device);
  b.fill(1.0f);  // wp.ones

  say("\nUsing ScopedAllocator to temporarily restore the default:\n");
  {
    kjit::ScopedAllocator builtin(device, nullptr);
    auto c = kjit::zeros<float>({100}, device);
    if (!quiet) std::printf("  (allocated %lld elements with built-in allocator, no log)\n", (long long)c.size());
  }

  say("\nDeleting arrays:\n");
  a = kjit::NdArray();
  b = kjit::NdArray();

  if (!quiet) {
    std::printf("\nTotal allocated:   %zu bytes\n", alloc.total_allocated);
    std::printf("Total deallocated: %zu bytes\n", alloc.total_deallocated);
  }
  kjit::set_device_allocator(device, nullptr);
  say("\nRestored default allocator.\n");
  return alloc.calls + "total allocated " + std::to_string(alloc.total_allocated) + "\ntotal deallocated " +
         std::to_string(alloc.total_deallocated) + "\n";
}

}  // namespace

int main(int argc, char** argv) {
  kjit::Device device = kjit::Device::cpu();
  int frames = 5;
  std::string out;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--device")) device = kjit::Device::parse(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--frames")) frames = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--out")) out = argv[a + 1];
  }
  const std::string calls = run_example(device, false);
  if (!out.empty()) std::ofstream(out, std::ios::binary) << calls;
  // The whole example, quiet, as a frame: what a program pays for the allocator's indirection.
  std::vector<double> ms;
  for (int f = 0; f < frames; ++f) {
    auto t0 = std::chrono::steady_clock::now();
    run_example(device, true);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  if (frames > 0) std::printf("custom allocator, the example quiet: %.4f ms per frame (median of %d)\n", ms[ms.size() / 2], frames);
  return 0;
}
