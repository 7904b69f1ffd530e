// CUDA graphs through kjit::launch on the fake devices: capture and replay of several launches,
// the instantiated-graph cache (hits, misses, LRU eviction, clearing) and the capture rules.
#include <doctest/doctest.h>

#include <functional>

#include <cstring>
#include <string>

#include "integration/fake_devices.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/modules.hpp"
#include "kjit/runtime/graph.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "saxpy.hpp"

using namespace kjit;

namespace {

struct Buffers {
  NdArray x, y, out;
  explicit Buffers(const Device& d)
      : x(NdArray::zeros(ir_type_of<float>(), {256}, d)),
        y(NdArray::zeros(ir_type_of<float>(), {256}, d)),
        out(NdArray::zeros(ir_type_of<float>(), {256}, d)) {}
};

/// Two saxpy launches on `stream`: the work the graphs below capture.
void two_launches(const Buffers& b, const Stream& stream) {
  LaunchOptions o;
  o.stream = stream;
  launch(demo::saxpy.def(), 256, {b.x, b.y, 2.0f, b.out}, o);
  launch(demo::saxpy.def(), 128, {b.out, b.y, 3.0f, b.x}, o);
}

std::vector<fake_cuda::LaunchRecord> launches_since(size_t start) {
  auto all = fake_cuda::launches();
  return std::vector<fake_cuda::LaunchRecord>(all.begin() + long(start), all.end());
}

}  // namespace

TEST_CASE("a captured graph replays exactly the eager launches") {
  kjit::test::use_fake_devices();
  Device device = Device::cuda(0);
  Buffers b(device);
  Stream stream = Stream::create(device);
  preload_module("saxpy", PreloadMode::AllDevices);

  size_t start = fake_cuda::launches().size();
  two_launches(b, stream);
  auto eager = launches_since(start);
  REQUIRE(eager.size() == 2);

  start = fake_cuda::launches().size();
  CHECK(graph_captures_in_progress() == 0);
  CudaGraph graph = CudaGraph::capture(stream, [&](const Stream& s) {
    CHECK(graph_captures_in_progress() == 1);
    two_launches(b, s);
  });
  CHECK(graph_captures_in_progress() == 0);
  REQUIRE(graph.valid());
  auto captured = launches_since(start);
  REQUIRE(captured.size() == 2);
  for (auto& l : captured) CHECK(l.origin == fake_cuda::LaunchOrigin::Captured);

  start = fake_cuda::launches().size();
  graph.replay(stream);
  graph.replay();
  auto replayed = launches_since(start);
  REQUIRE(replayed.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(replayed[i].origin == fake_cuda::LaunchOrigin::Replayed);
    CHECK(replayed[i].function == eager[i % 2].function);
    CHECK(replayed[i].grid[0] == eager[i % 2].grid[0]);
    CHECK(replayed[i].block[0] == eager[i % 2].block[0]);
    CHECK(replayed[i].params == eager[i % 2].params);
  }
  CHECK(replayed[0].stream == reinterpret_cast<uintptr_t>(stream.handle()));
}

TEST_CASE("a default stream is captured through a private stream") {
  kjit::test::use_fake_devices();
  Device device = Device::cuda(1);
  Buffers b(device);
  preload_module("saxpy", PreloadMode::AllDevices);
  size_t start = fake_cuda::launches().size();
  CudaGraph graph = CudaGraph::capture(Stream::default_for(device), [&](const Stream& s) {
    CHECK(s.handle() != nullptr);
    two_launches(b, s);
  });
  graph.replay();
  auto records = launches_since(start);
  REQUIRE(records.size() == 4);
  CHECK(records[2].origin == fake_cuda::LaunchOrigin::Replayed);
  CHECK(records[2].device == 1);
}

TEST_CASE("the rules of capture are User errors that say what to do") {
  kjit::test::use_fake_devices();
  Device device = Device::cuda(0);
  Buffers b(device);
  Stream stream = Stream::create(device);
  preload_module("saxpy", PreloadMode::AllDevices);
  auto user_error = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::User);
      return std::string(e.what());
    }
    FAIL("expected a User error");
    return std::string();
  };
  // Launching on another stream than the captured one would silently miss the launch.
  std::string err = user_error([&] {
    CudaGraph::capture(stream, [&](const Stream&) {
      launch(demo::saxpy.def(), 256, {b.x, b.y, 2.0f, b.out});  // the default stream
    });
  });
  CHECK(err.find("LaunchOptions::stream") != std::string::npos);
  CHECK(graph_captures_in_progress() == 0);  // the failed capture was ended

  // A module that is not loaded yet cannot be loaded during a capture.
  namespace dsl = kjit::dsl;
  auto late = make_kernel<dsl::Array<float>>("cuda_graph_tests::late", "cuda_graph_late", {"x"},
                                             [](dsl::Array<float> x) { x[dsl::tid()] = 1.0f; });
  err = user_error([&] {
    CudaGraph::capture(stream, [&](const Stream& s) {
      LaunchOptions o;
      o.stream = s;
      launch(late.def(), 256, {b.x}, o);
    });
  });
  CHECK(err.find("preload_module") != std::string::npos);

  // The cpu has no graphs.
  err = user_error([&] { CudaGraph::capture(Stream(), [](const Stream&) {}); });
  CHECK(err.find("CUDA stream") != std::string::npos);
  // Replays stay on their device.
  CudaGraph graph = CudaGraph::capture(stream, [&](const Stream& s) { two_launches(b, s); });
  err = user_error([&] { graph.replay(Stream::create(Device::cuda(1))); });
  CHECK(err.find("cannot be replayed on a stream of cuda:1") != std::string::npos);
}

