// The CUDA graph modes of C++ callables when things go wrong or get busy, on the fake driver:
// failures inside a capture, modules not loaded before it, an application's own capture,
// re-registration, and concurrent calls from several XLA threads and devices.
#include <doctest/doctest.h>

#include "cuda/driver_types.hpp"

#include <atomic>
#include <mutex>
#include <thread>
#include <string>

#include "callable_graphs_fixture.hpp"
#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/graph.hpp"
#include "kjit/kernel.hpp"
#include "saxpy.hpp"

using namespace kjit;
using namespace kjit::test::graphs;
using kjit::fake_cuda::LaunchOrigin;
using kjit::test::FrameBuilder;
using kjit::test::set_execution_context;

namespace {

std::vector<KernelParam> step_params() {
  return ffi::params<dsl::Array<float>, dsl::Array<float>, dsl::Float, dsl::Array<float>, dsl::Array<float>>(
      {"x", "y", "a", "out", "x_copy"});
}

ffi::CallableOptions preloading(std::vector<std::string> kernels) {
  ffi::CallableOptions o;
  o.preload_kernels = std::move(kernels);
  return o;
}

/// Launches, then fails: the capture must be aborted and the error reach XLA.
const ffi::CallableRegistration g_boom(
    "graphs::boom", step_params(),
    [](const ffi::CallContext& ctx) {
      ctx.launch(demo::saxpy, kN, {ctx.array("x"), ctx.array("y"), ctx.arg("a"), ctx.array("out")});
      throw Error(ErrorKind::User, "boom");
    },
    preloading({"demo::saxpy"}));

/// Kernels of modules nothing loads before the callables below first run them.
namespace dsl = kjit::dsl;
const auto k_late = make_kernel<dsl::Array<float>>("graphs_tests::late", "ffi_graphs_late", {"x"},
                                                   [](dsl::Array<float> x) { x[dsl::tid()] = 1.0f; });
const auto k_late_staged = make_kernel<dsl::Array<float>>("graphs_tests::late_staged", "ffi_graphs_late_staged", {"x"},
                                                          [](dsl::Array<float> x) { x[dsl::tid()] = 2.0f; });
const auto k_preloaded = make_kernel<dsl::Array<float>>("graphs_tests::preloaded", "ffi_graphs_preloaded", {"x"},
                                                        [](dsl::Array<float> x) { x[dsl::tid()] = 3.0f; });

template <class K>
ffi::CallableFn writes_out(const K& kernel) {
  return [&kernel](const ffi::CallContext& ctx) { ctx.launch(kernel.def(), kN, {ctx.array("out")}); };
}

const ffi::CallableRegistration g_late("graphs::late", step_params(), writes_out(k_late));
const ffi::CallableRegistration g_late_staged("graphs::late_staged", step_params(), writes_out(k_late_staged));
const ffi::CallableRegistration g_preloaded("graphs::preloaded", step_params(), writes_out(k_preloaded),
                                            preloading({"graphs_tests::preloaded"}));
const ffi::CallableRegistration g_bad_preload("graphs::bad_preload", step_params(), writes_out(k_preloaded),
                                              preloading({"graphs_tests::nope"}));

int first_index(const std::string& name) {
  auto calls = fake_cuda::calls();
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].name == name) return int(i);
  return -1;
}

}  // namespace

TEST_CASE("an error inside a capture aborts it and reaches XLA; the stream stays usable") {
  for (ffi::GraphMode mode : {ffi::GraphMode::Kjit, ffi::GraphMode::KjitStagedEx, ffi::GraphMode::KjitStaged}) {
    CAPTURE(ffi::to_string(mode));
    Session t("graphs::boom", mode);
    Buffers a(t.device, 1.f);
    Records r;
    auto o = t.call(a, 2.f);
    CHECK(o.code == xla::kInvalidArgument);
    CHECK(o.message == std::string("kjit callable 'graphs::boom' (graph mode '") + ffi::to_string(mode) + "'): boom");
    CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);
    CHECK(r.count_calls("cuStreamEndCapture") == 1);  // ended and dropped
    CHECK(r.count_calls("cuGraphInstantiateWithFlags") == 0);
    CHECK(r.count_calls("cuGraphLaunch") == 0);
    CHECK(graph_captures_in_progress() == 0);
    CHECK_FALSE(cuda::this_thread_capturing());
    CHECK_FALSE(cuda::stream_capturing(0, t.stream.handle()));
    CHECK(ffi::graph_cache_size("graphs::boom") == 0);
    for (auto& l : r.launches()) CHECK(l.origin == LaunchOrigin::Captured);  // nothing ran

    // The same stream captures the next callable normally.
    Session ok("graphs::step", mode);
    set_execution_context(t.stream.handle(), 0);
    ok.stream = t.stream;
    auto good = ok.call(a, 2.f);
    REQUIRE_MESSAGE(good.ok, good.message);
    CHECK(a.x_copy.to_vector<float>() == a.x.to_vector<float>());
  }
}

