// Device allocators (set, scoped, restored; frees to the allocating one; null memory as a User
// error) and the memory tracker (exact counts, peaks, nested scopes, nothing recorded when off).
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "kjit/kjit.hpp"
#include "kjit/runtime/allocator.hpp"
#include "kjit/runtime/memory_tracking.hpp"
#include "user_error.hpp"

using namespace kjit;

namespace {

/// Wraps the cpu's built-in allocator and logs every call: +bytes for an allocation, -bytes for
/// a free, with the pointer.
class LoggingAllocator : public Allocator {
 public:
  struct Event {
    long bytes;  // negative: a free
    void* ptr;
  };
  void* allocate(size_t bytes) override {
    void* p = default_allocator(Device::cpu()).allocate(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    events.push_back({long(bytes), p});
    return p;
  }
  void deallocate(void* ptr, size_t bytes) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      events.push_back({-long(bytes), ptr});
    }
    default_allocator(Device::cpu()).deallocate(ptr, bytes);
  }
  std::vector<long> sizes() const {
    std::vector<long> out;
    for (const Event& e : events) out.push_back(e.bytes);
    return out;
  }
  std::vector<Event> events;

 private:
  std::mutex mutex_;
};

class NullAllocator : public Allocator {
 public:
  void* allocate(size_t) override { return nullptr; }
  void deallocate(void*, size_t) override { FAIL("nothing was allocated"); }
};

/// Sets the cpu's allocator back to the built-in one however a test ends.
struct RestoreCpuAllocator {
  ~RestoreCpuAllocator() { set_device_allocator(Device::cpu(), nullptr); }
};

/// Tracking on and everything earlier forgotten; off again at the end of the test.
struct FreshTracking {
  FreshTracking() {
    set_memory_tracking(true);
    clear_memory_tracking();
  }
  ~FreshTracking() {
    set_memory_tracking(false);
    clear_memory_tracking();
  }
};

}  // namespace

TEST_CASE("a device allocator sees every array allocation and free with its size") {
  RestoreCpuAllocator restore;
  LoggingAllocator log;
  CHECK(set_device_allocator(Device::cpu(), &log) == nullptr);  // the built-in one before
  CHECK(&device_allocator(Device::cpu()) == &log);
  {
    NdArray a = zeros<float>({1000});  // 4000 bytes
    a.requires_grad();                 // its gradient buffer: 4000
    NdArray v = from_vector(std::vector<vec3f>(10, vec3f(1, 2, 3)));  // 120
    NdArray c = a.copy();              // data only: 4000
    NdArray d = v.to(Device::cpu());   // 120
    NdArray views[] = {a.reshape({10, 100}), a.slice(0, 10), a.grad(), c.flatten()};  // no memory
    NdArray none = zeros<float>({0});  // no memory: the allocator is not asked
    CHECK(log.sizes() == std::vector<long>{4000, 4000, 120, 4000, 120});
    CHECK(a.data() == log.events[0].ptr);
    CHECK(a.grad().data() == log.events[1].ptr);
  }
  // Every allocation came back, each pointer with the size it was allocated with.
  REQUIRE(log.events.size() == 10);
  for (size_t i = 0; i < 5; ++i) {
    int frees = 0;
    for (size_t j = 5; j < 10; ++j)
      if (log.events[j].ptr == log.events[i].ptr) {
        ++frees;
        CHECK(log.events[j].bytes == -log.events[i].bytes);
      }
    CHECK(frees == 1);
  }
  // Restoring the built-in allocator: the logging one sees nothing more.
  CHECK(set_device_allocator(Device::cpu(), nullptr) == &log);
  CHECK(&device_allocator(Device::cpu()) == &default_allocator(Device::cpu()));
  zeros<float>({100}).requires_grad();
  CHECK(log.events.size() == 10);
}

