// Concurrency: many threads and many processes building the same modules on one cache
// folder all succeed, leave exactly one valid entry per key, and (with lock files) compile
// each module once.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "cache_fixtures.hpp"

using namespace kjit::compiler;

namespace {

/// Builds modules stress0..3 from `threads` threads at once; returns how many results were wrong.
int hammer(Cache& cache, int threads) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) {
        int m = (i + t) % 4;  // threads start on different modules, then collide
        std::string name = "stress" + std::to_string(m);
        try {
          Artifact a = build_module(kjit::test::tiny_module(name, float(m + 1)), Target::host(),
                                    CompileOptions{}, cache);
          if (!kjit::test::tiny_computes(a, name, float(m + 1))) ++wrong;
        } catch (const std::exception&) {
          ++wrong;
        }
      }
    });
  for (std::thread& t : pool) t.join();
  return wrong;
}

void check_folder(Cache& cache, size_t entries) {
  CacheVerifyReport v = cache.verify(false);
  CHECK(v.problems.empty());
  CHECK(v.valid == entries);
  CHECK(cache.usage().temporaries == 0);  // no staging, trash or lock file left behind
}

}  // namespace

TEST_CASE("8 threads building the same modules: all correct, one compile and one entry per key") {
  kjit::test::TempDir dir("threads");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  CHECK(hammer(cache, 8) == 0);
  CHECK(cache.stats().compiles == 4);  // the lock files deduplicate
  CHECK(cache.stats().hits == 28);
  check_folder(cache, 4);
  CHECK(log.count() == 0);

  kjit::test::TempDir dir2("threads_nolock");
  CacheConfig cfg = kjit::test::cache_config(dir2.path(), log);
  cfg.lock_files = false;
  Cache racy(cfg);
  CHECK(hammer(racy, 8) == 0);
  CHECK(racy.stats().compiles >= 4);
  check_folder(racy, 4);
  CHECK(log.count() == 0);
}

TEST_CASE("8 processes x 4 modules on one folder, repeated: every process correct, every entry valid") {
  kjit::test::TempDir dir("procs");
  kjit::test::WarningLog log;
  const std::string cache_dir = dir / "cache";
  // Round 1 and 2 with lock files (cold, then all hits), round 3 cold again without them.
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    if (round == 2) Cache(kjit::test::cache_config(cache_dir, log)).clear();
    std::string script = std::string(round == 2 ? "export KJIT_CACHE_LOCKS=0; " : "") + "for i in 1 2 3 4 5 6 7 8; do (" +
                         kjit::test::worker_path() + " build '" + cache_dir + "' 2 4 > '" + dir.path() +
                         "/out.'$i 2>&1 || echo \"worker $i failed: $(cat '" + dir.path() + "/out.'$i)\") & done; wait";
    std::string out;
    CHECK(kjit::test::run_command(script, &out) == 0);
    CHECK_MESSAGE(out.find("failed") == std::string::npos, out);
    Cache cache(kjit::test::cache_config(cache_dir, log));
    check_folder(cache, 4);
    // Every worker saw correct results; with lock files the 4 modules were compiled once each.
    size_t compiles = 0;
    for (int i = 1; i <= 8; ++i) {
      std::string o = kjit::test::read_file(dir / ("out." + std::to_string(i)));
      REQUIRE_MESSAGE(o.find("compiles ") != std::string::npos, o);
      compiles += std::stoul(o.substr(o.find("compiles ") + 9));
      CHECK(o.find("warning") == std::string::npos);
    }
    if (round == 0) CHECK(compiles == 4);
    if (round == 1) CHECK(compiles == 0);
    if (round == 2) CHECK(compiles >= 4);
  }
  CHECK(log.count() == 0);
}
