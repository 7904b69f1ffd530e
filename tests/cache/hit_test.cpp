// Hits: a second build loads the verified entry without running a compiler; the entry's
// layout, permissions and meta.json; listing and totals.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "cache_entry.hpp"
#include "cache_fixtures.hpp"
#include "kjit/compiler/key.hpp"
#include "sha256.hpp"

using namespace kjit::compiler;

namespace {

mode_t mode_of(const std::string& path) {
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("the second build of a module is a hit with no compiler run") {
  kjit::test::TempDir dir("hit");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  CHECK(cache.mode() == CacheMode::ReadWrite);
  ModuleSource m = kjit::test::tiny_module("hit_cpu", 3.0f);
  Artifact first = build_module(m, Target::host(), CompileOptions{}, cache);
  CHECK(first.origin == ArtifactOrigin::Compiled);
  CacheStats s = cache.stats();
  CHECK(s.misses == 1);
  CHECK(s.compiles == 1);
  CHECK(s.published == 1);
  CHECK(s.hits == 0);
  CHECK(s.compile_ms > 0);
  CHECK(s.bytes_written > 0);

  Artifact second = build_module(m, Target::host(), CompileOptions{}, cache);
  CHECK(second.origin == ArtifactOrigin::Cached);
  CHECK(second.compile_ms == 0);
  CHECK(second.library_path == first.library_path);
  CHECK(kjit::test::tiny_computes(second, "hit_cpu", 3.0f));
  s = cache.stats();
  CHECK(s.hits == 1);
  CHECK(s.compiles == 1);
  CHECK(s.bytes_loaded > 0);

  // Another Cache object on the folder (as another process would open it) hits too.
  Cache reopened(kjit::test::cache_config(dir.path(), log));
  CHECK(build_module(m, Target::host(), CompileOptions{}, reopened).origin == ArtifactOrigin::Cached);
  CHECK(reopened.stats().compiles == 0);

  // GPU artifacts: the image comes back byte for byte.
  ModuleSource g = kjit::test::saxpy_module("hit_gpu");
  Artifact c1 = build_module(g, Target::cubin(90), CompileOptions{}, cache);
  Artifact c2 = build_module(g, Target::cubin(90), CompileOptions{}, cache);
  CHECK(c2.origin == ArtifactOrigin::Cached);
  CHECK(c1.image == c2.image);
  CHECK(c2.meta["kernels"] == g.kernels);
  CHECK(log.count() == 0);

  cache.reset_stats();
  CHECK(cache.stats().hits == 0);
}

TEST_CASE("an entry is one owner-only folder with the source, the artifact and meta.json") {
  kjit::test::TempDir dir("layout");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  ModuleSource m = kjit::test::saxpy_module("demo::layout");
  CompileOptions o;
  o.fast_math = true;
  Artifact a = build_module(m, Target::cubin(90), o, cache);
  const std::string entry = cache.entry_path(m.name, a.key);
  CHECK(entry == cache.root() + "/demo_layout-" + a.key);
  CHECK(cache.root() == cache.dir() + "/v" + std::to_string(kCacheFormatVersion));
  CHECK(mode_of(cache.root()) == 0700);
  CHECK(mode_of(entry) == 0700);
  for (const char* f : {"source.cu", "module.cubin", "meta.json"}) CHECK(mode_of(entry + "/" + f) == 0600);

  nlohmann::json meta = nlohmann::json::parse(kjit::test::read_file(entry + "/meta.json"));
  std::string cubin = kjit::test::read_file(entry + "/module.cubin");
  CHECK(meta["format"] == kCacheFormatVersion);
  CHECK(meta["module"] == "demo::layout");
  CHECK(meta["key"] == a.key);
  CHECK(meta["target"] == "sm_90");
  CHECK(meta["kernels"] == m.kernels);
  CHECK(meta["entry_points"] == nlohmann::json(m.entry_points));
  CHECK(meta["options"]["fast_math"] == true);
  CHECK(meta["artifact"]["size"] == cubin.size());
  CHECK(meta["artifact"]["sha256"] == sha256_hex(cubin));
  CHECK(meta["source"]["sha256"] == sha256_hex(m.text));
  CHECK(kjit::test::read_file(entry + "/source.cu") == m.text);
  CHECK(meta["compile_ms"].get<double>() > 0);
  CHECK(meta["created"].get<std::string>().size() == 20);
  CHECK(meta["compiler"].get<std::string>().find("nvrtc") == 0);
  for (const std::string& e : m.entry_points) CHECK(meta["resources"][e]["registers"].get<int>() > 0);
  CHECK(a.meta == meta);
}

TEST_CASE("list and usage report the entries, least recently used first") {
  kjit::test::TempDir dir("list");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  ModuleSource a = kjit::test::tiny_module("list_a", 1.0f), b = kjit::test::tiny_module("list_b", 2.0f);
  build_module(a, Target::ptx(90), CompileOptions{}, cache);
  build_module(b, Target::ptx(90), CompileOptions{}, cache);
  build_module(b, Target::host(), CompileOptions{}, cache);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  build_module(a, Target::ptx(90), CompileOptions{}, cache);      // a hit: a is now the newest
  auto entries = cache.list();
  REQUIRE(entries.size() == 3);
  CHECK(entries.back().module == "list_a");
  CHECK(entries.back().target == "compute_90");
  for (const CacheEntryInfo& e : entries) {
    CHECK(e.bytes > 0);
    CHECK(e.key.size() == 64);
    CHECK(e.created > 0);
    CHECK(e.last_used >= e.created);
  }
  CacheUsage u = cache.usage();
  CHECK(u.entries == 3);
  CHECK(u.by_target["compute_90"] == 2);
  CHECK(u.by_target["cpu"] == 1);
  CHECK(u.bytes == entries[0].bytes + entries[1].bytes + entries[2].bytes);
  CHECK(u.compile_ms > 0);
}
