// Parallel builds: several modules for several targets on a thread pool, results in request
// order, one compile per distinct key, failures isolated.
#include <doctest/doctest.h>

#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "module_fixtures.hpp"
#include "test_support.hpp"

using namespace kjit::compiler;

TEST_CASE("build_modules builds modules x targets in parallel, in request order") {
  kjit::test::TempDir dir("par");
  CacheConfig cfg;
  cfg.dir = dir.path();
  Cache cache(cfg);
  std::vector<ModuleSource> mods;
  for (int i = 0; i < 3; ++i) mods.push_back(kjit::test::tiny_module("par" + std::to_string(i), float(i)));
  // A module whose text is produced lazily: build_modules generates it once, up front.
  ModuleSource lazy = kjit::test::tiny_module("par_lazy", 7.0f);
  std::string lazy_text = lazy.text;
  lazy.text.clear();
  int generated = 0;
  lazy.generate = [&] {
    ++generated;
    return lazy_text;
  };
  lazy.identity = "lazy identity of par_lazy";
  ModuleSource broken = kjit::test::tiny_module("par_broken", 1.0f);
  broken.text += "this is not C++;\n";

  std::vector<BuildRequest> reqs;
  for (const ModuleSource& m : mods)
    for (Target t : {Target::ptx(90), Target::host()}) reqs.push_back({&m, t, CompileOptions{}});
  reqs.push_back({&lazy, Target::ptx(90), CompileOptions{}});
  reqs.push_back({&lazy, Target::host(), CompileOptions{}});
  reqs.push_back({&broken, Target::host(), CompileOptions{}});
  reqs.push_back({&mods[0], Target::ptx(90), CompileOptions{}});  // a duplicate request

  auto results = build_modules(reqs, cache, 2);
  REQUIRE(results.size() == reqs.size());
  for (size_t i = 0; i + 2 < reqs.size(); ++i) {
    CAPTURE(i);
    REQUIRE_MESSAGE(results[i].ok, results[i].error);
    CHECK(results[i].artifact.target == reqs[i].target);
    CHECK(results[i].artifact.module_name == reqs[i].source->name);
    if (reqs[i].target == Target::host())
      CHECK(kjit::test::tiny_computes(results[i].artifact, reqs[i].source->name,
                                      reqs[i].source == &lazy ? 7.0f : float(i / 2)));
  }
  CHECK_FALSE(results[reqs.size() - 2].ok);
  CHECK(results[reqs.size() - 2].error.find("par_broken") != std::string::npos);
  REQUIRE(results.back().ok);
  CHECK(results.back().artifact.key == results[0].artifact.key);
  CHECK(generated == 1);
  CHECK(cache.stats().compiles == 9);  // 8 distinct (module, target) pairs + the broken one

  // Everything is now cached: the same requests are all hits.
  cache.reset_stats();
  auto again = build_modules(reqs, cache, 2);
  for (size_t i = 0; i + 2 < reqs.size(); ++i) CHECK(again[i].artifact.origin == ArtifactOrigin::Cached);
  CHECK(cache.stats().compiles == 1);  // only the broken module, which never gets an entry
}
