// Debugging aids on cuda:0, as on the cpu (tests/builtins/debug.cpp, the same kernels): print
// and printf write from the device (print's adjoint prints adjoints), a failing expect_near
// prints the thread, the location and the values and the launch throws afterwards; block_dim()
// sees the launch's block size (the kernel's own, or the launch's).
#include "debug_kernels.hpp"
#include "gpu_support.hpp"
#include "test_support.hpp"

namespace gpu_debug {
using namespace kjit::dsl;
KJIT_MODULE(gpu_debug)
KJIT_KERNEL(blocks, (Array<int32_t> out)) { out[tid()] = block_dim(); }
KJIT_BLOCK_DIM(blocks, 64);
}  // namespace gpu_debug

using namespace kjit;
using test::capture_stdout;

namespace {
NdArray on_gpu(const std::vector<float>& v) { return NdArray::from_vector(v, {}, Device::cuda(0)); }
void sync() { Stream::default_for(Device::cuda(0)).synchronize(); }
}  // namespace

TEST_CASE("print and printf write from a cuda:0 thread") {
  std::vector<vec3d> x{vec3d{{1, 2, 3}}, vec3d{{4, 5, 6}}};
  NdArray out = NdArray::zeros(ir_type_of<double>(), {2}, Device::cuda(0));
  std::string text = capture_stdout([&] {
    launch(debugging::prints, 2, NdArray::from_vector(x, {}, Device::cuda(0)), out);
    sync();  // device printf reaches stdout when the host synchronises
  });
  debugging::check_prints_forward(text);
  CHECK(out.to_vector<double>() == std::vector<double>{28.0, 154.0});
  std::string reverse = capture_stdout([&] {
    launch_adjoint(debugging::prints, 2, {NdArray::from_vector(x, {}, Device::cuda(0)), out},
                   {NdArray::zeros(ir_type_of<vec3d>(), {2}, Device::cuda(0)),
                    NdArray::from_vector(std::vector<double>{1, 1}, {}, Device::cuda(0))});
    sync();
  });
  debugging::check_prints_adjoint(reverse);
}

TEST_CASE("a failing expect_near on cuda:0 prints the thread and the values, and the launch throws") {
  std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f}, y{1.0f, 2.0005f, 3.5f, 4.0f};
  std::string ok = capture_stdout([&] {
    launch(checks::near, 2, on_gpu(x), on_gpu(y));
    sync();
  });
  CHECK(ok.empty());
  bool threw = false;
  std::string text = capture_stdout([&] {
    try {
      launch(checks::near, 4, on_gpu(x), on_gpu(y));
    } catch (const Error& e) {
      threw = true;
      CHECK(e.kind() == ErrorKind::User);
      CHECK(std::string(e.what()).find("launch of kernel 'checks::near' in module 'builtins_checks': a device-side "
                                       "check (expect_near) failed") == 0);
    }
    sync();
  });
  CHECK(threw);
  CHECK(text.find("kjit: expect_near failed at ") != std::string::npos);
  CHECK(text.find("debug_kernels.hpp:" + std::to_string(checks::kNearLine) + ", thread 2:") != std::string::npos);
  CHECK(text.find(" 3 vs 3.5;") != std::string::npos);
  CHECK(text.find("thread 1") == std::string::npos);  // within tolerance: silent
  // The status word was cleared on the device: the next passing launch does not throw.
  CHECK_NOTHROW(launch(checks::near, 2, on_gpu(x), on_gpu(y)));
}

TEST_CASE("block_dim() on cuda:0 is the kernel's own block size, or the launch's") {
  NdArray out = NdArray::zeros(ir_type_of<int32_t>(), {300}, Device::cuda(0));
  launch(gpu_debug::blocks, 300, out);
  CHECK(out.to_vector<int32_t>() == std::vector<int32_t>(300, 64));
  LaunchOptions o;
  o.block_dim = 128;
  launch(gpu_debug::blocks.def(), 300, {out}, o);
  CHECK(out.to_vector<int32_t>() == std::vector<int32_t>(300, 128));
}
