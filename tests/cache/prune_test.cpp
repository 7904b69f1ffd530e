// The size bound: sizes as people write them, least-recently-used pruning after a publish
// and on request, and the entry just published is never pruned.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "cache_fixtures.hpp"

using namespace kjit::compiler;

namespace {

void pause() { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }

uint64_t entry_bytes(Cache& cache, const std::string& module) {
  for (const CacheEntryInfo& e : cache.list())
    if (e.module == module) return e.bytes;
  FAIL("no entry for " << module);
  return 0;
}

std::vector<std::string> modules_in(Cache& cache) {
  std::vector<std::string> names;
  for (const CacheEntryInfo& e : cache.list()) names.push_back(e.module);
  return names;  // least recently used first
}

}  // namespace

TEST_CASE("sizes parse with units") {
  CHECK(parse_size("0") == 0);
  CHECK(parse_size("123") == 123);
  CHECK(parse_size("1K") == 1024);
  CHECK(parse_size("10kb") == 10240);
  CHECK(parse_size("500M") == 500ull << 20);
  CHECK(parse_size("2G") == 2ull << 30);
  CHECK(parse_size("2GiB") == 2ull << 30);
  CHECK(parse_size("1.5G") == 3ull << 29);
  CHECK(parse_size(" 3 M ") == 3ull << 20);
  CHECK(parse_size("1T") == 1ull << 40);
  for (const char* bad : {"", "abc", "1X", "1.2.3", "-5", "G", "1e3"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_size(bad), kjit::Error);
  }
  kjit::test::ScopedEnv env("KJIT_CACHE_MAX_SIZE", "500M");
  CHECK(CacheConfig::from_environment().max_size == 500ull << 20);
  kjit::test::ScopedEnv env2("KJIT_CACHE_MAX_SIZE", "lots");
  CHECK(CacheConfig::from_environment().max_size == kDefaultCacheMaxSize);  // warns, keeps the default
}

TEST_CASE("a publish over the bound evicts the least recently used entries") {
  kjit::test::TempDir dir("prune");
  kjit::test::WarningLog log;
  CacheConfig unbounded = kjit::test::cache_config(dir.path(), log);
  unbounded.max_size = 0;
  Cache filler(unbounded);
  ModuleSource a = kjit::test::tiny_module("lru_a", 1.0f), b = kjit::test::tiny_module("lru_b", 2.0f),
               c = kjit::test::tiny_module("lru_c", 3.0f);
  build_module(a, Target::ptx(90), CompileOptions{}, filler);
  pause();
  build_module(b, Target::ptx(90), CompileOptions{}, filler);
  pause();
  const uint64_t one = entry_bytes(filler, "lru_a");
  CHECK(one > 0);

  CacheConfig bounded = unbounded;
  bounded.max_size = one * 5 / 2;  // room for two entries, not three
  Cache cache(bounded);
  CHECK(build_module(a, Target::ptx(90), CompileOptions{}, cache).origin == ArtifactOrigin::Cached);  // a is now newer than b
  pause();
  build_module(c, Target::ptx(90), CompileOptions{}, cache);  // three entries: b must go
  CHECK(modules_in(cache) == std::vector<std::string>{"lru_a", "lru_c"});
  CHECK(cache.usage().bytes <= bounded.max_size);
  CHECK(cache.stats().evicted == 1);
  CHECK(log.count() == 0);
}

TEST_CASE("prune on request, and the entry just published survives any bound") {
  kjit::test::TempDir dir("prune2");
  kjit::test::WarningLog log;
  CacheConfig cfg = kjit::test::cache_config(dir.path(), log);
  cfg.max_size = 0;
  Cache cache(cfg);
  for (int i = 0; i < 4; ++i) {
    build_module(kjit::test::tiny_module("p" + std::to_string(i), float(i)), Target::ptx(90), CompileOptions{}, cache);
    pause();
  }
  const uint64_t newest_two = entry_bytes(cache, "p2") + entry_bytes(cache, "p3");
  CachePruneReport r = cache.prune(newest_two);
  CHECK(r.removed == 2);
  CHECK(r.bytes_left == newest_two);
  CHECK(r.entries_left == 2);
  CHECK(modules_in(cache) == std::vector<std::string>{"p2", "p3"});
  CHECK(cache.prune(0).entries_left == 0);

  CacheConfig tiny = cfg;
  tiny.max_size = 1;  // smaller than any entry
  Cache small(tiny);
  ModuleSource m = kjit::test::tiny_module("survivor", 6.0f);
  Artifact a = build_module(m, Target::host(), CompileOptions{}, small);
  CHECK(kjit::test::exists(a.library_path));
  CHECK(kjit::test::tiny_computes(a, "survivor", 6.0f));
  CHECK(modules_in(small) == std::vector<std::string>{"survivor"});
}
