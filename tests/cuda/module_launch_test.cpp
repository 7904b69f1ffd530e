// Modules and launches through the fake driver: loading images, kernels and globals, the grid
// and block chosen, shared memory, the exact parameter bytes, and launch errors explained.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "fake_driver_fixture.hpp"
#include "kjit/abi.h"
#include "kjit/error.hpp"
#include "nvrtc_compiler.hpp"

using namespace kjit;
using kjit::test::FakeDriver;

namespace {

const char* kPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.global .align 4 .u32 kjit_status;

.visible .entry kjit_t__scale_fwd(
	.param .align 8 .b8 kjit_t__scale_fwd_param_0[40],
	.param .align 8 .b8 kjit_t__scale_fwd_param_1[72],
	.param .f32 kjit_t__scale_fwd_param_2
)
{
	ret;
}

.visible .entry small_block(
	.param .u64 small_block_param_0
)
.maxntid 128, 1, 1
{
	ret;
}
)";

std::vector<char> image(const char* text) { return std::vector<char>(text, text + std::strlen(text) + 1); }

template <class T>
std::vector<unsigned char> bytes_of(const T& value) {
  const auto* p = reinterpret_cast<const unsigned char*>(&value);
  return std::vector<unsigned char>(p, p + sizeof(T));
}

std::string user_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::User);
    return e.what();
  }
  FAIL("expected a User error");
  return "";
}

/// NVRTC's output for `source` (through kjit's run-time-loaded NVRTC): PTX (NUL-terminated)
/// or a cubin for sm_80.
std::vector<char> nvrtc_compile(const char* source, bool cubin) {
  compiler::CompileOutput out = compiler::nvrtc_run(
      source, "k.cu", cubin ? compiler::TargetKind::Cubin : compiler::TargetKind::Ptx,
      {cubin ? "--gpu-architecture=sm_80" : "--gpu-architecture=compute_80"});
  REQUIRE_MESSAGE(out.ok, out.log);
  if (!cubin) out.bytes.push_back('\0');
  return out.bytes;
}

}  // namespace

TEST_CASE("a module is loaded on its device; kernels, limits and globals are found") {
  FakeDriver fake;
  void* module = cuda::module_load(1, image(kPtx));
  auto loads = fake_cuda::module_loads();
  REQUIRE(loads.size() == 1);
  CHECK(loads[0].device == 1);
  CHECK_FALSE(loads[0].cubin);
  CHECK(std::string(loads[0].image.data()) == kPtx);

  void* fn = cuda::module_function(1, module, "kjit_t__scale_fwd");
  CHECK(fn != nullptr);
  CHECK(cuda::function_max_threads(1, fn) == 1024);
  CHECK(cuda::function_max_threads(1, cuda::module_function(1, module, "small_block")) == 128);

  size_t bytes = 0;
  void* status = cuda::module_global(1, module, "kjit_status", &bytes);
  REQUIRE(status != nullptr);
  CHECK(bytes == 4);
  // The status word is ordinary device memory: readable and clearable with copies.
  int32_t reported = 7, seen = 0;
  REQUIRE(fake_cuda::write_global(1, "kjit_status", &reported, 4));
  cuda::copy(1, &seen, status, 4, cuda::CopyKind::DeviceToHost, nullptr);
  CHECK(seen == 7);
  cuda::zero(1, status, 4, nullptr);
  REQUIRE(fake_cuda::read_global(1, "kjit_status", &seen, 4));
  CHECK(seen == 0);
  CHECK(cuda::module_global(1, module, "no_such_global", &bytes) == nullptr);
  CHECK(bytes == 0);
}

TEST_CASE("a missing kernel is a Driver error naming it") {
  FakeDriver fake;
  void* module = cuda::module_load(0, image(kPtx));
  try {
    cuda::module_function(0, module, "kjit_nope_fwd");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Driver);
    CHECK(std::string(e.what()).find("'kjit_nope_fwd'") != std::string::npos);
    CHECK(std::string(e.what()).find("CUDA_ERROR_NOT_FOUND") != std::string::npos);
  }
}

TEST_CASE("PTX the driver cannot JIT is a Driver error carrying the JIT log") {
  FakeDriver fake("7.5");
  try {
    cuda::module_load(0, image(kPtx));  // .target sm_80 on an sm_75 device
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Driver);
    CHECK(std::string(e.what()).find("CUDA_ERROR_INVALID_PTX") != std::string::npos);
    CHECK(std::string(e.what()).find("JIT log: ptxas fatal") != std::string::npos);
  }
}

