// On cuda:0: 2-D to 4-D launches, preloading on all devices, two streams at once, CUDA graphs
// against eager launches, block-size limits and the adjoint loop bound read from the device.
#include <string>
#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/modules.hpp"
#include "kjit/runtime/graph.hpp"
#include "kjit/kernel.hpp"
#include "gpu_support.hpp"
#include "saxpy.hpp"

using namespace kjit;
using namespace kjit::gpu_test;

namespace gpu_tests {
using namespace kjit::dsl;
KJIT_MODULE(gpu_dims)

KJIT_KERNEL(count2, (Array<Int, 2> hits)) {
  auto [i, j] = tid<2>();
  atomic_add(hits, i, j, 1);
}
KJIT_KERNEL(count3, (Array<Int, 3> hits)) {
  auto [i, j, k] = tid<3>();
  atomic_add(hits, i, j, k, 1);
}
KJIT_KERNEL(count4, (Array<Int, 4> hits, Array<Int> flat)) {
  auto [i, j, k, l] = tid<4>();
  atomic_add(hits, i, j, k, l, 1);
  Int f = ((i * launch_dim(1) + j) * launch_dim(2) + k) * launch_dim(3) + l;
  flat[f] = f + 1;
}
/// A 2-D kernel with a gradient: out(i, j) = s * x(i, j)^2 + x(j, i) (a transposed read).
KJIT_KERNEL(square2d, (Array<Float, 2> x, Float s, Array<Float, 2> out)) {
  auto [i, j] = tid<2>();
  out(i, j) = s * x(i, j) * x(i, j) + x(j, i);
}
}  // namespace gpu_tests

namespace gpu_bounded {
using namespace kjit::dsl;
KJIT_MODULE(gpu_bounded)
/// A loop whose adjoint checkpoints bound its trip count (module option below).
KJIT_KERNEL(power, (Array<Float> x, Int n, Array<Float> out)) {
  Int i = tid();
  Var<Float> y = x[i];
  For(0, n, [&](Int) { y = y * 1.01f; });
  out[i] = y;
}
}  // namespace gpu_bounded

namespace {

void all_ones(const NdArray& a) {
  auto v = a.to_vector<int32_t>();
  size_t bad = 0;
  for (int32_t x : v) bad += x != 1;
  CHECK_MESSAGE(bad == 0, bad << " of " << v.size() << " indices not visited exactly once");
}

NdArray gpu_floats(const std::vector<float>& v, Shape shape = {}) {
  return NdArray::from_vector(v, shape, Device::cuda(0));
}

}  // namespace

TEST_CASE("2-D, 3-D and 4-D launches on cuda:0 visit every index once") {
  Device d = Device::cuda(0);
  auto h2 = NdArray::zeros(ir_type_of<int32_t>(), {37, 211}, d);
  launch(gpu_tests::count2, Dims{37, 211}, h2);
  all_ones(h2);
  auto h3 = NdArray::zeros(ir_type_of<int32_t>(), {7, 13, 29}, d);
  launch(gpu_tests::count3, Dims{7, 13, 29}, h3);
  all_ones(h3);
  auto h4 = NdArray::zeros(ir_type_of<int32_t>(), {3, 5, 7, 11}, d);
  auto flat = NdArray::zeros(ir_type_of<int32_t>(), {3 * 5 * 7 * 11}, d);
  launch(gpu_tests::count4, Dims{3, 5, 7, 11}, h4, flat);
  all_ones(h4);
  auto f = flat.to_vector<int32_t>();
  for (size_t i = 0; i < f.size(); ++i) REQUIRE(f[i] == int32_t(i) + 1);
  // Larger than the grid the device keeps resident: the kernels' grid-stride loop covers it.
  auto big = NdArray::zeros(ir_type_of<int32_t>(), {4096, 2048}, d);
  launch(gpu_tests::count2, Dims{4096, 2048}, big);
  all_ones(big);
}

