// kjit::build_modules_for (kjit/runtime/modules.hpp), the parallel build `kjit precompile` runs:
// per-request results in request order, failures that do not stop the others, progress calls.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <optional>
#include <set>

#include "cli_fixtures.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/error.hpp"
#include "kjit/runtime/compile_input.hpp"
#include "kjit/runtime/modules.hpp"

using namespace kjit;
using namespace kjit::test;

TEST_CASE("build_modules_for builds, reports each request, and serves repeats from the cache") {
  // The library's kernels register in this process when it loads.
  REQUIRE(::dlopen(cli::kTestLibrary.c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr);
  TempDir dir("cli-build-modules");
  compiler::CacheConfig config;
  config.dir = dir / "cache";
  compiler::Cache cache(config);

  ModuleOptions forward_only;
  forward_only.enable_adjoint = false;
  std::vector<ModuleBuildRequest> requests = {
      {"cli_ok", "cpu", std::nullopt},
      {"cli_ok", "sm_13", std::nullopt},
      {"no_such_module", "cpu", std::nullopt},
      {"cli_broken", "cpu", std::nullopt},
      {"cli_ok", "cpu", forward_only},
  };
  std::vector<size_t> reported;
  std::vector<ModuleBuildResult> results =
      build_modules_for(requests, cache, 2, [&](size_t i, const ModuleBuildResult&) { reported.push_back(i); });

  REQUIRE(results.size() == 5);
  CHECK(std::set<size_t>(reported.begin(), reported.end()) == std::set<size_t>{0, 1, 2, 3, 4});
  CHECK(reported.size() == 5);

  CHECK(results[0].ok);
  CHECK(results[0].build.module == "cli_ok");
  CHECK(results[0].build.target == "cpu");
  CHECK(!results[0].build.from_cache);
  CHECK(results[0].build.key.size() == 64);
  CHECK(results[0].build.bytes > 1000);  // the shared object's size, from meta.json
  CHECK(results[0].build.milliseconds > 0);

  CHECK(!results[1].ok);
  CHECK(results[1].build.target == "sm_13");
  CHECK(results[1].error.find("invalid compilation target 'sm_13'") != std::string::npos);
  CHECK(!results[2].ok);
  CHECK(results[2].error.find("no module named 'no_such_module'") != std::string::npos);
  CHECK(!results[3].ok);
  CHECK(results[3].build.key.empty());  // it never traced
  CHECK(results[3].error.find("cli_test_kernels.hpp:") != std::string::npos);

  CHECK(results[4].ok);  // other options: another key, its own entry
  CHECK(results[4].build.key != results[0].build.key);

  std::vector<ModuleBuildResult> again = build_modules_for({requests[0]}, cache);
  REQUIRE(again.size() == 1);
  CHECK(again[0].ok);
  CHECK(again[0].build.from_cache);
  CHECK(again[0].build.key == results[0].build.key);
  CHECK(again[0].build.bytes == results[0].build.bytes);

  // module_compile_input: the identity without generating text; the text on demand.
  ModuleCompileInput in = module_compile_input("cli_ok");
  CHECK(!in.source.identity.empty());
  CHECK(in.source.text.empty());
  CHECK(in.source.source_text().find("kjit_cli_ok__scale_fwd") != std::string::npos);
  CHECK_THROWS_WITH_AS(module_compile_input("no_such_module"), doctest::Contains("no module named"), Error);
}
