// Generated source of the example modules against golden files, which record the codegen
// version: a change to the generated text without a version bump (stale cache keys) fails.
#include <doctest/doctest.h>
#include <algorithm>
#include <string>

#include "golden.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/kjit.hpp"
#include "kjit/kernel.hpp"
#include "loops.hpp"
#include "saxpy.hpp"
#include "springs.hpp"
#include "test_support.hpp"

using namespace kjit;

namespace {
codegen::GeneratedModule generate(const std::string& module, bool adjoint = true) {
  std::vector<const ir::Function*> fns;
  for (const KernelDef* k : Registry::get().find_module(module)->kernels()) fns.push_back(&k->ir());
  codegen::CodegenOptions o;
  o.enable_adjoint = adjoint;
  return codegen::generate_module(module, fns, o);
}
}  // namespace

/// The golden part of a module's text: its first line (naming the codegen version) and the
/// kernels; the prelude in between has its own tests.
std::string kernels_part(const std::string& text) {
  size_t first = text.find('\n');
  size_t kernels = text.find("\n// kernel ");
  REQUIRE(kernels != std::string::npos);
  return text.substr(0, first + 1) + "// [prelude omitted]" + text.substr(kernels);
}

TEST_CASE("generated source of the example modules matches the golden files") {
  for (const char* module : {"saxpy", "springs", "loops"}) {
    INFO("module " << module);
    const std::string text = kernels_part(generate(module).text);
    const std::string name = std::string("codegen/") + module + ".golden";
    std::string diff = test::compare_golden(name, text);
    if (!diff.empty()) {
      // The golden file names the version that produced it on its first line.
      std::string golden = test::read_file(std::string(KJIT_SOURCE_DIR) + "/tests/golden/" + name);
      std::string version = "codegen " + std::to_string(codegen::kCodegenVersion) + " ";
      bool same_version = golden.substr(0, golden.find('\n')).find(version) != std::string::npos;
      if (same_version)
        diff += "\nThe generated text changed but kjit::codegen::kCodegenVersion did not: bump it, or "
                "caches keep serving modules generated the old way.";
    }
    CHECK_MESSAGE(diff.empty(), diff);
  }
}

TEST_CASE("generated text: entry points, #line directives, forward-only modules") {
  codegen::GeneratedModule m = generate("springs");
  CHECK(m.entry_points == std::vector<std::string>{"kjit_demo__springs_fwd", "kjit_demo__springs_adj",
                                                   "kjit_demo__springs_f64_fwd", "kjit_demo__springs_f64_adj"});
  CHECK(m.text.find("#line 24 \"examples/springs.hpp\"") != std::string::npos);
  CHECK(m.text.find("extern \"C\" __global__ void kjit_demo__springs_fwd(kj::launch_bounds_t dim,") != std::string::npos);
  CHECK(m.text.find("KJ_EXPORT void kjit_demo__springs_fwd(void** kj_args, kj_int64 kj_begin, kj_int64 kj_end)") !=
        std::string::npos);
  // Every mapped line is really a line of the user's file.
  REQUIRE(!m.source_map.empty());
  for (const codegen::SourceMapping& s : m.source_map) CHECK(std::string(s.loc.file).find("examples/") == 0);

  codegen::GeneratedModule fwd = generate("springs", false);
  CHECK(fwd.entry_points == std::vector<std::string>{"kjit_demo__springs_fwd", "kjit_demo__springs_f64_fwd"});
  CHECK(fwd.text.find("_adj") == std::string::npos);    // no adjoint entry points
  CHECK(fwd.text.find("adj_p_") == std::string::npos);  // no adjoint parameters
  CHECK(fwd.text.find("kj::adj_mul") == std::string::npos);
  CHECK(fwd.text.size() < m.text.size());
  CHECK(fwd.kernels[0]["adjoint"].is_null());
}

namespace entry_tests {
using namespace kjit::dsl;
KJIT_MODULE(codegen_entry_points)
/// Reads and writes x: its adjoint is refused (an obstacle), so it has a forward entry only.
KJIT_KERNEL(in_place, (Array<double> x)) {
  Int i = tid();
  x[i] = x[i] * 2.0;
}
KJIT_KERNEL(scaled, (Array<double> x, Array<double> y)) { y[tid()] = x[tid()] * 3.0; }
}  // namespace entry_tests

TEST_CASE("entry_points, which a cache hit reads without generating, names what generate_module writes") {
  (void)entry_tests::in_place.def().ir();
  (void)entry_tests::scaled.def().ir();
  for (const char* module : {"springs", "saxpy", "loops", "codegen_entry_points"})
    for (bool adjoint : {true, false}) {
      INFO(module << (adjoint ? " with adjoints" : " forward only"));
      std::vector<const ir::Function*> fns;
      for (const KernelDef* k : Registry::get().find_module(module)->kernels()) fns.push_back(&k->ir());
      codegen::CodegenOptions o;
      o.enable_adjoint = adjoint;
      CHECK(codegen::entry_points(fns, o) == generate(module, adjoint).entry_points);
    }
  const std::vector<std::string> refused = generate("codegen_entry_points").entry_points;
  CHECK(std::count(refused.begin(), refused.end(), "kjit_entry_tests__in_place_adj") == 0);
  CHECK(std::count(refused.begin(), refused.end(), "kjit_entry_tests__scaled_adj") == 1);
}

TEST_CASE("entry names are stable and unique per kernel") {
  CHECK(codegen::entry_name("demo::springs", codegen::EntryKind::Forward) == "kjit_demo__springs_fwd");
  CHECK(codegen::entry_name("a::b_c", codegen::EntryKind::Adjoint) != codegen::entry_name("a_b::c", codegen::EntryKind::Adjoint));
}

TEST_CASE("the module identity is known without generating text, and tracks every input") {
  std::vector<const ir::Function*> fns{&demo::saxpy.def().ir()};
  codegen::CodegenOptions o;
  std::string id = codegen::module_identity("saxpy", fns, o);
  CHECK(id == codegen::module_identity("saxpy", fns, o));
  o.enable_adjoint = false;
  CHECK(id != codegen::module_identity("saxpy", fns, o));
  o = {};
  o.loop_checkpoints = 32;
  CHECK(id != codegen::module_identity("saxpy", fns, o));
  CHECK(id != codegen::module_identity("saxpy2", fns, codegen::CodegenOptions{}));
  // describe_module gives what generate_module reports, without the text.
  nlohmann::json described = codegen::describe_module(fns, codegen::CodegenOptions{});
  CHECK(described.size() == 1);
  nlohmann::json generated = generate("saxpy").kernels;  // daxpy, then saxpy
  CHECK(described[0] == generated[1]);
}