TEST_CASE("a 2-D kernel forward and adjoint on cuda:0 equals the cpu") {
  const int64_t n = 193;
  auto x = random_values<float>(size_t(n * n), -2, 2, 21);
  auto seed = random_values<float>(size_t(n * n), -1, 1, 22);
  std::vector<std::vector<double>> results[2];
  int r = 0;
  for (Device dev : {Device::cpu(), Device::cuda(0)}) {
    auto xa = NdArray::from_vector(x, {n, n}, dev);
    auto out = NdArray::zeros(ir_type_of<float>(), {n, n}, dev);
    auto adj_x = NdArray::zeros(ir_type_of<float>(), {n, n}, dev);
    auto adj_out = NdArray::from_vector(seed, {n, n}, dev);
    launch(gpu_tests::square2d, Dims{n, n}, xa, 0.75f, out);
    launch_adjoint(gpu_tests::square2d, Dims{n, n}, {xa, 0.75f, out}, {adj_x, {}, adj_out});
    results[r++] = {scalars_of(out), scalars_of(adj_x)};
  }
  check_close(results[1][0], results[0][0], ir::Scalar::F32, "square2d out");
  check_close(results[1][1], results[0][1], ir::Scalar::F32, "square2d adjoint of x");
}

TEST_CASE("preloading on all devices loads every device, and launches then load nothing") {
  std::vector<ModuleLoad> loads = preload_module("saxpy", PreloadMode::AllDevices);
  REQUIRE(loads.size() == size_t(cuda::device_count()));
  for (size_t i = 0; i < loads.size(); ++i) {
    CHECK(loads[i].device == "cuda:" + std::to_string(i));
    CHECK(loads[i].build.target == cuda::target_for(int(i)).name());
    CHECK(loads[i].build.bytes > 0);
  }
  ModuleLoad again = load_module("saxpy", Device::cuda(0));
  CHECK(again.load_milliseconds == loads[0].load_milliseconds);  // the first load's record
}

TEST_CASE("two streams run independent work, each in order") {
  const size_t n = 1 << 20;
  auto x = random_values<float>(n, -1, 1, 31);
  auto y = random_values<float>(n, -1, 1, 32);
  Stream s1 = Stream::create(Device::cuda(0)), s2 = Stream::create(Device::cuda(0));
  auto x1 = gpu_floats(x), y1 = gpu_floats(y), x2 = gpu_floats(y), y2 = gpu_floats(x);
  LaunchOptions o1, o2;
  o1.stream = s1;
  o2.stream = s2;
  // y <- 0.5 * x + y, ten times on each stream, interleaved between them.
  for (int it = 0; it < 10; ++it) {
    launch(demo::saxpy.def(), int64_t(n), {x1, y1, 0.5f, y1}, o1);
    launch(demo::saxpy.def(), int64_t(n), {x2, y2, -0.5f, y2}, o2);
  }
  s1.synchronize();
  s2.synchronize();
  auto r1 = y1.to_vector<float>(), r2 = y2.to_vector<float>();
  std::vector<double> g1(r1.begin(), r1.end()), g2(r2.begin(), r2.end()), e1(n), e2(n);
  for (size_t i = 0; i < n; ++i) {
    float a = y[i], b = x[i];
    for (int it = 0; it < 10; ++it) {
      a = 0.5f * x[i] + a;
      b = -0.5f * y[i] + b;
    }
    e1[i] = a;
    e2[i] = b;
  }
  check_close(g1, e1, ir::Scalar::F32, "stream 1");
  check_close(g2, e2, ir::Scalar::F32, "stream 2");
}