TEST_CASE("a driver failure while ending a capture is reported and leaves nothing behind") {
  Session t("graphs::step", ffi::GraphMode::Kjit);
  Buffers a(t.device, 1.f);
  int live = fake_cuda::live_graph_execs();
  fake_cuda::fail_next_call("cuGraphInstantiateWithFlags", CUDA_ERROR_OUT_OF_MEMORY);
  auto o = t.call(a, 2.f);
  CHECK(o.code == xla::kUnavailable);
  CHECK(o.message.find("kjit callable 'graphs::step' (graph mode 'kjit')") == 0);
  CHECK(o.message.find("cuGraphInstantiateWithFlags") != std::string::npos);
  CHECK(o.message.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos);
  CHECK(graph_captures_in_progress() == 0);
  CHECK(fake_cuda::live_graph_execs() == live);
  CHECK(ffi::graph_cache_size("graphs::step") == 0);
  REQUIRE(t.call(a, 2.f).ok);  // the next call captures
  CHECK(ffi::graph_cache_size("graphs::step") == 1);
}

TEST_CASE("a module missing at capture time runs that call eagerly; the next call captures") {
  for (auto [name, mode] : {std::pair{"graphs::late", ffi::GraphMode::Kjit},
                            std::pair{"graphs::late_staged", ffi::GraphMode::KjitStaged}}) {
    CAPTURE(name);
    Session t(name, mode);
    Buffers a(t.device, 1.f);
    Records r;
    auto o = t.call(a, 0.f);
    REQUIRE_MESSAGE(o.ok, o.message);
    CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);  // tried, aborted
    CHECK(r.count_calls("cuModuleLoadDataEx") == 1);       // then loaded outside the capture
    auto l = r.launches();
    REQUIRE(l.size() == 1);
    CHECK(l[0].origin == LaunchOrigin::Direct);
    CHECK(array_param(l[0], 1) == a.out.data());  // eagerly on XLA's own buffer
    CHECK(ffi::graph_cache_size(name) == 0);
    CHECK(graph_captures_in_progress() == 0);

    r.reset();
    REQUIRE(t.call(a, 0.f).ok);
    l = r.launches();
    REQUIRE(l.size() == 2);
    CHECK(l[0].origin == LaunchOrigin::Captured);
    CHECK(l[1].origin == LaunchOrigin::Replayed);
    CHECK(ffi::graph_cache_size(name) == 1);
  }
}

TEST_CASE("preload_kernels loads modules before the first capture on a device") {
  Session t("graphs::preloaded", ffi::GraphMode::Kjit);
  Buffers a(t.device, 1.f);
  fake_cuda::clear_records();
  REQUIRE(t.call(a, 0.f).ok);
  int load = first_index("cuModuleLoadDataEx"), begin = first_index("cuStreamBeginCapture_v2");
  CHECK(load >= 0);
  CHECK(load < begin);
  auto l = fake_cuda::launches();
  REQUIRE(l.size() == 2);
  CHECK(l[0].origin == LaunchOrigin::Captured);  // captured at once: no eager fallback

  Session bad("graphs::bad_preload", ffi::GraphMode::Kjit);
  auto o = bad.call(a, 0.f);
  CHECK(o.code == xla::kNotFound);
  CHECK(o.message.find("kjit callable 'graphs::bad_preload' (graph mode 'kjit'): ") == 0);
  CHECK(o.message.find("no kernel named 'graphs_tests::nope'") != std::string::npos);
}

