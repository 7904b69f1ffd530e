// Corrupt, truncated, incomplete or mismatched entries: each is detected on the next build,
// reported with one warning, rebuilt, and the rebuilt module computes right.
#include <doctest/doctest.h>

#include <unistd.h>

#include <functional>

#include "cache_fixtures.hpp"

using namespace kjit::compiler;

namespace {

struct Corruption {
  const char* what;
  const char* reason;  ///< a phrase the warning must contain
  std::function<void(const std::string& entry, const std::string& other_entry)> apply;
};

std::string cut(const std::string& s, size_t n) { return s.substr(0, std::min(n, s.size())); }

void flip_byte(const std::string& path) {
  std::string s = kjit::test::read_file(path);
  REQUIRE(s.size() > 100);
  s[s.size() / 2] = char(s[s.size() / 2] ^ 0x5a);
  kjit::test::write_file(path, s);
}

const std::vector<Corruption>& corruptions() {
  static const std::vector<Corruption> list = {
      {"truncated artifact", "truncated",
       [](const std::string& e, const std::string&) {
         std::string so = kjit::test::read_file(e + "/module.so");
         kjit::test::write_file(e + "/module.so", cut(so, so.size() / 2));
       }},
      {"flipped byte in the artifact", "SHA-256", [](const std::string& e, const std::string&) { flip_byte(e + "/module.so"); }},
      {"garbled meta.json", "not valid JSON",
       [](const std::string& e, const std::string&) { kjit::test::write_file(e + "/meta.json", "{\"format\": 1, \"key\": tru"); }},
      {"meta.json of another key", "another key",
       [](const std::string& e, const std::string& o) {
         kjit::test::write_file(e + "/meta.json", kjit::test::read_file(o + "/meta.json"));
       }},
      {"deleted source", "missing", [](const std::string& e, const std::string&) { ::unlink((e + "/source.cu").c_str()); }},
      {"deleted artifact", "missing", [](const std::string& e, const std::string&) { ::unlink((e + "/module.so").c_str()); }},
      {"deleted meta.json", "missing", [](const std::string& e, const std::string&) { ::unlink((e + "/meta.json").c_str()); }},
      {"another module's artifact", "another module",
       [](const std::string& e, const std::string& o) {
         kjit::test::write_file(e + "/module.so", kjit::test::read_file(o + "/module.so"));
       }},
      // What an older kjit whose code generation changed without a version bump leaves: a
      // valid entry under the same key whose artifact lacks an entry point the module has.
      {"meta.json with other entry points", "other entry points",
       [](const std::string& e, const std::string&) {
         nlohmann::json m = nlohmann::json::parse(kjit::test::read_file(e + "/meta.json"));
         m["entry_points"] = nlohmann::json::array({"kjit_an_older_entry_fwd"});
         kjit::test::write_file(e + "/meta.json", m.dump(1));
       }},
      {"empty entry folder", "missing",
       [](const std::string& e, const std::string&) {
         for (const char* f : {"/module.so", "/meta.json", "/source.cu"}) ::unlink((e + f).c_str());
       }},
  };
  return list;
}

}  // namespace

TEST_CASE("every kind of corrupt cpu entry is detected, warned about once, and rebuilt") {
  kjit::test::TempDir dir("corrupt");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  // Another module whose entry supplies "someone else's" files.
  ModuleSource other = kjit::test::tiny_module("corrupt_other", 9.0f);
  Artifact oa = build_module(other, Target::host(), CompileOptions{}, cache);
  const std::string other_entry = cache.entry_path(other.name, oa.key);
  for (const Corruption& c : corruptions()) {
    SUBCASE(c.what) {
      ModuleSource m = kjit::test::tiny_module("corrupt_me", 5.0f);
      Artifact a = build_module(m, Target::host(), CompileOptions{}, cache);
      const std::string entry = cache.entry_path(m.name, a.key);
      c.apply(entry, other_entry);
      log.clear();
      cache.reset_stats();

      Artifact rebuilt = build_module(m, Target::host(), CompileOptions{}, cache);
      CHECK(rebuilt.origin == ArtifactOrigin::Compiled);
      CHECK(kjit::test::tiny_computes(rebuilt, "corrupt_me", 5.0f));
      CHECK(log.count() == 1);
      CHECK(log.all().find(entry) != std::string::npos);
      CHECK(log.all().find(c.reason) != std::string::npos);
      CacheStats s = cache.stats();
      CHECK(s.bad_entries == 1);
      CHECK(s.compiles == 1);

      // The entry is whole again: the next build is a hit, and a full verify agrees.
      Artifact hit = build_module(m, Target::host(), CompileOptions{}, cache);
      CHECK(hit.origin == ArtifactOrigin::Cached);
      CHECK(kjit::test::tiny_computes(hit, "corrupt_me", 5.0f));
      CHECK(log.count() == 1);
      CacheVerifyReport v = cache.verify();
      CHECK(v.problems.empty());
      CHECK(v.valid == 2);  // (each subcase reruns the test case in a fresh folder)
    }
  }
}

TEST_CASE("a corrupt cubin is rebuilt into the same image") {
  kjit::test::TempDir dir("corrupt_gpu");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  ModuleSource m = kjit::test::saxpy_module("corrupt_gpu");
  Artifact a = build_module(m, Target::cubin(90), CompileOptions{}, cache);
  flip_byte(cache.entry_path(m.name, a.key) + "/module.cubin");
  Artifact b = build_module(m, Target::cubin(90), CompileOptions{}, cache);
  CHECK(b.origin == ArtifactOrigin::Compiled);
  CHECK(b.image == a.image);
  CHECK(log.count() == 1);
  CHECK(build_module(m, Target::cubin(90), CompileOptions{}, cache).origin == ArtifactOrigin::Cached);
}

TEST_CASE("verify reports and removes bad entries") {
  kjit::test::TempDir dir("verify");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  ModuleSource good = kjit::test::tiny_module("verify_good", 1.0f), bad = kjit::test::tiny_module("verify_bad", 2.0f);
  build_module(good, Target::ptx(90), CompileOptions{}, cache);
  Artifact b = build_module(bad, Target::ptx(90), CompileOptions{}, cache);
  const std::string bad_entry = cache.entry_path(bad.name, b.key);
  // A changed source passes the cheap check of a hit (its size is unchanged) but not verify.
  std::string src = kjit::test::read_file(bad_entry + "/source.cu");
  src[0] = src[0] == '/' ? '#' : '/';
  kjit::test::write_file(bad_entry + "/source.cu", src);

  CacheVerifyReport dry = cache.verify(/*remove_bad=*/false);
  CHECK(dry.checked == 2);
  CHECK(dry.valid == 1);
  REQUIRE(dry.problems.size() == 1);
  CHECK(dry.problems[0].path == bad_entry);
  CHECK_FALSE(dry.problems[0].removed);
  CHECK(kjit::test::exists(bad_entry));

  CacheVerifyReport fixed = cache.verify();
  REQUIRE(fixed.problems.size() == 1);
  CHECK(fixed.problems[0].removed);
  CHECK_FALSE(kjit::test::exists(bad_entry));
  CHECK(cache.verify().problems.empty());
  CHECK(cache.list().size() == 1);
}
