// kjit::capture / kjit::Graph on the cpu (Warp's wp.ScopedCapture and wp.capture_launch):
// capture records without running, replay runs the steps with the values of the capture,
// array operations are steps, arrays stay alive, and the mistakes are User errors.
#include <doctest/doctest.h>

#include "kjit/kjit.hpp"
#include "kjit/runtime/graph.hpp"
#include "kjit/runtime/tape.hpp"
#include "saxpy.hpp"
#include "user_error.hpp"

using namespace kjit;

namespace graph_tests {
using namespace kjit::dsl;
KJIT_MODULE(runtime_graphs)
KJIT_KERNEL(add_scalar, (Array<Float> a, Float s)) {
  Int i = tid();
  a[i] = a[i] + s;
}
KJIT_KERNEL(square, (Array<Float> x, Array<Float> y)) {
  Int i = tid();
  y[i] = x[i] * x[i];
}
}  // namespace graph_tests

namespace {
using kjit::test::error_of;
const Device cpu = Device::cpu();
}  // namespace

TEST_CASE("a cpu capture records the launches without running them; replay runs them in order") {
  auto a = zeros<float>({4});
  launch(graph_tests::add_scalar, 4, a, 1.0f);  // eager: runs now
  Graph graph = capture(cpu, [&](const Stream&) {
    launch(graph_tests::add_scalar, 4, a, 2.0f);
    a.zero();
    launch(graph_tests::add_scalar, 4, a, 3.0f);
  });
  CHECK(graph.valid());
  CHECK(graph.device() == cpu);
  CHECK(graph.steps() == 3);
  CHECK(a.to_vector<float>() == std::vector<float>{1, 1, 1, 1});  // Warp's cpu capture runs nothing either
  graph.launch();
  CHECK(a.to_vector<float>() == std::vector<float>{3, 3, 3, 3});
  a.fill(10.0f);
  capture_launch(graph);  // Warp's name
  CHECK(a.to_vector<float>() == std::vector<float>{3, 3, 3, 3});
}

TEST_CASE("replay uses the scalar values of the capture, and the arrays' contents of the replay") {
  auto x = from_vector<float>({1, 2, 3}), y = from_vector<float>({10, 20, 30}), out = zeros<float>({3});
  float a = 2.0f;
  Graph graph = capture(cpu, [&](const Stream&) { launch(demo::saxpy, 3, x, y, a, out); });
  a = 100.0f;  // not seen: the launch was packed with 2
  graph.launch();
  CHECK(out.to_vector<float>() == std::vector<float>{12, 24, 36});
  x.fill(5.0f);  // the array's memory is read at each replay
  graph.launch();
  CHECK(out.to_vector<float>() == std::vector<float>{20, 30, 40});
}

TEST_CASE("fill, zero_grad and copy_from are steps, fill with the value of the capture") {
  auto a = zeros<float>({2}), b = from_vector<float>({7, 8});
  a.requires_grad();
  a.grad().fill(4.0f);
  float value = 9.0f;
  Graph graph = capture(cpu, [&](const Stream&) {
    a.fill(value);
    a.zero_grad();
    b.copy_from(a);
    launch(graph_tests::add_scalar, 2, b, 1.0f);
  });
  value = -1.0f;
  CHECK(graph.steps() == 4);
  CHECK(b.to_vector<float>() == std::vector<float>{7, 8});
  CHECK(a.grad().to_vector<float>() == std::vector<float>{4, 4});
  graph.launch();
  CHECK(a.to_vector<float>() == std::vector<float>{9, 9});
  CHECK(a.grad().to_vector<float>() == std::vector<float>{0, 0});
  CHECK(b.to_vector<float>() == std::vector<float>{10, 10});
}