TEST_CASE("scoped allocators nest and restore the allocator before them") {
  RestoreCpuAllocator restore;
  LoggingAllocator outer, inner;
  {
    ScopedAllocator a(Device::cpu(), &outer);
    NdArray x = zeros<float>({1});
    {
      ScopedAllocator b(Device::cpu(), &inner);
      NdArray y = zeros<float>({2});
      {
        ScopedAllocator builtin(Device::cpu(), nullptr);  // Warp's ScopedAllocator(device, None)
        NdArray z = zeros<float>({3});
        CHECK(&device_allocator(Device::cpu()) == &default_allocator(Device::cpu()));
      }
      CHECK(&device_allocator(Device::cpu()) == &inner);
      NdArray w = zeros<float>({4});
    }
    CHECK(&device_allocator(Device::cpu()) == &outer);
  }
  CHECK(&device_allocator(Device::cpu()) == &default_allocator(Device::cpu()));
  CHECK(outer.sizes() == std::vector<long>{4, -4});
  CHECK(inner.sizes() == std::vector<long>{8, 16, -16, -8});
}

TEST_CASE("memory goes back to the allocator that allocated it, after the device's changed") {
  RestoreCpuAllocator restore;
  LoggingAllocator first, second;
  set_device_allocator(Device::cpu(), &first);
  NdArray a = zeros<float>({10});
  set_device_allocator(Device::cpu(), &second);
  a.requires_grad();  // the gradient from the allocator set now
  NdArray b = zeros<float>({20});
  set_device_allocator(Device::cpu(), nullptr);
  a = NdArray();
  b = NdArray();
  CHECK(first.sizes() == std::vector<long>{40, -40});
  CHECK(second.sizes() == std::vector<long>{40, 80, -40, -80});
}

TEST_CASE("an allocator that returns null is a User error naming the device and the bytes") {
  RestoreCpuAllocator restore;
  NdArray kept = zeros<float>({4});
  NullAllocator none;
  set_device_allocator(Device::cpu(), &none);
  CHECK(test::error_of([] { zeros<float>({1000}); }) ==
        "out of memory on cpu: allocating 4000 bytes failed (the device's allocator returned null)");
  CHECK(test::error_of([&] { kept.requires_grad(); }) ==
        "out of memory on cpu: allocating 16 bytes failed (the device's allocator returned null)");
  CHECK_FALSE(kept.has_grad());
  CHECK(test::error_of([&] { kept.copy(); }).find("allocating 16 bytes failed") != std::string::npos);
  set_device_allocator(Device::cpu(), nullptr);
  CHECK(kept.copy().size() == 4);
}

TEST_CASE("allocations from many threads all reach the allocator and come back") {
  RestoreCpuAllocator restore;
  LoggingAllocator log;
  set_device_allocator(Device::cpu(), &log);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 100; ++i) zeros<float>({t + 1}).requires_grad();
    });
  for (std::thread& t : threads) t.join();
  long allocated = 0, freed = 0;
  for (const auto& e : log.events) (e.bytes > 0 ? allocated : freed) += e.bytes;
  CHECK(log.events.size() == 4 * 100 * 4);
  CHECK(allocated == 2 * 100 * 4 * (1 + 2 + 3 + 4));
  CHECK(freed == -allocated);
}

TEST_CASE("CUDA ordinals beyond the allocators kept are a User error") {
  CHECK(test::error_of([] { set_device_allocator(Device::cuda(64), nullptr); }).find("cuda:64") != std::string::npos);
}