TEST_CASE("graph capture and replay equal eager launches") {
  const size_t n = 100000;
  auto x = random_values<float>(n, -1, 1, 41);
  auto y = random_values<float>(n, -1, 1, 42);
  Stream stream = Stream::create(Device::cuda(0));
  preload_module("saxpy", PreloadMode::AllDevices);
  // Three dependent launches: y <- 2x + y; x <- -y + x; y <- 0.5x + y.
  auto work = [n](const NdArray& xa, const NdArray& ya) {
    return [n, xa, ya](const Stream& s) {
      LaunchOptions o;
      o.stream = s;
      launch(demo::saxpy.def(), int64_t(n), {xa, ya, 2.0f, ya}, o);
      launch(demo::saxpy.def(), int64_t(n), {ya, xa, -1.0f, xa}, o);
      launch(demo::saxpy.def(), int64_t(n), {xa, ya, 0.5f, ya}, o);
    };
  };
  auto xe = gpu_floats(x), ye = gpu_floats(y), xg = gpu_floats(x), yg = gpu_floats(y);
  auto eager = work(xe, ye);
  for (int r = 0; r < 5; ++r) eager(stream);
  CudaGraph graph = CudaGraph::capture(stream, work(xg, yg));
  for (int r = 0; r < 5; ++r) graph.replay(stream);
  stream.synchronize();
  // The same kernels on the same device: bit for bit.
  CHECK(xg.to_vector<float>() == xe.to_vector<float>());
  CHECK(yg.to_vector<float>() == ye.to_vector<float>());

  // Through the cache: a miss captures and replays, a hit replays.
  GraphCache cache(4);
  auto xc = gpu_floats(x), yc = gpu_floats(y);
  GraphKey key{"saxpy chain", {xc.data(), yc.data()}};
  CHECK_FALSE(cache.run(key, stream, work(xc, yc)));
  for (int r = 0; r < 4; ++r) CHECK(cache.run(key, stream, work(xc, yc)));
  stream.synchronize();
  CHECK(yc.to_vector<float>() == ye.to_vector<float>());
  CHECK(cache.stats().hits == 4);
}

TEST_CASE("block sizes beyond the device are User errors; valid ones give the same result") {
  const size_t n = 5000;
  auto x = gpu_floats(random_values<float>(n, -1, 1, 51));
  auto y = gpu_floats(random_values<float>(n, -1, 1, 52));
  auto out256 = NdArray::zeros(ir_type_of<float>(), {int64_t(n)}, Device::cuda(0));
  auto out32 = NdArray::zeros(ir_type_of<float>(), {int64_t(n)}, Device::cuda(0));
  launch(demo::saxpy.def(), int64_t(n), {x, y, 3.0f, out256});
  LaunchOptions o;
  o.block_dim = 32;
  launch(demo::saxpy.def(), int64_t(n), {x, y, 3.0f, out32}, o);
  CHECK(out32.to_vector<float>() == out256.to_vector<float>());
  o.block_dim = 4096;
  try {
    launch(demo::saxpy.def(), int64_t(n), {x, y, 3.0f, out32}, o);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()).find("block_dim 4096") != std::string::npos);
  }
}

TEST_CASE("an adjoint loop past its checkpoint bound is reported from the device's status word") {
  ModuleOptions options;
  options.loop_checkpoints = 4;  // bound: 16 iterations
  kjit::module("gpu_bounded").set_options(options);
  const size_t n = 1000;
  auto x = gpu_floats(random_values<float>(n, -1, 1, 61));
  auto out = NdArray::zeros(ir_type_of<float>(), {int64_t(n)}, Device::cuda(0));
  auto adj_x = NdArray::zeros(ir_type_of<float>(), {int64_t(n)}, Device::cuda(0));
  auto adj_out = gpu_floats(std::vector<float>(n, 1.0f));
  launch(gpu_bounded::power, int64_t(n), x, 12, out);
  launch_adjoint(gpu_bounded::power, int64_t(n), {x, 12, out}, {adj_x, {}, adj_out});
  auto g = adj_x.to_vector<float>();
  CHECK(g[0] == doctest::Approx(std::pow(1.01, 12)).epsilon(1e-5));
  try {
    launch_adjoint(gpu_bounded::power, int64_t(n), {x, 40, out}, {adj_x, {}, adj_out});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    CHECK(std::string(e.what()).find("loop_checkpoints") != std::string::npos);
  }
  // The status word was cleared: a launch within the bound succeeds again.
  launch_adjoint(gpu_bounded::power, int64_t(n), {x, 12, out}, {adj_x, {}, adj_out});
}