TEST_CASE("PTX without a terminating NUL is terminated before loading") {
  FakeDriver fake;
  std::vector<char> unterminated(kPtx, kPtx + std::strlen(kPtx));
  cuda::module_load(0, unterminated);
  CHECK(fake_cuda::module_loads().at(0).image.back() == '\0');
}

TEST_CASE("launch: grid, block, shared memory and the exact parameter bytes") {
  FakeDriver fake;
  void* module = cuda::module_load(0, image(kPtx));
  void* fn = cuda::module_function(0, module, "kjit_t__scale_fwd");
  void* data = cuda::alloc(0, 1000 * sizeof(float));

  kj::launch_bounds_t dim{{1000, 1, 1, 1}, 1, 0, 1000, nullptr};
  kj::array_t<float> x{static_cast<float*>(data), nullptr, {1000, 0, 0, 0}, 1, 0, {4, 0, 0, 0}};
  float scale = 2.5f;
  void* params[] = {&dim, &x, &scale};
  fake_cuda::clear_records();
  cuda::launch(0, fn, 1000, 0, 0, nullptr, params);
  auto launches = fake_cuda::launches();
  REQUIRE(launches.size() == 1);
  const fake_cuda::LaunchRecord& r = launches[0];
  CHECK(r.device == 0);
  CHECK(r.function == "kjit_t__scale_fwd");
  CHECK(r.block[0] == 256);  // the default block size
  CHECK(r.grid[0] == 4);     // ceil(1000 / 256)
  CHECK(r.grid[1] == 1);
  CHECK(r.block[1] == 1);
  CHECK(r.shared_bytes == 0);
  CHECK(r.stream == reinterpret_cast<uintptr_t>(CU_STREAM_PER_THREAD));
  REQUIRE(r.params.size() == 3);
  CHECK(r.params[0] == bytes_of(dim));
  CHECK(r.params[1] == bytes_of(x));
  CHECK(r.params[2] == bytes_of(scale));

  SUBCASE("a large launch is capped at the blocks the device keeps resident") {
    fake_cuda::clear_records();
    cuda::launch(0, fn, int64_t(1) << 40, 128, 0, nullptr, params);
    // 8 SMs × min(16 blocks, 2048 / 128 threads) per SM.
    CHECK(fake_cuda::launches().at(0).grid[0] == 8 * 16);
    fake_cuda::clear_records();
    cuda::launch(0, fn, int64_t(1) << 40, 512, 0, nullptr, params);
    CHECK(fake_cuda::launches().at(0).grid[0] == 8 * 4);
  }
  SUBCASE("an empty launch does nothing") {
    fake_cuda::clear_records();
    cuda::launch(0, fn, 0, 256, 0, nullptr, params);
    CHECK(fake_cuda::launches().empty());
  }
  SUBCASE("on a stream, with dynamic shared memory past 48 KiB (opted in)") {
    void* stream = cuda::stream_create(0);
    fake_cuda::clear_records();
    cuda::launch(0, fn, 1000, 64, 64 * 1024, stream, params);
    auto l = fake_cuda::launches().at(0);
    CHECK(l.stream == reinterpret_cast<uintptr_t>(stream));
    CHECK(l.shared_bytes == 64 * 1024);
    CHECK(l.block[0] == 64);
    CHECK(l.grid[0] == 16);
    CHECK(kjit::test::first_call("cuFuncSetAttribute") >= 0);
    cuda::stream_destroy(0, stream);
  }
  cuda::free(0, data);
}