TEST_CASE("the memory tracker's counts and peaks for a known sequence") {
  FreshTracking fresh;
  NdArray a = zeros<float>({1000});            // 4000
  NdArray b = zeros<vec3f>({100});             // 1200
  a.requires_grad();                           // 4000
  MemoryReport r = memory_report();
  CHECK(r.allocations == 3);
  CHECK(r.allocated_bytes == 9200);
  CHECK(r.live_allocations == 3);
  CHECK(r.live_bytes == 9200);
  CHECK(r.peak_bytes == 9200);
  b = NdArray();
  NdArray c = zeros<double>({10});             // 80
  r = memory_report();
  CHECK(r.allocations == 4);
  CHECK(r.allocated_bytes == 9280);
  CHECK(r.live_allocations == 3);
  CHECK(r.live_bytes == 8080);
  CHECK(r.peak_bytes == 9200);
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].device == "cpu");
  CHECK(r.devices[0].peak_bytes == 9200);
  CHECK(r.devices[0].live_allocations == 3);
  REQUIRE(r.live.size() == 3);  // largest first, then oldest
  CHECK(r.live[0].what == "array[float32, 1000]");
  CHECK(r.live[1].what == "gradient of array[float32, 1000]");
  CHECK(r.live[2].what == "array[float64, 10]");
  CHECK(r.scopes.empty());
  CHECK(r.text() ==
        "Allocation Tracking Report\n"
        "  Total allocations:\n"
        "    cpu              4 (9.06 KB)\n"
        "  Peak usage:\n"
        "    cpu              8.98 KB\n"
        "  Live allocations:\n"
        "    cpu              3 (7.89 KB)\n"
        "\n"
        "  Live cpu allocations by size (largest first) (up to 10):\n"
        "    3.91 KB : cpu : array[float32, 1000]\n"
        "    3.91 KB : cpu : gradient of array[float32, 1000]\n"
        "    80 B : cpu : array[float64, 10]\n");
  // A recorded allocation's free is counted after tracking stopped.
  set_memory_tracking(false);
  a = NdArray();
  CHECK(memory_report().live_allocations == 1);
  CHECK(memory_report().live_bytes == 80);
}

TEST_CASE("nested scoped trackers record their scope paths") {
  FreshTracking fresh;
  set_memory_tracking(false);  // the outer tracker turns it on, and off at its end
  {
    ScopedMemoryTracker run("run", false);
    CHECK(memory_tracking());
    NdArray a = zeros<float>({256});  // 1 KB in run
    {
      ScopedMemoryTracker init("init", false);
      NdArray b = zeros<float>({512}), c = zeros<float>({512});  // 4 KB in run/init
    }
    MemoryReport r = run.report();
    REQUIRE(r.scopes.size() == 2);
    CHECK(r.scopes[0].scope == "run");
    CHECK(r.scopes[0].allocations == 1);
    CHECK(r.scopes[0].bytes == 1024);
    CHECK(r.scopes[1].scope == "run/init");
    CHECK(r.scopes[1].allocations == 2);
    CHECK(r.scopes[1].bytes == 4096);
    CHECK(r.peak_bytes == 5120);
    CHECK(r.live_bytes == 1024);
    CHECK(r.live.at(0).scope == "run");
    CHECK(r.text().find("\n  Scope breakdown:\n    run:\n      cpu: 1 allocs, 1.00 KB\n"
                        "    run/init:\n      cpu: 2 allocs, 4.00 KB\n") != std::string::npos);
    run.clear();  // Warp's tracker.clear(): counts restart, earlier arrays forgotten
    NdArray d = zeros<float>({1});
    r = run.report();
    CHECK(r.allocations == 1);
    CHECK(r.peak_bytes == 4);
  }
  CHECK_FALSE(memory_tracking());
}

TEST_CASE("with tracking off nothing is recorded, and asking to print is a User error") {
  set_memory_tracking(false);
  clear_memory_tracking();
  for (int i = 0; i < 10; ++i) zeros<float>({100}).requires_grad();
  MemoryReport r = memory_report();
  CHECK(r.allocations == 0);
  CHECK(r.peak_bytes == 0);
  CHECK(r.live.empty());
  CHECK(r.text() == "Allocation Tracking Report\n  Total allocations:\n  Peak usage:\n  Live allocations:\n    (none)\n");
  CHECK(test::error_of([] { print_memory_report(); }).find("memory tracking is off") != std::string::npos);
}
