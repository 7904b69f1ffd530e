// Kernels made at run time: launched, destroyed and made again without leaking their state.
#include <doctest/doctest.h>

#include "builtin_kernel.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/runtime/internal/module_table.hpp"
#include "sha256.hpp"
#include "test_support.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/kjit.hpp"

using namespace kjit;

TEST_CASE("a kernel made at run time frees its runtime state when it is destroyed") {
  const ir::Type f32 = ir::Type::scalar_of(ir::Scalar::F32);
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    auto k = test::make_builtin_kernel("runtime_made::neg", "runtime_made", *ir::find_builtin("abs"), {f32});
    auto a = NdArray::from_vector(std::vector<float>{-1, 2, -3});
    auto out = NdArray::zeros(f32, {3});
    launch(*k, 3, {a, out});
    CHECK(out.to_vector<float>() == std::vector<float>{1, 2, 3});
    // The launch cached its entries in the kernel; the kernel owns them (LeakSanitizer in the
    // sanitizer build reports them when it does not), and frees them with itself.
    CHECK(k->runtime_state.load() != nullptr);
    CHECK(bool(k->runtime_state_deleter.load()));
  }
}

TEST_CASE("module and kernel names with newlines, quotes and backslashes generate code that compiles") {
  const ir::Type f32 = ir::Type::scalar_of(ir::Scalar::F32);
  // Before they were escaped, the newline ended the comment line that names the kernel, and
  // what followed it was code.
  const std::string kernel = "odd::k\n#error injected by a kernel name \\";
  const std::string module = "odd\nmodule \"quoted\" \\";
  auto k = test::make_builtin_kernel(kernel, module, *ir::find_builtin("abs"), {f32});
  codegen::GeneratedModule g = codegen::generate_module(module, {&k->ir()}, codegen::CodegenOptions{});
  CHECK(g.text.find("\n#error") == std::string::npos);
  CHECK(g.text.find("// kernel odd::k\\x0a#error injected by a kernel name \\x5c (") != std::string::npos);
  CHECK(g.text.find(" \"kjit_module_odd\\nmodule \\\"quoted\\\" \\\\.cu\"") != std::string::npos);
  auto a = NdArray::from_vector(std::vector<float>{-1, 2, -3});
  auto out = NdArray::zeros(f32, {3});
  launch(*k, 3, {a, out});
  CHECK(out.to_vector<float>() == std::vector<float>{1, 2, 3});
}

namespace described_rt {
using namespace kjit::dsl;
KJIT_MODULE(described_rt)
KJIT_KERNEL(twice, (Array<Float> x, Array<Float> out)) {
  Int i = tid();
  out[i] = 2.0f * x[i];
}
}  // namespace described_rt

TEST_CASE("a cache entry whose descriptions swap forward and adjoint is rebuilt, not run") {
  auto x = from_vector(std::vector<float>{1, 2, 3}), out = zeros<float>({3});
  launch(described_rt::twice, 3, x, out);
  const detail::LoadedModule& m = detail::module_on(Registry::get().module("described_rt"), Device::cpu());
  const std::string meta_path = compiler::Cache::global().entry_path("described_rt", m.artifact.key) + "/meta.json";
  nlohmann::json meta = nlohmann::json::parse(test::read_file(meta_path));
  // The descriptions swapped, their hash updated; the recorded entry points (which a hit
  // compares with the module's) left as they are.
  std::swap(meta["kernels"][0]["forward"], meta["kernels"][0]["adjoint"]);
  meta["kernels_sha256"] =
      compiler::sha256_hex(meta["kernels"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  test::write_file(meta_path, meta.dump(1));
  const uint64_t bad_before = compiler::Cache::global().stats().bad_entries;
  // A new generation of the module (block_dim is no part of the key): it is looked up again.
  ModuleOptions o = kjit::module("described_rt").options();
  o.block_dim = 128;
  kjit::module("described_rt").set_options(o);
  out.zero();
  launch(described_rt::twice, 3, x, out);  // ran the adjoint entry as the forward one before
  CHECK(out.to_vector<float>() == std::vector<float>{2, 4, 6});
  CHECK(compiler::Cache::global().stats().bad_entries == bad_before + 1);
  nlohmann::json rebuilt = nlohmann::json::parse(test::read_file(meta_path));
  CHECK(rebuilt["kernels"][0]["forward"] == "kjit_described_rt__twice_fwd");
  auto gx = zeros<float>({3}), gout = from_vector(std::vector<float>{1, 1, 1});
  launch_adjoint(described_rt::twice, 3, {x, out}, {gx, gout});
  CHECK(gx.to_vector<float>() == std::vector<float>{2, 2, 2});
}
