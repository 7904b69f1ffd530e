// `kjit precompile` on the example library: compiled, then cached, artifacts that verify, a
// demo that then runs with KJIT_NO_COMPILE=1, module filters, failures shown with exit 1.
#include <doctest/doctest.h>

#include <algorithm>

#include <set>

#include "cli_fixtures.hpp"

using namespace kjit::test;
using namespace kjit::test::cli;

namespace {

const std::set<std::string> kExampleModules = {"loops", "saxpy", "springs"};

/// Checks the documented shape of precompile's JSON and that every target has `status`.
void check_precompile_json(const nlohmann::json& j, const std::vector<std::string>& targets,
                           const std::string& status, const std::set<std::string>& modules = kExampleModules) {
  REQUIRE(j.is_object());
  CHECK(j.size() == 3);
  CHECK(j.at("failed") == 0);
  // Which NVRTC built the GPU targets (null when only the cpu was asked for).
  bool gpu = std::any_of(targets.begin(), targets.end(), [](const std::string& t) { return t != "cpu"; });
  if (gpu) {
    const auto& n = j.at("nvrtc");
    CHECK(n.at("available") == true);
    CHECK(n.at("path").get<std::string>().find("libnvrtc.so.") != std::string::npos);
    CHECK(!n.at("origin").get<std::string>().empty());
    CHECK(n.at("version").get<std::string>().find('.') != std::string::npos);
    CHECK(n.at("reason").is_null());
  } else {
    CHECK(j.at("nvrtc").is_null());
  }
  std::set<std::string> names;
  for (const auto& m : j.at("modules")) {
    CHECK(m.size() == 3);
    names.insert(m.at("name").get<std::string>());
    CHECK(m.at("key").get<std::string>().size() == 64);
    REQUIRE(m.at("targets").size() == targets.size());
    for (size_t i = 0; i < targets.size(); ++i) {
      const auto& t = m["targets"][i];
      CHECK(t.size() == 5);
      CHECK(t.at("target") == targets[i]);
      CHECK_MESSAGE(t.at("status") == status, m["name"], " ", targets[i]);
      CHECK(t.at("bytes").get<uint64_t>() > 1000);
      CHECK(t.at("ms").get<double>() >= 0);
      CHECK(t.at("error").is_null());
    }
  }
  CHECK(names == modules);
}

}  // namespace

TEST_CASE("precompile --arch sm_80,sm_90: compiled, verified, then cached; the demo then compiles nothing") {
  const ExampleCache& cache = example_cache();
  INFO("first run stderr: " << cache.first.err);
  REQUIRE(cache.first.status == 0);
  check_precompile_json(cache.first.json(), {"sm_80", "sm_90"}, "compiled");

  // Every artifact exists where the cache keeps it, and the whole cache verifies.
  Run stats = run_kjit("cache stats --json --cache-dir " + cache.dir);
  REQUIRE(stats.status == 0);
  nlohmann::json s = stats.json();
  CHECK(s["entries"] == 6);
  CHECK(s["by_target"]["sm_80"] == 3);
  CHECK(s["by_target"]["sm_90"] == 3);
  for (const auto& e : s["list"]) {
    std::string artifact = e["path"].get<std::string>() + "/module.cubin";
    CHECK_MESSAGE(path_exists(artifact), artifact);
  }
  Run verify = run_kjit("cache verify --json --cache-dir " + cache.dir);
  CHECK(verify.status == 0);
  CHECK(verify.json()["valid"] == 6);
  CHECK(verify.json()["problems"].empty());

  // Again: every target is served by the cache.
  Run again = run_kjit("precompile " + kDemoLibrary + " --arch sm_80,sm_90 --json --cache-dir " + cache.dir);
  REQUIRE(again.status == 0);
  check_precompile_json(again.json(), {"sm_80", "sm_90"}, "cached");
  // The module key is the module's own, the same in every run.
  for (size_t i = 0; i < 3; ++i)
    CHECK(again.json()["modules"][i]["key"] == cache.first.json()["modules"][i]["key"]);

  // Add the cpu (the demo runs there without a GPU; it also builds sm_90, cached above), with
  // the tangent modules (the demo launches tangents), then run the demo with compiling
  // forbidden: it must find everything in the cache.
  TempDir copy("cli-demo-cache");
  copy_cache(cache.dir, copy / "cache");
  Run cpu = run_kjit("precompile " + kDemoLibrary + " --cpu --tangent --json --cache-dir " + copy / "cache");
  REQUIRE(cpu.status == 0);
  check_precompile_json(cpu.json(), {"cpu"}, "compiled",
                        {"loops", "saxpy", "springs", "loops.tangent", "saxpy.tangent", "springs.tangent"});
  Run demo = run("KJIT_CUDA_DRIVER=none KJIT_NO_COMPILE=1 KJIT_CACHE_DIR=" + copy / "cache" + " " + kDemoProgram);
  INFO("demo output:\n" << demo.out << demo.err);
  CHECK(demo.status == 0);
  CHECK(demo.out.find("Every module came from the disk cache: the compiler did not run.") != std::string::npos);
  CHECK(demo.out.find("All checks passed.") != std::string::npos);
}

TEST_CASE("precompile prints a table, honours --module, and filters nothing else") {
  const ExampleCache& cache = example_cache();
  REQUIRE(cache.first.status == 0);
  Run r = run_kjit("precompile " + kDemoLibrary + " --arch sm_90 --module saxpy --module springs --cache-dir " + cache.dir);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("module   target  status") == 0);
  CHECK(r.out.find("saxpy    sm_90   cached") != std::string::npos);
  CHECK(r.out.find("springs  sm_90   cached") != std::string::npos);
  CHECK(r.out.find("\nloops ") == std::string::npos);  // no row of loops (the cache's path may hold the word)
  CHECK(r.out.find("2 builds: 0 compiled, 2 cached, 0 failed") != std::string::npos);
  CHECK(r.err.empty());  // not a terminal: no progress line
}

