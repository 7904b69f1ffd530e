// Folder safety and degraded modes: names cannot escape the cache, folders and files other
// users could write are refused (kernels still build, in memory), read-only and uncreatable
// folders still work, and KJIT_NO_COMPILE=1 turns a miss into a clear error.
#include <doctest/doctest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_fixtures.hpp"

using namespace kjit::compiler;

namespace {

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    ::closedir(d);
  }
  return out;
}

std::string parent_of(const std::string& p) { return p.substr(0, p.find_last_of('/')); }

/// Builds a tiny cpu module through `cache` and checks that it runs.
void builds_and_runs(Cache& cache, const std::string& name, float value) {
  Artifact a = build_module(kjit::test::tiny_module(name, value), Target::host(), CompileOptions{}, cache);
  CHECK(kjit::test::tiny_computes(a, name, value));
}

}  // namespace

TEST_CASE("module names cannot escape the cache folder") {
  kjit::test::TempDir dir("names");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir / "cache", log));
  const std::string nasty[] = {"../../escape", "a/b/../../c", std::string("nul\0byte/..", 11), std::string(300, 'x'),
                               ".hidden", "..", "-rf", "", "/etc/passwd", "ünïcode name", "not utf-8 \xff\xfe"};
  for (const std::string& name : nasty) {
    CAPTURE(name);
    std::string s = sanitize_module_name(name);
    CHECK(s.find('/') == std::string::npos);
    CHECK(s.find('\0') == std::string::npos);
    CHECK(!s.empty());
    CHECK(s.size() <= 48);
    CHECK(s[0] != '.');
    CHECK(s[0] != '-');
    ModuleSource m = kjit::test::tiny_module("named", 1.0f);
    m.name = name;
    Artifact a = build_module(m, Target::ptx(90), CompileOptions{}, cache);
    std::string entry = cache.entry_path(name, a.key);
    CHECK(parent_of(entry) == cache.root());
    CHECK(kjit::test::exists(entry + "/meta.json"));
    CHECK(build_module(m, Target::ptx(90), CompileOptions{}, cache).origin == ArtifactOrigin::Cached);
  }
  CHECK(names_in(dir.path()) == std::vector<std::string>{"cache"});
  CHECK(names_in(dir / "cache") == std::vector<std::string>{"v1"});
  CHECK(cache.verify().problems.empty());
}

TEST_CASE("a cache folder writable by group or others is refused; kernels still build in memory") {
  for (mode_t mode : {mode_t(0777), mode_t(0770), mode_t(0757)}) {
    CAPTURE(mode);
    kjit::test::TempDir dir("unsafe");
    const std::string base = dir / "cache";
    REQUIRE(::mkdir(base.c_str(), 0700) == 0);
    REQUIRE(::chmod(base.c_str(), mode) == 0);
    kjit::test::WarningLog log;
    Cache cache(kjit::test::cache_config(base, log));
    CHECK(cache.mode() == CacheMode::InMemory);
    CHECK(log.count() == 1);
    CHECK(log.all().find("refusing") != std::string::npos);
    CHECK(log.all().find("writable by") != std::string::npos);
    CHECK(log.all().find("chmod go-w") != std::string::npos);
    Artifact a = build_module(kjit::test::tiny_module("unsafe_cpu", 2.0f), Target::host(), CompileOptions{}, cache);
    CHECK(a.library_path.rfind(base, 0) != 0);
    CHECK(kjit::test::tiny_computes(a, "unsafe_cpu", 2.0f));
    build_module(kjit::test::tiny_module("unsafe_gpu", 2.0f), Target::ptx(90), CompileOptions{}, cache);
    CHECK(names_in(base).empty());  // nothing was written there
    CHECK(log.count() == 1);
  }
}

TEST_CASE("an unsafe entry inside a safe cache is not loaded but rebuilt") {
  kjit::test::TempDir dir("unsafe_entry");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  ModuleSource m = kjit::test::tiny_module("unsafe_entry", 3.0f);
  Artifact a = build_module(m, Target::host(), CompileOptions{}, cache);
  const std::string entry = cache.entry_path(m.name, a.key);
  SUBCASE("group-writable artifact") { REQUIRE(::chmod((entry + "/module.so").c_str(), 0660) == 0); }
  SUBCASE("world-writable entry folder") { REQUIRE(::chmod(entry.c_str(), 0777) == 0); }
  SUBCASE("entry folder is a symlink") {
    REQUIRE(::rename(entry.c_str(), (dir / "elsewhere").c_str()) == 0);
    REQUIRE(::symlink((dir / "elsewhere").c_str(), entry.c_str()) == 0);
  }
  if (::geteuid() == 0) {
    SUBCASE("artifact owned by another user") { REQUIRE(::chown((entry + "/module.so").c_str(), 12345, 12345) == 0); }
  }
  Artifact b = build_module(m, Target::host(), CompileOptions{}, cache);
  CHECK(b.origin == ArtifactOrigin::Compiled);
  CHECK(kjit::test::tiny_computes(b, "unsafe_entry", 3.0f));
  CHECK(log.count() == 1);
  CHECK(build_module(m, Target::host(), CompileOptions{}, cache).origin == ArtifactOrigin::Cached);
}

