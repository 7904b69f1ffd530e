// Keys do not depend on where the sources are: the same kernel library built from a copy of
// its sources at another path (another checkout, another machine) finds the first build's
// cache entries. And `--jobs N` runs N builds at once.
#include <doctest/doctest.h>

#include "cli_fixtures.hpp"

using namespace kjit::test;
using namespace kjit::test::cli;

TEST_CASE("a library built from another checkout has the same keys and hits the same cache") {
  REQUIRE(kMovedTestLibrary != kTestLibrary);
  TempDir dir("kjit-checkouts");
  const std::string args = " --module cli_ok --arch sm_80 --json --cache-dir " + (dir / "cache");
  Run first = run_kjit("precompile " + kTestLibrary + args);
  INFO(first.err);
  REQUIRE(first.status == 0);
  Run moved = run_kjit("precompile " + kMovedTestLibrary + args);
  INFO(moved.err);
  REQUIRE(moved.status == 0);
  const nlohmann::json a = first.json().at("modules").at(0), b = moved.json().at("modules").at(0);
  CHECK(a.at("name") == "cli_ok");
  CHECK(a.at("key") == b.at("key"));
  CHECK(a.at("targets").at(0).at("status") == "compiled");
  CHECK(b.at("targets").at(0).at("status") == "cached");
  // The generated text names the header relative to the checkout, in both builds.
  for (const std::string& lib : {kTestLibrary, kMovedTestLibrary}) {
    Run s = run_kjit("source " + lib + " cli_ok::scale --target sm_80");
    INFO(lib);
    REQUIRE(s.status == 0);
    CHECK(s.out.find("\"tests/cli/cli_test_kernels.hpp\"") != std::string::npos);
    CHECK(s.out.find("other-checkout") == std::string::npos);
  }
}

TEST_CASE("precompile --jobs N runs N builds at once and builds every target") {
  TempDir dir("kjit-jobs");
  for (unsigned jobs : {1u, 2u}) {
    const std::string cache = dir / ("cache" + std::to_string(jobs));
    Run r = run_kjit("precompile " + kTestLibrary + " --module cli_ok --arch sm_80,sm_90 --jobs " +
                     std::to_string(jobs) + " --cache-dir " + cache);
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find(jobs == 1 ? "(1 job)" : "(2 jobs)") != std::string::npos);
    CHECK(r.out.find("2 compiled, 0 cached, 0 failed") != std::string::npos);
  }
  Run bad = run_kjit("precompile " + kTestLibrary + " --module cli_ok --arch sm_80 --jobs=-1 --cache-dir " +
                     (dir / "bad"));
  CHECK(bad.status != 0);
  CHECK(bad.err.find("jobs") != std::string::npos);
  CHECK_FALSE(path_exists(dir / "bad"));
}
