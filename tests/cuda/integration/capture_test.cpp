// kjit::capture on a CUDA device (the fake devices): the work runs into a CudaGraph on the
// stream it is given, replay repeats its launches, the graph counts them and keeps their arrays,
// and a cpu launch during the capture is a User error.
#include <doctest/doctest.h>

#include <string>

#include "integration/fake_devices.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/graph.hpp"
#include "kjit/runtime/modules.hpp"
#include "saxpy.hpp"

using namespace kjit;

TEST_CASE("kjit::capture on CUDA wraps a CudaGraph: captured launches replay on launch()") {
  kjit::test::use_fake_devices();
  const Device device = Device::cuda(0);
  preload_module("saxpy", PreloadMode::AllDevices);
  size_t start = 0;
  Graph graph;
  {
    NdArray x = NdArray::zeros(ir_type_of<float>(), {64}, device), out = NdArray::zeros(ir_type_of<float>(), {64}, device);
    start = fake_cuda::launches().size();
    graph = capture(device, [&](const Stream& s) {
      CHECK(s.device() == device);
      CHECK(s.handle() != nullptr);  // a private capturing stream
      LaunchOptions o;
      o.stream = s;
      launch(demo::saxpy.def(), 64, {x, x, 2.0f, out}, o);
      launch(demo::saxpy.def(), 32, {out, x, 3.0f, x}, o);
    });
  }  // the handles go; the graph keeps the memory its launches use
  CHECK(graph.device() == device);
  CHECK(graph.steps() == 2);
  auto all = fake_cuda::launches();
  REQUIRE(all.size() == start + 2);
  CHECK(all[start].origin == fake_cuda::LaunchOrigin::Captured);
  graph.launch();
  all = fake_cuda::launches();
  REQUIRE(all.size() == start + 4);
  CHECK(all[start + 2].origin == fake_cuda::LaunchOrigin::Replayed);
  CHECK(all[start + 2].params == all[start].params);
  CHECK(all[start + 3].params == all[start + 1].params);
}

TEST_CASE("a cpu launch during a CUDA capture is a User error naming both devices") {
  kjit::test::use_fake_devices();
  const Device device = Device::cuda(0);
  preload_module("saxpy", PreloadMode::AllDevices);
  NdArray host = NdArray::zeros(ir_type_of<float>(), {4}, Device::cpu());
  std::string message;
  try {
    (void)capture(device, [&](const Stream&) { launch(demo::saxpy, 4, host, host, 2.0f, host); });
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    message = e.what();
  }
  CHECK(message == "launch of kernel 'demo::saxpy' on cpu while a graph is being captured on cuda:0: a graph holds "
                   "the work of one device; launch it outside the capture");
}
