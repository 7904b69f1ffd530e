// How kjit::launch configures a CUDA launch, on the fake devices: the block size (launch, then
// kernel, then module), checked against the function's own thread limit before anything is
// launched (also inside a graph capture); dynamic shared memory from meta.json; and a stream
// of another device refused.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "integration/fake_devices.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/modules.hpp"
#include "kjit/runtime/graph.hpp"
#include "kjit/kernel.hpp"
#include "sha256.hpp"
#include "test_support.hpp"

namespace launch_limits {
using namespace kjit::dsl;
KJIT_MODULE(launch_limits)
KJIT_KERNEL(limited, (Array<Float> x, Array<Float> y)) { y[tid()] = x[tid()] * 2.0f; }
}  // namespace launch_limits

namespace launch_blocks {
using namespace kjit::dsl;
KJIT_MODULE(launch_blocks)
KJIT_KERNEL(own_block, (Array<Float> x)) { x[tid()] = x[tid()] + 1.0f; }
KJIT_BLOCK_DIM(own_block, 64);
KJIT_KERNEL(plain, (Array<Float> x)) { x[tid()] = x[tid()] - 1.0f; }
}  // namespace launch_blocks

namespace launch_shared {
using namespace kjit::dsl;
KJIT_MODULE(launch_shared)
KJIT_KERNEL(staged, (Array<Float> x, Array<Float> y)) { y[tid()] = x[tid()] * 3.0f; }
KJIT_KERNEL(oversized, (Array<Float> x, Array<Float> y)) { y[tid()] = x[tid()] * 4.0f; }
}  // namespace launch_shared

using namespace kjit;

