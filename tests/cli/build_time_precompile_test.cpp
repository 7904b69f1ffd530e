// kjit_precompile(TARGET cli_test_kernels CPU MODULES cli_ok CACHE_DIR ...) in
// tests/cli/CMakeLists.txt filled a cache while the library built: its entry is there,
// verifies, and is what precompile and a program find.
#include <doctest/doctest.h>

#include "cli_fixtures.hpp"

using namespace kjit::test;
using namespace kjit::test::cli;

TEST_CASE("the cache kjit_precompile filled at build time holds the module, verified") {
  REQUIRE_MESSAGE(path_exists(kBuildTimeCache), "kjit_precompile did not create " << kBuildTimeCache);
  // A copy, so that this test never changes what the build made.
  TempDir dir("cli-build-time");
  copy_cache(kBuildTimeCache, dir / "cache");

  Run stats = run_kjit("cache stats --json --cache-dir " + dir / "cache");
  REQUIRE(stats.status == 0);
  nlohmann::json j = stats.json();
  // Earlier builds of kjit (another codegen version) may have left entries of their own.
  REQUIRE(j["list"].size() >= 1);
  for (const auto& e : j["list"]) {
    CHECK(e["module"] == "cli_ok");
    CHECK(e["target"] == "cpu");
  }

  Run verify = run_kjit("cache verify --cache-dir " + dir / "cache");
  CHECK(verify.status == 0);

  Run again = run_kjit("precompile " + kTestLibrary + " --cpu --module cli_ok --json --cache-dir " + dir / "cache");
  REQUIRE(again.status == 0);
  CHECK(again.json()["modules"][0]["targets"][0]["status"] == "cached");
}
