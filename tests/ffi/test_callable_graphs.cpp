// The CUDA graph modes of C++ callables (Kjit, KjitStagedEx, KjitStaged) driven through the
// callable handler with hand-built CUDA-platform frames, on the recording fake driver: what is
// captured, what is replayed, where the staging copies run, the LRU, and failed captures.
#include <doctest/doctest.h>

#include "cuda/driver_types.hpp"

#include "callable_graphs_fixture.hpp"

using namespace kjit;
using namespace kjit::test::graphs;
using kjit::fake_cuda::LaunchOrigin;

TEST_CASE("Kjit mode: the first call captures on XLA's stream, the same addresses replay") {
  Session t("graphs::step", ffi::GraphMode::Kjit);
  Buffers a(t.device, 1.f);
  Records r;
  auto o = t.call(a, 2.f);
  REQUIRE_MESSAGE(o.ok, o.message);
  // Captured on XLA's stream: the launch and the callable's copy are graph nodes, which the
  // replay that follows runs.
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);
  CHECK(r.count_calls("cuStreamEndCapture") == 1);
  CHECK(r.count_calls("cuGraphLaunch") == 1);
  auto l = r.launches();
  REQUIRE(l.size() == 2);
  CHECK(l[0].origin == LaunchOrigin::Captured);
  CHECK(l[0].stream == t.stream_id());
  CHECK(l[1].origin == LaunchOrigin::Replayed);
  CHECK(l[1].stream == t.stream_id());
  CHECK(array_param(l[1], 1) == a.x.data());
  CHECK(array_param(l[1], 4) == a.out.data());
  CHECK(float_param(l[1], 3) == 2.f);
  CHECK(a.x_copy.to_vector<float>() == a.x.to_vector<float>());  // the replayed copy ran
  CHECK(ffi::graph_cache_size("graphs::step") == 1);

  // Same addresses, new contents: replayed, nothing captured, no eager launch.
  a.fill(7.f);
  r.reset();
  REQUIRE(t.call(a, 2.f).ok);
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 0);
  CHECK(r.count_calls("cuGraphLaunch") == 1);
  l = r.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].origin == LaunchOrigin::Replayed);
  CHECK(a.x_copy.to_vector<float>() == a.x.to_vector<float>());

  // New addresses: a new capture. A new static value: a new capture too.
  Buffers b(t.device, 3.f);
  r.reset();
  REQUIRE(t.call(b, 2.f).ok);
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);
  CHECK(array_param(r.launches().back(), 1) == b.x.data());
  CHECK(b.x_copy.to_vector<float>() == b.x.to_vector<float>());
  r.reset();
  REQUIRE(t.call(b, 5.f).ok);
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);
  CHECK(float_param(r.launches().back(), 3) == 5.f);
  CHECK(ffi::graph_cache_size("graphs::step") == 3);
  r.reset();
  REQUIRE(t.call(a, 2.f).ok);  // still cached
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 0);
}

TEST_CASE("Kjit mode: the LRU keeps the bound, evicts the least recently used, and clears") {
  Session t("graphs::step", ffi::GraphMode::Kjit);
  ffi::set_graph_cache_max("graphs::step", 2);
  Buffers a(t.device, 1.f), b(t.device, 2.f), c(t.device, 3.f);
  size_t destroyed = fake_cuda::destroyed_graph_execs().size();
  REQUIRE(t.call(a, 1.f).ok);
  REQUIRE(t.call(b, 1.f).ok);
  REQUIRE(t.call(a, 1.f).ok);  // a is now more recent than b
  CHECK(fake_cuda::destroyed_graph_execs().size() == destroyed);
  Records r;
  REQUIRE(t.call(c, 1.f).ok);  // evicts b
  CHECK(ffi::graph_cache_size("graphs::step") == 2);
  CHECK(fake_cuda::destroyed_graph_execs().size() == destroyed + 1);
  r.reset();
  REQUIRE(t.call(a, 1.f).ok);
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 0);
  REQUIRE(t.call(b, 1.f).ok);  // evicted: captured again (and evicts c)
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);

  int live = fake_cuda::live_graph_execs();
  ffi::clear_graph_cache("graphs::step");
  CHECK(ffi::graph_cache_size("graphs::step") == 0);
  CHECK(fake_cuda::live_graph_execs() == live - 2);

  ffi::set_graph_cache_max("graphs::step", 0);  // unbounded
  std::vector<std::unique_ptr<Buffers>> many;
  for (int i = 0; i < 5; ++i) {
    many.push_back(std::make_unique<Buffers>(t.device, float(i)));
    REQUIRE(t.call(*many.back(), 1.f).ok);
  }
  CHECK(ffi::graph_cache_size("graphs::step") == 5);
  ffi::set_graph_cache_max("graphs::step", 1);  // trims to the most recent
  CHECK(ffi::graph_cache_size("graphs::step") == 1);
  r.reset();
  REQUIRE(t.call(*many.back(), 1.f).ok);
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 0);
  ffi::set_graph_cache_max("graphs::step", 32);
}