TEST_CASE("precompile shows a progress line on a terminal and erases it") {
  const ExampleCache& cache = example_cache();
  REQUIRE(cache.first.status == 0);
  // script(1) runs the tool on a pseudo-terminal.
  Run r = run("script -qec '" + kTool + " precompile " + kDemoLibrary + " --arch sm_90 --cache-dir " + cache.dir +
              "' /dev/null");
  REQUIRE(r.status == 0);
  CHECK(r.out.find("kjit: building [0/3]") != std::string::npos);
  CHECK(r.out.find("kjit: building [3/3]") != std::string::npos);
  CHECK(r.out.find("\r\033[K") != std::string::npos);
  CHECK(r.out.find("3 builds: 0 compiled, 3 cached") != std::string::npos);
}

TEST_CASE("a failed build is reported with its error, the others still build, and the exit status is 1") {
  TempDir dir("cli-failure");
  std::string cache = dir / "cache";
  Run r = run_kjit("precompile " + kTestLibrary + " --cpu --json --cache-dir " + cache);
  CHECK(r.status == 1);
  nlohmann::json j = r.json();
  CHECK(j["failed"] == 1);
  REQUIRE(j["modules"].size() == 2);
  CHECK(j["modules"][0]["name"] == "cli_broken");
  CHECK(j["modules"][0]["key"].is_null());  // it cannot be traced
  const auto& broken = j["modules"][0]["targets"][0];
  CHECK(broken["status"] == "failed");
  CHECK(broken["bytes"] == 0);
  std::string error = broken["error"].get<std::string>();
  CHECK(error.find("cli_broken::assign_in_branch") != std::string::npos);
  CHECK(error.find("cli_test_kernels.hpp:") != std::string::npos);
  CHECK(j["modules"][1]["name"] == "cli_ok");
  CHECK(j["modules"][1]["targets"][0]["status"] == "compiled");
  // The error is also on stderr for people.
  CHECK(r.err.find("kjit: error: module 'cli_broken' for cpu failed:") != std::string::npos);
  CHECK(r.err.find("cli_test_kernels.hpp:") != std::string::npos);

  // A compiler that rejects the module: its log is shown, and nothing is published.
  write_file(dir / "fakecc", "#!/bin/sh\n[ \"$1\" = --version ] && { echo fakecc 1.0; exit 0; }\n"
                             "echo 'fakecc: error: this compiler refuses everything' >&2\nexit 1\n");
  REQUIRE(run_command("chmod +x " + dir / "fakecc") == 0);
  Run bad = run_kjit("precompile " + kTestLibrary + " --cpu --module cli_ok --cache-dir " + cache, "KJIT_CXX=" + dir / "fakecc");
  CHECK(bad.status == 1);
  CHECK(bad.out.find("cli_ok  cpu     failed") != std::string::npos);
  CHECK(bad.err.find("fakecc: error: this compiler refuses everything") != std::string::npos);
  Run stats = run_kjit("cache stats --json --cache-dir " + cache);
  CHECK(stats.json()["entries"] == 1);  // cli_ok from the real compiler only
}

TEST_CASE("--no-adjoint builds other modules than the default, under their own key") {
  TempDir dir("cli-no-adjoint");
  Run with = run_kjit("precompile " + kTestLibrary + " --cpu --module cli_ok --json --cache-dir " + dir / "cache");
  Run without = run_kjit("precompile " + kTestLibrary + " --cpu --module cli_ok --no-adjoint --json --cache-dir " + dir / "cache");
  REQUIRE(with.status == 0);
  REQUIRE(without.status == 0);
  CHECK(without.json()["modules"][0]["targets"][0]["status"] == "compiled");
  CHECK(without.json()["modules"][0]["key"] != with.json()["modules"][0]["key"]);
  CHECK(run_kjit("cache stats --json --cache-dir " + dir / "cache").json()["entries"] == 2);
}

TEST_CASE("precompile builds a module whose kernels take a kjit::dsl::Mesh (its struct, the prelude's traversals)") {
  TempDir dir("cli-mesh");
  const std::string args = "precompile " + kStructTestLibrary + " --cpu --module geometry_mesh --json --cache-dir " +
                           dir / "cache";
  Run first = run_kjit(args);
  REQUIRE_MESSAGE(first.status == 0, first.err);
  check_precompile_json(first.json(), {"cpu"}, "compiled", {"geometry_mesh"});
  Run again = run_kjit(args);
  REQUIRE(again.status == 0);
  check_precompile_json(again.json(), {"cpu"}, "cached", {"geometry_mesh"});
  CHECK(again.json()["modules"][0]["key"] == first.json()["modules"][0]["key"]);
}

TEST_CASE("precompile refuses a cache folder it cannot write, saying why") {
  TempDir dir("cli-read-only");
  std::string cache = dir / "cache";
  REQUIRE(run_command("mkdir -m 0500 " + cache) == 0);
  Run r = run_kjit("precompile " + kTestLibrary + " --cpu --module cli_ok --cache-dir " + cache);
  CHECK(r.status == 1);
  CHECK(r.err.find("kjit: error: cannot precompile into " + cache + ": ") != std::string::npos);
  CHECK(r.out.empty());
}