TEST_CASE("a call on a stream the application captures joins that capture") {
  Session t("graphs::step", ffi::GraphMode::Kjit);
  Buffers a(t.device, 1.f);
  REQUIRE(t.call(a, 2.f).ok);  // loads the module: nothing may load during the capture below
  ffi::clear_graph_cache("graphs::step");
  Records r;
  cuda::capture_begin(0, t.stream.handle());
  auto o = t.call(a, 2.f);
  void* exec = cuda::capture_end(0, t.stream.handle());
  REQUIRE_MESSAGE(o.ok, o.message);
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);  // only the application's
  CHECK(ffi::graph_cache_size("graphs::step") == 0);
  auto l = r.launches();
  REQUIRE(l.size() == 1);
  CHECK(l[0].origin == LaunchOrigin::Captured);
  cuda::graph_launch(0, exec, t.stream.handle());
  CHECK(a.x_copy.to_vector<float>() == a.x.to_vector<float>());
  cuda::graph_destroy(0, exec);
}

TEST_CASE("re-registering or unregistering a callable drops its graphs") {
  auto params = step_params();
  auto fn = [](const ffi::CallContext& ctx) {
    ctx.launch(demo::saxpy, kN, {ctx.array("x"), ctx.array("y"), ctx.arg("a"), ctx.array("out")});
  };
  ffi::register_callable("graphs::temp", params, fn, preloading({"demo::saxpy"}));
  Session t("graphs::temp", ffi::GraphMode::Kjit);
  Buffers a(t.device, 1.f);
  REQUIRE(t.call(a, 2.f).ok);
  CHECK(ffi::graph_cache_size("graphs::temp") == 1);
  int live = fake_cuda::live_graph_execs();
  ffi::register_callable("graphs::temp", params, fn, preloading({"demo::saxpy"}));  // a new function
  CHECK(ffi::graph_cache_size("graphs::temp") == 0);
  CHECK(fake_cuda::live_graph_execs() == live - 1);
  Records r;
  REQUIRE(t.call(a, 2.f).ok);  // captured afresh, never the old graph
  CHECK(r.count_calls("cuStreamBeginCapture_v2") == 1);
  CHECK(ffi::unregister_callable("graphs::temp"));
  CHECK(ffi::graph_cache_size("graphs::temp") == 0);
  auto o = t.call(a, 2.f);
  CHECK(o.code == xla::kNotFound);
}

TEST_CASE("concurrent calls from several XLA threads and devices replay correct data") {
  kjit::test::use_fake_devices();
  ffi::clear_graph_cache("graphs::step");
  std::mutex m;
  std::vector<std::string> failures;
  std::atomic<int> calls{0};
  auto worker = [&](int ordinal, ffi::GraphMode mode, float base) {
    try {
      Device d = Device::cuda(ordinal);
      Stream s = Stream::create(d);
      set_execution_context(s.handle(), ordinal);
      xla::Handler* h = ffi::callable_handler("graphs::step", mode, ffi::Platform::Cuda);
      Buffers sets[2] = {Buffers(d, base), Buffers(d, base + 1000.f)};
      for (int i = 0; i < 40; ++i) {
        Buffers& b = sets[i % 2];
        b.fill(base + float(i));
        FrameBuilder f;
        f.arg(xla::kF32, {kN}, b.x.data()).arg(xla::kF32, {kN}, b.y.data());
        f.ret(xla::kF32, {kN}, b.out.data()).ret(xla::kF32, {kN}, b.x_copy.data());
        f.attr_scalar("a", xla::kF32, 2.f);
        auto o = kjit::test::call(h, f.frame());
        ++calls;
        std::string what;
        if (!o.ok) what = o.message;
        else if (b.x_copy.to_vector<float>() != b.x.to_vector<float>()) what = "stale data in x_copy";
        if (!what.empty()) {
          std::lock_guard<std::mutex> lock(m);
          failures.push_back(std::string(ffi::to_string(mode)) + " on cuda:" + std::to_string(ordinal) + ": " + what);
        }
      }
      set_execution_context(nullptr, 0);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(m);
      failures.push_back(e.what());
    }
  };
  std::vector<std::thread> threads;
  const ffi::GraphMode modes[] = {ffi::GraphMode::Kjit, ffi::GraphMode::KjitStagedEx, ffi::GraphMode::KjitStaged};
  for (int i = 0; i < 6; ++i) threads.emplace_back(worker, i % 2, modes[i % 3], float(100 * i));
  for (auto& th : threads) th.join();
  CHECK(failures.empty());
  for (auto& f : failures) MESSAGE(f);
  CHECK(calls == 240);
  CHECK(graph_captures_in_progress() == 0);
  // Kjit: 2 address sets per thread; staged: one graph per stream (its own staging buffers).
  CHECK(ffi::graph_cache_size("graphs::step") == 2 * 2 + 4 * 1);
  ffi::clear_graph_cache("graphs::step");
}