TEST_CASE("KjitStagedEx: one graph over staging buffers, copies on the stream around the replay") {
  Session t("graphs::step", ffi::GraphMode::KjitStagedEx);
  Buffers a(t.device, 1.f), b(t.device, 10.f);
  Records r;
  REQUIRE(t.call(a, 2.f).ok);
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);
  auto l = r.launches();
  REQUIRE(l.size() == 2);
  const void* staged_x = array_param(l[0], 1);
  CHECK(staged_x != a.x.data());  // the graph reads the staging buffer
  CHECK(array_param(l[0], 4) != a.out.data());
  CHECK(a.x_copy.to_vector<float>() == a.x.to_vector<float>());  // x -> staging -> graph -> x_copy

  for (Buffers* call : {&b, &a, &b}) {  // new addresses every call: always the same graph
    call->fill(call == &a ? 4.f : 40.f);
    r.reset();
    REQUIRE(t.call(*call, 2.f).ok);
    CHECK(r.count_calls("cuStreamBeginCapture_v2") == 0);
    l = r.launches();
    REQUIRE(l.size() == 1);
    CHECK(l[0].origin == LaunchOrigin::Replayed);
    CHECK(array_param(l[0], 1) == staged_x);
    // Copies in (x, y), the replay (with the callable's own copy), copies out (out, x_copy):
    // the staging copies are plain stream copies, outside the graph.
    auto names = r.call_names("cuMemcpyAsync", "cuGraphLaunch");
    CHECK(names == std::vector<std::string>{"cuMemcpyAsync", "cuMemcpyAsync", "cuGraphLaunch", "cuMemcpyAsync",
                                            "cuMemcpyAsync"});
    auto c = r.copies();
    REQUIRE(c.size() == 5);
    CHECK(c[0].origin == LaunchOrigin::Direct);
    CHECK(c[0].src == uintptr_t(call->x.data()));
    CHECK(c[0].dst == uintptr_t(staged_x));
    CHECK(c[1].src == uintptr_t(call->y.data()));
    CHECK(c[2].origin == LaunchOrigin::Replayed);
    CHECK(c[3].origin == LaunchOrigin::Direct);
    CHECK(c[3].dst == uintptr_t(call->out.data()));
    CHECK(c[4].dst == uintptr_t(call->x_copy.data()));
    for (auto& copy : c) CHECK(copy.stream == t.stream_id());
    CHECK(call->x_copy.to_vector<float>() == call->x.to_vector<float>());
  }
  CHECK(ffi::graph_cache_size("graphs::step") == 1);

  // Other shapes take other staging buffers and another graph.
  Buffers big(t.device, 1.f, 512);
  r.reset();
  REQUIRE(t.call(big, 2.f).ok);
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);
  CHECK(array_param(r.launches().back(), 1) != staged_x);
  CHECK(big.x_copy.to_vector<float>() == big.x.to_vector<float>());
  CHECK(ffi::graph_cache_size("graphs::step") == 2);
}