TEST_CASE("an adjoint with loops can be captured: its bound check waits for eager launches") {
  kjit::test::use_fake_devices();
  Device device = Device::cuda(0);
  auto v = NdArray::zeros(ir_type_of<vec3f>(), {32}, device);
  auto out = NdArray::zeros(ir_type_of<vec3f>(), {32}, device);
  auto adj_v = NdArray::zeros(ir_type_of<vec3f>(), {32}, device);
  auto adj_out = NdArray::zeros(ir_type_of<vec3f>(), {32}, device);
  Stream stream = Stream::create(device);
  preload_module("loops", PreloadMode::AllDevices);
  size_t start = fake_cuda::launches().size();
  CudaGraph graph = CudaGraph::capture(stream, [&](const Stream& s) {
    launch_adjoint(demo::damp, 32, {v, 0.5f, 4, out}, {adj_v, {}, {}, adj_out},
                   LaunchOptions{device, s, 0});
  });
  graph.replay(stream);
  CHECK(launches_since(start).size() == 2);  // captured, replayed
}

TEST_CASE("the graph cache replays hits, captures misses and evicts the least recently used") {
  kjit::test::use_fake_devices();
  Device device = Device::cuda(0);
  Buffers a(device), b(device), c(device);
  Stream stream = Stream::create(device);
  preload_module("saxpy", PreloadMode::AllDevices);
  GraphCache cache(2);
  auto key = [](const Buffers& bufs) {
    return GraphKey{"two_launches", {bufs.x.data(), bufs.y.data(), bufs.out.data()}};
  };
  auto work = [](const Buffers& bufs) {
    return [&bufs](const Stream& s) { two_launches(bufs, s); };
  };
  size_t destroyed = fake_cuda::destroyed_graph_execs().size();

  CHECK_FALSE(cache.run(key(a), stream, work(a)));  // miss: captured, then replayed
  CHECK(cache.run(key(a), stream, work(a)));        // hit
  CHECK_FALSE(cache.run(key(b), stream, work(b)));
  CHECK(cache.run(key(a), stream, work(a)));        // a is now more recent than b
  CHECK(cache.size() == 2);
  CHECK(fake_cuda::destroyed_graph_execs().size() == destroyed);

  CHECK_FALSE(cache.run(key(c), stream, work(c)));  // evicts b
  CHECK(fake_cuda::destroyed_graph_execs().size() == destroyed + 1);
  CHECK(cache.run(key(a), stream, work(a)));
  CHECK(cache.run(key(c), stream, work(c)));
  CHECK_FALSE(cache.run(key(b), stream, work(b)));  // b was evicted: captured again
  GraphCache::Stats stats = cache.stats();
  CHECK(stats.hits == 4);
  CHECK(stats.misses == 4);
  CHECK(stats.evictions == 2);

  // A replay runs the captured launches on the given stream, with the key's buffers.
  size_t start = fake_cuda::launches().size();
  CHECK(cache.run(key(b), Stream::default_for(device), work(b)));
  auto replayed = launches_since(start);
  REQUIRE(replayed.size() == 2);
  CHECK(replayed[0].origin == fake_cuda::LaunchOrigin::Replayed);
  kj::array_t<void> x;
  std::memcpy(&x, replayed[0].params[1].data(), sizeof x);
  CHECK(x.data == b.x.data());

  // The same key on another device is another graph.
  Stream stream1 = Stream::create(Device::cuda(1));
  Buffers b1(Device::cuda(1));
  CHECK_FALSE(cache.run(GraphKey{"two_launches", {b.x.data(), b.y.data(), b.out.data()}}, stream1,
                        work(b1)));

  int live = fake_cuda::live_graph_execs();
  cache.clear();
  CHECK(cache.size() == 0);
  CHECK(fake_cuda::live_graph_execs() == live - 2);
  cache.set_capacity(0);
  CHECK_FALSE(cache.run(key(a), stream, work(a)));  // nothing is kept
  CHECK(cache.size() == 0);
}

TEST_CASE("GraphKey::of names the work by its type") {
  int buffer = 0;
  auto f = [](const Stream&) {};
  auto g = [](const Stream&) {};
  CHECK(GraphKey::of(f, {&buffer}).function == GraphKey::of(f, {}).function);
  CHECK(GraphKey::of(f, {}).function != GraphKey::of(g, {}).function);
  CHECK(GraphKey::of(f, {&buffer}).buffers == std::vector<const void*>{&buffer});
  CHECK(graph_cache().capacity() == GraphCache::kDefaultCapacity);
}