TEST_CASE("block sizes the device or the kernel cannot run are User errors") {
  FakeDriver fake;
  void* module = cuda::module_load(0, image(kPtx));
  void* small = cuda::module_function(0, module, "small_block");
  uint64_t arg = 0;
  void* params[] = {&arg};
  std::string err = user_error([&] { cuda::launch(0, small, 1000, 256, 0, nullptr, params); });
  CHECK(err.find("kernel small_block cannot run 256 threads per block on cuda:0") !=
        std::string::npos);
  CHECK(err.find("at most 128") != std::string::npos);
  CHECK(err.find("block_dim") != std::string::npos);
  cuda::launch(0, small, 1000, 128, 0, nullptr, params);  // within its limit

  err = user_error([&] { cuda::launch(0, small, 1000, 2048, 0, nullptr, params); });
  CHECK(err.find("block_dim 2048 is not a valid block size on cuda:0") != std::string::npos);
  CHECK(user_error([&] { cuda::launch(0, small, 1000, -1, 0, nullptr, params); })
            .find("block_dim -1") != std::string::npos);
  err = user_error([&] { cuda::launch(0, small, 1000, 128, 200 * 1024, nullptr, params); });
  CHECK(err.find("bytes of dynamic shared memory") != std::string::npos);
}

TEST_CASE("a kernel launched on a device other than its module's is a Driver error") {
  FakeDriver fake;
  void* module = cuda::module_load(0, image(kPtx));
  void* small = cuda::module_function(0, module, "small_block");
  uint64_t arg = 0;
  void* params[] = {&arg};
  try {
    cuda::launch(1, small, 10, 32, 0, nullptr, params);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::Driver);
    CHECK(std::string(e.what()).find("CUDA_ERROR_INVALID_HANDLE") != std::string::npos);
  }
}

TEST_CASE("grid_size covers small launches exactly and caps large ones") {
  cuda::DeviceProperties p;
  p.sm_count = 132;
  p.max_blocks_per_sm = 32;
  p.max_threads_per_sm = 2048;
  CHECK(cuda::grid_size(p, 1, 256) == 1);
  CHECK(cuda::grid_size(p, 256, 256) == 1);
  CHECK(cuda::grid_size(p, 257, 256) == 2);
  CHECK(cuda::grid_size(p, int64_t(1) << 30, 256) == 132 * 8);
  CHECK(cuda::grid_size(p, int64_t(1) << 30, 32) == 132 * 32);
  CHECK(cuda::grid_size(p, 0, 256) == 0);
}

TEST_CASE("the fake reads NVRTC's PTX and cubin parameter layouts alike") {
  // The fake's recorded bytes are only as good as its reading of images: check its cubin
  // reader (.nv.info) against its PTX reader on one NVRTC-compiled kernel with mixed params.
  const char* source = R"(
    struct B { int s[4]; int n; int r; long long size; int* status; };
    struct A { float* d; float* g; int s[4]; int n; int r; long long st[4]; };
    extern "C" __device__ int kjit_status = 0;
    extern "C" __global__ void mixed(B dim, A x, float a, double b, char c, A y) {
      if (threadIdx.x == 0) x.d[0] = a * b + c + y.d[1] + dim.size;
      kjit_status = 1;
    })";
  FakeDriver fake("8.0");
  kj::launch_bounds_t dim{{3, 1, 1, 1}, 1, 0, 3, nullptr};
  kj::array_t<float> x{reinterpret_cast<float*>(0x1000), nullptr, {3, 0, 0, 0}, 1, 0, {4, 0, 0, 0}};
  kj::array_t<float> y{reinterpret_cast<float*>(0x2000), reinterpret_cast<float*>(0x3000),
                       {3, 0, 0, 0}, 1, 0, {4, 0, 0, 0}};
  float a = 1.5f;
  double b = -2.25;
  char c = 'k';
  void* params[] = {&dim, &x, &a, &b, &c, &y};
  std::vector<std::vector<std::vector<unsigned char>>> seen;
  for (bool cubin : {false, true}) {
    void* module = cuda::module_load(0, nvrtc_compile(source, cubin));
    size_t bytes = 0;
    CHECK(cuda::module_global(0, module, "kjit_status", &bytes) != nullptr);
    CHECK(bytes == 4);
    fake_cuda::clear_records();
    cuda::launch(0, cuda::module_function(0, module, "mixed"), 3, 32, 0, nullptr, params);
    seen.push_back(fake_cuda::launches().at(0).params);
  }
  REQUIRE(seen[0].size() == 6);
  CHECK(seen[0] == seen[1]);
  CHECK(seen[0][0] == bytes_of(dim));
  CHECK(seen[0][1] == bytes_of(x));
  CHECK(seen[0][2] == bytes_of(a));
  CHECK(seen[0][3] == bytes_of(b));
  CHECK(seen[0][4] == bytes_of(c));
  CHECK(seen[0][5] == bytes_of(y));
}