TEST_CASE("a cache folder owned by another user is refused") {
  if (::geteuid() != 0) return;  // only root can give a folder away
  kjit::test::TempDir dir("owner");
  const std::string base = dir / "cache";
  REQUIRE(::mkdir(base.c_str(), 0700) == 0);
  REQUIRE(::chown(base.c_str(), 12345, 12345) == 0);
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(base, log));
  CHECK(cache.mode() == CacheMode::InMemory);
  CHECK(log.all().find("owned by another user") != std::string::npos);
  builds_and_runs(cache, "owner_cpu", 1.0f);
}

TEST_CASE("a read-only cache serves its hits and compiles the rest in memory") {
  kjit::test::TempDir dir("readonly");
  kjit::test::WarningLog log;
  const std::string base = dir / "cache";
  ModuleSource known = kjit::test::tiny_module("ro_known", 1.0f);
  {
    Cache writer(kjit::test::cache_config(base, log));
    build_module(known, Target::host(), CompileOptions{}, writer);
  }
  Cache probe(kjit::test::cache_config(base, log));
  REQUIRE(::chmod(probe.root().c_str(), 0500) == 0);
  REQUIRE(::chmod(base.c_str(), 0500) == 0);
  Cache cache(kjit::test::cache_config(base, log));
  CHECK(cache.mode() == CacheMode::ReadOnly);
  CHECK(log.count() == 0);  // a read-only cache of hits is fine: no warning yet
  Artifact hit = build_module(known, Target::host(), CompileOptions{}, cache);
  CHECK(hit.origin == ArtifactOrigin::Cached);
  CHECK(kjit::test::tiny_computes(hit, "ro_known", 1.0f));
  builds_and_runs(cache, "ro_new", 2.0f);
  builds_and_runs(cache, "ro_new2", 3.0f);
  build_module(kjit::test::tiny_module("ro_gpu", 3.0f), Target::ptx(90), CompileOptions{}, cache);
  CHECK(log.count() == 1);  // once
  CHECK(log.all().find("read-only") != std::string::npos);
  CHECK(cache.list().size() == 1);
  CHECK(cache.stats().published == 0);
  ::chmod(base.c_str(), 0700);
  ::chmod(probe.root().c_str(), 0700);
}

TEST_CASE("a cache folder that cannot be created degrades to memory") {
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config("/proc/kjit-cannot-exist/cache", log));
  CHECK(cache.mode() == CacheMode::InMemory);
  CHECK(log.all().find("cannot be created") != std::string::npos);
  builds_and_runs(cache, "uncreatable", 4.0f);

  CacheConfig off;
  off.in_memory = true;
  Cache disabled(off);
  CHECK(disabled.mode() == CacheMode::InMemory);
  Artifact a = build_module(kjit::test::tiny_module("memfd", 5.0f), Target::host(), CompileOptions{}, disabled);
  CHECK(a.library_path.rfind("/proc/self/fd/", 0) == 0);  // an anonymous memory file
  CHECK(kjit::test::tiny_computes(a, "memfd", 5.0f));
}

TEST_CASE("KJIT_NO_COMPILE=1 turns a miss into an error that says what to do") {
  kjit::test::TempDir dir("nocompile");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  ModuleSource known = kjit::test::tiny_module("nc_known", 1.0f);
  build_module(known, Target::ptx(90), CompileOptions{}, cache);
  kjit::test::ScopedEnv env("KJIT_NO_COMPILE", "1");
  cache.reset_stats();
  CHECK(build_module(known, Target::ptx(90), CompileOptions{}, cache).origin == ArtifactOrigin::Cached);
  try {
    build_module(kjit::test::tiny_module("nc_missing", 2.0f), Target::cubin(80), CompileOptions{}, cache);
    FAIL("expected an error");
  } catch (const kjit::Error& e) {
    CHECK(e.kind() == kjit::ErrorKind::User);
    std::string msg = e.what();
    CHECK(msg.find("'nc_missing'") != std::string::npos);
    CHECK(msg.find("sm_80") != std::string::npos);
    CHECK(msg.find("kjit precompile") != std::string::npos);
    CHECK(msg.find("--arch sm_80") != std::string::npos);
    CHECK(msg.find("KJIT_NO_COMPILE") != std::string::npos);
    CHECK(msg.find(cache.root()) != std::string::npos);
  }
  CHECK(cache.stats().compiles == 0);
  CHECK(cache.stats().misses == 1);
}
