// `kjit list` (modules, kernels, parameters, adjoints) and `kjit source` (IR and generated text)
// on the example library and the cli tests' own library.
#include <doctest/doctest.h>

#include <map>

#include "cli_fixtures.hpp"

using namespace kjit::test;
using namespace kjit::test::cli;

TEST_CASE("list --json lists the example kernels with their parameter names and types") {
  Run r = run_kjit("list " + kDemoLibrary + " --json");
  REQUIRE(r.status == 0);
  nlohmann::json j = r.json();
  CHECK(j["libraries"] == nlohmann::json::array({kDemoLibrary}));
  std::map<std::string, nlohmann::json> kernels;
  std::vector<std::string> modules;
  for (const auto& m : j["modules"]) {
    modules.push_back(m["name"]);
    CHECK(m["adjoint"] == true);
    CHECK(m["options"]["enable_adjoint"] == true);
    for (const auto& k : m["kernels"]) kernels[k["name"]] = k;
  }
  CHECK(modules == std::vector<std::string>{"loops", "saxpy", "springs"});
  REQUIRE(kernels.size() == 6);
  auto names = [&](const std::string& kernel) {
    std::vector<std::string> out;
    for (const auto& p : kernels.at(kernel)["params"]) out.push_back(p["name"]);
    return out;
  };
  CHECK(names("demo::saxpy") == std::vector<std::string>{"x", "y", "a", "out"});
  CHECK(names("demo::daxpy") == std::vector<std::string>{"x", "y", "a", "out"});
  CHECK(names("demo::springs") == std::vector<std::string>{"x", "pairs", "rest", "k", "f"});
  CHECK(names("demo::springs_f64") == std::vector<std::string>{"x", "pairs", "rest", "k", "f"});
  CHECK(names("demo::damp") == std::vector<std::string>{"v", "c", "steps", "out"});
  CHECK(names("demo::iterate") == std::vector<std::string>{"x", "c", "n", "out"});
  CHECK(kernels["demo::springs"]["params"][0]["type"] == "array1d<vec3f>");
  CHECK(kernels["demo::springs"]["params"][3]["type"] == "float32");
  CHECK(kernels["demo::saxpy"]["source"] == "examples/saxpy.hpp:9");
  for (const auto& [name, k] : kernels) CHECK_MESSAGE(k["adjoint"] == true, name);
}

TEST_CASE("list prints each module's kernel signatures, and says which kernel cannot be traced") {
  Run r = run_kjit("list " + kDemoLibrary);
  REQUIRE(r.status == 0);
  CHECK(r.out.find(kDemoLibrary + ": 3 modules, 6 kernels") == 0);
  CHECK(r.out.find("module saxpy  (2 kernels, adjoints on)") != std::string::npos);
  CHECK(r.out.find("demo::saxpy(x: array1d<float32>, y: array1d<float32>, a: float32, out: array1d<float32>)") !=
        std::string::npos);

  Run broken = run_kjit("list " + kTestLibrary + " --json");
  REQUIRE(broken.status == 0);
  nlohmann::json k = broken.json()["modules"][0]["kernels"][0];
  CHECK(k["name"] == "cli_broken::assign_in_branch");
  CHECK(k["adjoint"] == false);
  CHECK(k["error"].get<std::string>().find("cli_test_kernels.hpp:") != std::string::npos);
}

TEST_CASE("source prints the IR, the forward text, or forward and adjoint") {
  Run ir = run_kjit("source " + kDemoLibrary + " demo::damp --ir");
  REQUIRE(ir.status == 0);
  CHECK(ir.out.find("# demo::damp (module loops), traced from examples/loops.hpp:11") == 0);
  CHECK(ir.out.find("kernel demo::damp(v: array1d<vec3f>, c: float32, steps: int32, out: array1d<vec3f>) {") !=
        std::string::npos);
  CHECK(ir.out.find("for %") != std::string::npos);

  // An unqualified name works when one kernel has it.
  Run forward = run_kjit("source " + kDemoLibrary + " saxpy");
  REQUIRE(forward.status == 0);
  CHECK(forward.out.find("// kjit source: demo::saxpy (module saxpy), forward only") == 0);
  CHECK(forward.out.find("kjit_demo__saxpy_fwd") != std::string::npos);
  CHECK(forward.out.find("kjit_demo__saxpy_adj") == std::string::npos);
  CHECK(forward.out.find("demo::daxpy") == std::string::npos);  // the kernel alone, not its module

  Run both = run_kjit("source " + kDemoLibrary + " demo::saxpy --adjoint --target sm_90");
  REQUIRE(both.status == 0);
  CHECK(both.out.find("forward and adjoint") != std::string::npos);
  CHECK(both.out.find("// for sm_90, compiled by nvrtc ") != std::string::npos);
  CHECK(both.out.find("kjit_demo__saxpy_adj") != std::string::npos);

  Run cpu = run_kjit("source " + kDemoLibrary + " demo::saxpy --target cpu");
  REQUIRE(cpu.status == 0);
  CHECK(cpu.out.find("// for cpu, compiled by host ") != std::string::npos);

  // The IR after each of codegen's passes, and KJIT_PRINT_PASSES=1 printing the same to stderr
  // while a module is generated.
  Run passes = run_kjit("source " + kDemoLibrary + " demo::damp --passes --adjoint");
  REQUIRE(passes.status == 0);
  CHECK(passes.out.find("# demo::damp (module loops), codegen's passes with the adjoint's analyses, traced from "
                        "examples/loops.hpp:11") == 0);
  const size_t traced = passes.out.find("\n# after traced: kernel demo::damp\nkernel demo::damp(");
  const size_t lowered = passes.out.find("\n# after lower_jumps: kernel demo::damp\nkernel demo::damp(");
  const size_t loops = passes.out.find("\n# after adjoint_loops: kernel demo::damp\nloop 0 at loops.hpp:14: 1 variables checkpointed");
  CHECK(traced != std::string::npos);
  CHECK(lowered != std::string::npos);
  CHECK(loops != std::string::npos);
  CHECK((traced < lowered && lowered < loops));
  Run printed = run_kjit("source " + kDemoLibrary + " demo::damp", "KJIT_PRINT_PASSES=1");
  REQUIRE(printed.status == 0);
  CHECK(printed.err.find("# kjit pass lower_jumps: kernel demo::damp\nkernel demo::damp(") != std::string::npos);
  CHECK(printed.out.find("// kjit source: demo::damp") == 0);

  Run untraceable = run_kjit("source " + kTestLibrary + " assign_in_branch");
  CHECK(untraceable.status == 2);
  CHECK(untraceable.err.find("cli_test_kernels.hpp:") != std::string::npos);
}
