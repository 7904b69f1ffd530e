// A helper process for the cache tests: prints module keys (to compare keys across
// processes), and builds modules on a shared cache folder (the multi-process stress test).
//   kjit_cache_worker key <target>
//   kjit_cache_worker build <cache dir> <rounds> <modules>
// `build` builds the cpu modules stress0..stress<modules-1> and runs each; exits 0 when
// every build succeeded and computed the right values.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kjit/compiler/build.hpp"
#include "kjit/compiler/cache.hpp"
#include "module_fixtures.hpp"

using namespace kjit::compiler;

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "key" && argc == 3) {
      Target t = Target::parse(argv[2]);
      std::printf("%s\n", module_key(kjit::test::tiny_module("keyed", 2.0f), t, CompileOptions{}).c_str());
      std::printf("%s\n", module_key(kjit::test::saxpy_module(), t, CompileOptions{}).c_str());
      return 0;
    }
    if (cmd == "build" && argc == 5) {
      CacheConfig cfg = CacheConfig::from_environment();  // KJIT_CACHE_LOCKS=0 turns locks off
      cfg.dir = argv[2];
      Cache cache(cfg);
      int rounds = std::atoi(argv[3]), modules = std::atoi(argv[4]);
      for (int r = 0; r < rounds; ++r)
        for (int m = 0; m < modules; ++m) {
          std::string name = "stress" + std::to_string(m);
          Artifact a = build_module(kjit::test::tiny_module(name, float(m + 1)), Target::host(), CompileOptions{}, cache);
          if (!kjit::test::tiny_computes(a, name, float(m + 1))) {
            std::fprintf(stderr, "wrong result from %s (%s)\n", name.c_str(), a.library_path.c_str());
            return 1;
          }
        }
      CacheStats s = cache.stats();
      std::printf("hits %llu compiles %llu\n", (unsigned long long)s.hits, (unsigned long long)s.compiles);
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s key <target> | build <dir> <rounds> <modules>\n", argv[0]);
  return 2;
}