TEST_CASE("a graph keeps the arrays it uses alive after their handles are gone") {
  auto out = zeros<float>({3});
  Graph graph = capture(cpu, [&](const Stream&) {
    auto scratch = empty<float>({3});  // freed with this handle in eager code; the graph holds it
    scratch.fill(3.0f);
    launch(graph_tests::square, 3, scratch, out);
  });
  graph.launch();
  CHECK(out.to_vector<float>() == std::vector<float>{9, 9, 9});
}

TEST_CASE("a graph launched inside a capture is one step of the new graph; adjoints are steps") {
  auto x = from_vector<float>({1, 2}), y = zeros<float>({2});
  auto gx = zeros<float>({2}), gy = from_vector<float>({1, 1});
  Graph inner = capture(cpu, [&](const Stream&) { launch(graph_tests::add_scalar, 2, x, 1.0f); });
  Graph outer = capture(cpu, [&](const Stream&) {
    inner.launch();
    launch(graph_tests::square, 2, x, y);
    launch_adjoint(graph_tests::square, 2, {x, y}, {gx, gy});
  });
  CHECK(outer.steps() == 3);
  CHECK(x.to_vector<float>() == std::vector<float>{1, 2});
  outer.launch();
  CHECK(y.to_vector<float>() == std::vector<float>{4, 9});
  CHECK(gx.to_vector<float>() == std::vector<float>{4, 6});  // d(x^2)/dx at 2 and 3
}

TEST_CASE("graph mistakes are User errors that say what to do") {
  auto a = zeros<float>({4});
  SUBCASE("captures do not nest") {
    std::string m = error_of([&] { (void)capture(cpu, [&](const Stream&) { (void)capture(cpu, [](const Stream&) {}); }); });
    CHECK(m == "kjit::capture on cpu: a graph is already being captured on cpu on this thread, and captures do not nest "
               "(Warp: 'Graph capture already in progress'); launch a captured graph inside the capture instead");
  }
  SUBCASE("a bad launch throws at capture, and the capture is closed after it") {
    std::string m = error_of([&] { (void)capture(cpu, [&](const Stream&) { launch(graph_tests::add_scalar, 4, a); }); });
    CHECK(m.find("launch of kernel 'graph_tests::add_scalar': expected 2 arguments (a, s), got 1") != std::string::npos);
    Graph g = capture(cpu, [&](const Stream&) { launch(graph_tests::add_scalar, 4, a, 1.0f); });
    CHECK(a.to_vector<float>() == std::vector<float>{0, 0, 0, 0});  // a capture again, not an eager launch
    g.launch();
    CHECK(a.to_vector<float>() == std::vector<float>{1, 1, 1, 1});
  }
  SUBCASE("an empty graph") {
    CHECK(error_of([] { Graph().launch(); }) == "Graph::launch of an empty graph: make one with kjit::capture");
  }
  SUBCASE("a graph runs on its own device only") {
    Graph g = capture(cpu, [&](const Stream&) { launch(graph_tests::add_scalar, 4, a, 1.0f); });
    CHECK(error_of([&] { g.launch(Stream::default_for(Device::cuda(0))); }) ==
          "Graph::launch: the graph was captured on cpu and cannot run on a stream of cuda:0; capture the work again on "
          "that device");
  }
}

TEST_CASE("a tape sees a graph's writes of an array it read, and does not record the graph's launches") {
  auto x = from_vector<float>({1, 2}), y = zeros<float>({2});
  Graph bump = capture(cpu, [&](const Stream&) { launch(graph_tests::add_scalar, 2, x, 1.0f); });
  Tape tape;
  {
    auto on = tape.record();
    launch(graph_tests::square, 2, x, y);
    bump.launch();  // runs, unrecorded: it overwrites what the recorded square read
  }
  CHECK(x.to_vector<float>() == std::vector<float>{2, 3});
  std::string m = error_of([&] { tape.backward({{y, from_vector<float>({1, 1})}}); });
  CHECK(m.find("step 0 (kernel 'graph_tests::square') read its array argument 'x', which has been overwritten since the "
               "step was recorded (last by a graph's launch of kernel 'graph_tests::add_scalar')") != std::string::npos);
}