namespace {

/// The message of the Error of kind `kind` that `f` throws.
std::string error_of(const std::function<void()>& f, ErrorKind kind = ErrorKind::User) {
  try {
    f();
  } catch (const Error& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  FAIL("expected an error");
  return "";
}

size_t count_calls(const std::string& name) {
  size_t n = 0;
  for (const auto& c : fake_cuda::calls()) n += c.name == name;
  return n;
}

NdArray floats(int64_t n, const Device& d) { return NdArray::zeros(ir_type_of<float>(), {n}, d); }

}  // namespace

TEST_CASE("a block size above the function's max threads per block is refused before the launch") {
  kjit::test::use_fake_devices();
  const Device d = Device::cuda(0);
  // Registers or launch bounds would limit the forward entry point to 128 threads per block;
  // the limit is queried when the module is loaded.
  fake_cuda::limit_max_threads(codegen::entry_name("launch_limits::limited", codegen::EntryKind::Forward), 128);
  NdArray x = floats(1000, d), y = floats(1000, d);
  x.requires_grad();
  y.requires_grad();
  load_module("launch_limits", d);
  const size_t attribute_queries = count_calls("cuFuncGetAttribute");
  const size_t launches = count_calls("cuLaunchKernel");
  const std::string expected =
      "launch of kernel 'launch_limits::limited' on cuda:0: block_dim 256 (from ModuleOptions::block_dim "
      "of its module) is more than the 128 threads per block its forward entry point can run "
      "(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its register use or launch bounds limit it); use 1 to 128 "
      "threads per block, a multiple of 32 runs best";
  CHECK(error_of([&] { launch(launch_limits::limited, 1000, x, y); }) == expected);
  CHECK(count_calls("cuLaunchKernel") == launches);

  LaunchOptions o;
  o.block_dim = 512;
  CHECK(error_of([&] { launch(launch_limits::limited.def(), 1000, {x, y}, o); })
            .find("block_dim 512 (from LaunchOptions::block_dim) is more than the 128 threads") != std::string::npos);
  o.block_dim = -1;
  CHECK(error_of([&] { launch(launch_limits::limited.def(), 1000, {x, y}, o); }) ==
        "launch of kernel 'launch_limits::limited' on cuda:0: block_dim -1 (from LaunchOptions::block_dim) is "
        "not a block size: use 1 to 128 threads per block");
  CHECK(count_calls("cuLaunchKernel") == launches);

  // Within the limit it runs; the adjoint entry point has its own (unlimited) one.
  o.block_dim = 128;
  launch(launch_limits::limited.def(), 1000, {x, y}, o);
  CHECK(fake_cuda::launches().back().block[0] == 128);
  launch_adjoint_grads(launch_limits::limited, 1000, x, y);
  CHECK(fake_cuda::launches().back().block[0] == 256);
  CHECK(count_calls("cuLaunchKernel") == launches + 2);
  CHECK(count_calls("cuFuncGetAttribute") == attribute_queries);  // no query per launch

  // Inside a graph capture too: the capture fails with the same error and records nothing.
  Stream stream = Stream::create(d);
  CHECK(error_of([&] {
          CudaGraph::capture(stream, [&](const Stream& s) {
            LaunchOptions c;
            c.stream = s;
            launch(launch_limits::limited.def(), 1000, {x, y}, c);
          });
        }) == expected);
  CHECK(count_calls("cuLaunchKernel") == launches + 2);
  CHECK(graph_captures_in_progress() == 0);
}

TEST_CASE("block size: the launch's, else the kernel's own, else the module's, else 256") {
  kjit::test::use_fake_devices();
  const Device d = Device::cuda(1);
  NdArray x = floats(4096, d);
  auto block_of_last = [] { return fake_cuda::launches().back().block[0]; };
  LaunchOptions o;

  CHECK(launch_blocks::own_block.def().block_dim() == 64);  // KJIT_BLOCK_DIM
  launch(launch_blocks::own_block, 4096, x);
  CHECK(block_of_last() == 64);
  launch(launch_blocks::plain, 4096, x);
  CHECK(block_of_last() == 256);  // ModuleOptions' default
  o.block_dim = 32;
  launch(launch_blocks::own_block.def(), 4096, {x}, o);
  CHECK(block_of_last() == 32);

  ModuleOptions mo = module("launch_blocks").options();
  mo.block_dim = 128;
  module("launch_blocks").set_options(mo);
  launch(launch_blocks::plain, 4096, x);
  CHECK(block_of_last() == 128);
  launch(launch_blocks::own_block, 4096, x);
  CHECK(block_of_last() == 64);

  launch_blocks::plain.set_block_dim(96);
  launch(launch_blocks::plain, 4096, x);
  CHECK(block_of_last() == 96);
  launch(launch_blocks::plain.def(), 4096, {x}, o);
  CHECK(block_of_last() == 32);
  launch_blocks::plain.set_block_dim(0);  // back to the module's
  launch(launch_blocks::plain, 4096, x);
  CHECK(block_of_last() == 128);

  mo.block_dim = 0;  // nobody asks: 256
  module("launch_blocks").set_options(mo);
  launch(launch_blocks::plain, 4096, x);
  CHECK(block_of_last() == 256);

  CHECK(error_of([] { launch_blocks::plain.set_block_dim(2048); }) ==
        "kernel 'launch_blocks::plain': block_dim 2048 is not a CUDA block size: use 1 to 1024 threads (a "
        "multiple of 32 runs best), or 0 for the module's block_dim");
  CHECK(launch_blocks::plain.def().block_dim() == 0);
}

TEST_CASE("each entry point's dynamic shared memory comes from meta.json") {
  kjit::test::use_fake_devices();
  const Device d = Device::cuda(0);
  // What codegen records for the DSL's kernels: none.
  nlohmann::json described = codegen::describe_kernel(launch_shared::staged.def().ir(), true);
  CHECK(described["dynamic_shared_bytes"] == nlohmann::json{{"forward", 0}, {"adjoint", 0}});

  // The cache entry cuda:0 will load states 64 KiB for staged's forward entry point, and more
  // than a block has for oversized's.
  ModuleBuild built = build_module_for("launch_shared", "sm_80");
  const std::string meta_path = compiler::Cache::global().entry_path("launch_shared", built.key) + "/meta.json";
  nlohmann::json meta = nlohmann::json::parse(test::read_file(meta_path));
  for (nlohmann::json& k : meta["kernels"]) {
    REQUIRE(k.contains("dynamic_shared_bytes"));
    k["dynamic_shared_bytes"]["forward"] = k["name"] == "launch_shared::staged" ? 64 * 1024 : 200 * 1024;
  }
  // An edit the cache accepts updates the descriptions' hash (an edit that does not is a miss).
  meta["kernels_sha256"] =
      compiler::sha256_hex(meta["kernels"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  test::write_file(meta_path, meta.dump(2));

  NdArray x = floats(1000, d), y = floats(1000, d);
  x.requires_grad();
  y.requires_grad();
  const size_t opt_ins = count_calls("cuFuncSetAttribute");
  launch(launch_shared::staged, 1000, x, y);
  fake_cuda::LaunchRecord fwd = fake_cuda::launches().back();
  CHECK(fwd.function == codegen::entry_name("launch_shared::staged", codegen::EntryKind::Forward));
  CHECK(fwd.shared_bytes == 64 * 1024);
  CHECK(count_calls("cuFuncSetAttribute") == opt_ins + 1);  // past 48 KiB: opted in
  launch_adjoint_grads(launch_shared::staged, 1000, x, y);
  CHECK(fake_cuda::launches().back().shared_bytes == 0);

  const size_t launches = count_calls("cuLaunchKernel");
  CHECK(error_of([&] { launch(launch_shared::oversized, 1000, x, y); }) ==
        "launch of kernel 'launch_shared::oversized' on cuda:0: its forward entry point needs 204800 bytes of "
        "dynamic shared memory (meta.json) plus 0 static, more than the 101376 bytes a block can have on this "
        "device");
  CHECK(count_calls("cuLaunchKernel") == launches);
}

TEST_CASE("a stream of another device is a User error naming the kernel and both devices") {
  kjit::test::use_fake_devices();
  NdArray x = floats(100, Device::cuda(0));
  Stream other = Stream::create(Device::cuda(1));
  LaunchOptions o;
  o.stream = other;
  const size_t launches = count_calls("cuLaunchKernel");
  CHECK(error_of([&] { launch(launch_blocks::plain.def(), 100, {x}, o); }) ==
        "launch of kernel 'launch_blocks::plain' on cuda:0: LaunchOptions::stream is a stream of cuda:1, not of "
        "cuda:0; pass a stream of cuda:0, or none for its default stream");
  o.stream = Stream::default_for(Device::cuda(1));  // a default stream names its device too
  CHECK(error_of([&] { launch(launch_blocks::plain.def(), 100, {x}, o); }).find("a stream of cuda:1") !=
        std::string::npos);
  NdArray h = floats(100, Device::cpu());
  o.stream = other;
  CHECK(error_of([&] { launch(launch_blocks::plain.def(), 100, {h}, o); }) ==
        "launch of kernel 'launch_blocks::plain' on cpu: LaunchOptions::stream is a stream of cuda:1, not of "
        "cpu; pass a stream of cpu, or none for its default stream");
  CHECK(count_calls("cuLaunchKernel") == launches);

  o.stream = Stream::create(Device::cuda(0));  // its own device's stream is used
  launch(launch_blocks::plain.def(), 100, {x}, o);
  CHECK(fake_cuda::launches().back().stream == reinterpret_cast<uintptr_t>(o.stream.handle()));
  CHECK(fake_cuda::launches().back().device == 0);
}