TEST_CASE("KjitStaged: the staging copies are memcpy nodes, re-pointed at each call's buffers") {
  Session t("graphs::step", ffi::GraphMode::KjitStaged);
  Buffers a(t.device, 1.f), b(t.device, 10.f);
  Records r;
  REQUIRE(t.call(a, 2.f).ok);
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);
  auto c = r.copies();
  REQUIRE(c.size() == 10);  // 2 in + the callable's + 2 out, captured then replayed
  for (size_t i = 0; i < 5; ++i) CHECK(c[i].origin == LaunchOrigin::Captured);
  for (size_t i = 5; i < 10; ++i) CHECK(c[i].origin == LaunchOrigin::Replayed);
  CHECK(c[5].src == uintptr_t(a.x.data()));
  CHECK(c[9].dst == uintptr_t(a.x_copy.data()));
  CHECK(a.x_copy.to_vector<float>() == a.x.to_vector<float>());

  r.reset();
  REQUIRE(t.call(b, 2.f).ok);  // new addresses: the same graph, its copy nodes updated
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 0);
  CHECK(r.count_calls("cuGraphExecMemcpyNodeSetParams") == 4);
  CHECK(r.count_calls("cuMemcpyAsync") == 0);  // nothing outside the graph
  c = r.copies();
  REQUIRE(c.size() == 5);
  for (auto& copy : c) CHECK(copy.origin == LaunchOrigin::Replayed);
  CHECK(c[0].src == uintptr_t(b.x.data()));
  CHECK(c[1].src == uintptr_t(b.y.data()));
  CHECK(c[3].dst == uintptr_t(b.out.data()));
  CHECK(c[4].dst == uintptr_t(b.x_copy.data()));
  CHECK(b.x_copy.to_vector<float>() == b.x.to_vector<float>());

  b.fill(20.f);
  r.reset();
  REQUIRE(t.call(b, 2.f).ok);  // the same addresses again: nothing to update
  CHECK(r.count_calls("cuGraphExecMemcpyNodeSetParams") == 0);
  CHECK(b.x_copy.to_vector<float>() == b.x.to_vector<float>());
  CHECK(ffi::graph_cache_size("graphs::step") == 1);

  // A failed update reports the driver's error; the next call updates that node again.
  fake_cuda::fail_next_call("cuGraphExecMemcpyNodeSetParams", CUDA_ERROR_INVALID_VALUE);
  auto o = t.call(a, 2.f);
  CHECK(o.code == xla::kUnavailable);
  CHECK(o.message.find("cuGraphExecMemcpyNodeSetParams") != std::string::npos);
  a.fill(30.f);
  REQUIRE(t.call(a, 2.f).ok);
  CHECK(a.x_copy.to_vector<float>() == a.x.to_vector<float>());
}

TEST_CASE("staged modes stage only the named arrays; the others key the graph by address") {
  for (ffi::GraphMode mode : {ffi::GraphMode::KjitStagedEx, ffi::GraphMode::KjitStaged}) {
    CAPTURE(ffi::to_string(mode));
    Session t("graphs::step_x_only", mode);  // stage_in {"x"}, stage_out {"x_copy"}
    Buffers a(t.device, 1.f), b(t.device, 2.f);
    Records r;
    REQUIRE(t.call(a, 1.f).ok);
    auto l = r.launches();
    CHECK(array_param(l.back(), 1) != a.x.data());  // staged
    CHECK(array_param(l.back(), 2) == a.y.data());  // used in place
    CHECK(array_param(l.back(), 4) == a.out.data());
    // Only the staged x and x_copy move: the graph is reused.
    b.y = a.y;
    b.out = a.out;
    r.reset();
    REQUIRE(t.call(b, 1.f).ok);
    CHECK(r.count_calls("cuStreamBeginCapture_v2") == 0);
    CHECK(b.x_copy.to_vector<float>() == b.x.to_vector<float>());
    b.y = NdArray::zeros(ir_type_of<float>(), {int64_t(kN)}, t.device);  // an unstaged array moves
    r.reset();
    REQUIRE(t.call(b, 1.f).ok);
    CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);
    CHECK(ffi::graph_cache_size("graphs::step_x_only") == 2);
  }
}
