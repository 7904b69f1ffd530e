// Graph capture through the fake driver: launches captured on a stream, instantiated, replayed;
// the rules (no default stream, no module loading while capturing); the LRU of the graph cache.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/internal/graph_lru.hpp"
#include "fake_driver_fixture.hpp"
#include "kjit/error.hpp"

using namespace kjit;
using kjit::test::FakeDriver;

namespace {

const char* kPtx = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry step(
	.param .u64 step_param_0,
	.param .f32 step_param_1
)
{
	ret;
}
)";

std::vector<char> image() { return std::vector<char>(kPtx, kPtx + std::strlen(kPtx) + 1); }

}  // namespace

TEST_CASE("captured launches run only when the graph is replayed, with the captured arguments") {
  FakeDriver fake;
  void* module = cuda::module_load(0, image());
  void* fn = cuda::module_function(0, module, "step");
  void* stream = cuda::stream_create(0);
  uint64_t ptr = 0x1000;
  float value = 1.0f;
  void* params[] = {&ptr, &value};

  fake_cuda::clear_records();
  CHECK(cuda::capturing_count() == 0);
  cuda::capture_begin(0, stream);
  CHECK(cuda::capturing_count() == 1);
  cuda::launch(0, fn, 100, 64, 0, stream, params);
  value = 2.0f;
  cuda::launch(0, fn, 5000, 128, 0, stream, params);
  void* exec = cuda::capture_end(0, stream);
  CHECK(cuda::capturing_count() == 0);
  REQUIRE(exec != nullptr);
  auto captured = fake_cuda::launches();
  REQUIRE(captured.size() == 2);
  for (auto& l : captured) CHECK(l.origin == fake_cuda::LaunchOrigin::Captured);

  fake_cuda::clear_records();
  value = 3.0f;  // too late: the graph holds the values of capture time
  cuda::graph_launch(0, exec, nullptr);
  cuda::graph_launch(0, exec, stream);
  auto replayed = fake_cuda::launches();
  REQUIRE(replayed.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(replayed[i].origin == fake_cuda::LaunchOrigin::Replayed);
    CHECK(replayed[i].params == captured[i % 2].params);
    CHECK(replayed[i].grid[0] == captured[i % 2].grid[0]);
  }
  float first = 0, second = 0;
  std::memcpy(&first, replayed[0].params[1].data(), 4);
  std::memcpy(&second, replayed[1].params[1].data(), 4);
  CHECK(first == 1.0f);
  CHECK(second == 2.0f);
  CHECK(replayed[2].stream == reinterpret_cast<uintptr_t>(stream));

  cuda::graph_destroy(0, exec);
  CHECK(fake_cuda::live_graph_execs() == 0);
  cuda::stream_destroy(0, stream);
}

TEST_CASE("a default stream cannot be captured") {
  FakeDriver fake;
  try {
    cuda::capture_begin(0, nullptr);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()).find("Stream::create") != std::string::npos);
  }
  CHECK(cuda::capturing_count() == 0);
}

TEST_CASE("loading a module while this thread captures is a User error that says what to do") {
  FakeDriver fake;
  void* stream = cuda::stream_create(1);
  cuda::capture_begin(1, stream);
  try {
    cuda::module_load(1, image());
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()).find("kjit::preload_module") != std::string::npos);
  }
  CHECK(fake_cuda::module_loads().empty());
  cuda::capture_abort(1, stream);
  CHECK(cuda::capturing_count() == 0);
  CHECK(cuda::this_thread_capturing() == false);
  // The stream is usable again, and modules load.
  cuda::module_load(1, image());
  cuda::stream_destroy(1, stream);
}

TEST_CASE("GraphLru keeps the most recently used entries within its bound") {
  cuda::GraphLru lru(2);
  auto handle = [](int v) { return std::shared_ptr<void>(new int(v), [](void* p) { delete static_cast<int*>(p); }); };
  int buffer_a = 0, buffer_b = 0;
  cuda::GraphLruKey a{"step", {&buffer_a}, 0}, b{"step", {&buffer_b}, 0}, c{"other", {&buffer_a}, 0},
      a_dev1{"step", {&buffer_a}, 1};
  CHECK(lru.insert(a, handle(1)).empty());
  CHECK(lru.insert(b, handle(2)).empty());
  CHECK(bool(lru.find(a)));  // a is now the most recent; b the least
  auto dropped = lru.insert(c, handle(3));
  REQUIRE(dropped.size() == 1);
  CHECK(*static_cast<int*>(dropped[0].get()) == 2);
  CHECK_FALSE(bool(lru.find(b)));
  CHECK_FALSE(bool(lru.find(a_dev1)));  // the device is part of the key
  CHECK(lru.size() == 2);
  CHECK(lru.evictions() == 1);

  // Replacing an entry hands back the old handle without counting an eviction.
  dropped = lru.insert(a, handle(4));
  REQUIRE(dropped.size() == 1);
  CHECK(*static_cast<int*>(dropped[0].get()) == 1);
  CHECK(lru.evictions() == 1);

  CHECK(lru.set_capacity(1).size() == 1);  // c, the least recent, goes
  CHECK(lru.keys().size() == 1);
  CHECK(lru.keys()[0].function == "step");
  CHECK(lru.clear().size() == 1);
  CHECK(lru.size() == 0);
}
