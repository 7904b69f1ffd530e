// `kjit cache`: stats, verify finding and removing a corrupted entry, prune obeying its bound,
// clear asking for confirmation; on copies of the shared example cache.
#include <doctest/doctest.h>

#include <map>

#include "cli_fixtures.hpp"

using namespace kjit::test;
using namespace kjit::test::cli;

namespace {

/// A private copy of the example cache (sm_80 and sm_90 of three modules: six entries).
std::string copied_example_cache(const TempDir& dir, const std::string& name = "cache") {
  const ExampleCache& cache = example_cache();
  REQUIRE(cache.first.status == 0);
  copy_cache(cache.dir, dir / name);
  return dir / name;
}

nlohmann::json stats(const std::string& cache) {
  Run r = run_kjit("cache stats --json --cache-dir " + cache);
  REQUIRE(r.status == 0);
  return r.json();
}

}  // namespace

TEST_CASE("cache stats reports what the folder holds") {
  TempDir dir("cli-cache-stats");
  std::string cache = copied_example_cache(dir);
  Run r = run_kjit("cache stats --entries --cache-dir " + cache);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("cache folder  " + cache + " (read-write)") != std::string::npos);
  CHECK(r.out.find("entries       6, ") != std::string::npos);
  CHECK(r.out.find("by target     sm_80 3, sm_90 3") != std::string::npos);
  CHECK(r.out.find("saxpy    sm_90") != std::string::npos);

  nlohmann::json j = stats(cache);
  CHECK(j["dir"] == cache);
  CHECK(j["list"].size() == 6);
  uint64_t sum = 0;
  for (const auto& e : j["list"]) sum += e["bytes"].get<uint64_t>();
  CHECK(j["bytes"] == sum);

  // A folder that does not exist is reported, not created.
  Run none = run_kjit("cache stats --cache-dir " + dir / "nothing");
  CHECK(none.status == 0);
  CHECK(none.out.find("no cache at " + dir / "nothing") != std::string::npos);
  CHECK(!path_exists(dir / "nothing"));
}

TEST_CASE("cache verify finds a corrupted entry, removes it, and a rebuild replaces it") {
  TempDir dir("cli-cache-verify");
  std::string cache = copied_example_cache(dir);
  nlohmann::json before = stats(cache);
  std::string victim;
  for (const auto& e : before["list"])
    if (e["module"] == "saxpy" && e["target"] == "sm_90") victim = e["path"];
  REQUIRE(!victim.empty());
  // Flip one byte in the middle of the cubin: same size, another SHA-256.
  REQUIRE(run_command("printf 'X' | dd of=" + victim + "/module.cubin bs=1 seek=200 conv=notrunc 2>/dev/null") == 0);

  Run r = run_kjit("cache verify --cache-dir " + cache);
  CHECK(r.status == 1);
  CHECK(r.out.find("checked 6 entries in " + cache + ": 5 valid, 0 stale (another kjit version), 1 bad (edited or "
                   "corrupt)") != std::string::npos);
  CHECK(r.out.find("removed bad " + victim + ": ") != std::string::npos);
  CHECK(r.out.find("SHA-256") != std::string::npos);
  CHECK(!path_exists(victim));

  Run again = run_kjit("cache verify --json --cache-dir " + cache);
  CHECK(again.status == 0);
  CHECK(again.json()["checked"] == 5);
  CHECK(again.json()["problems"].empty());

  // precompile rebuilds exactly the removed one.
  Run rebuild = run_kjit("precompile " + kDemoLibrary + " --arch sm_90 --module saxpy --json --cache-dir " + cache);
  REQUIRE(rebuild.status == 0);
  CHECK(rebuild.json()["modules"][0]["targets"][0]["status"] == "compiled");
  CHECK(path_exists(victim + "/module.cubin"));
}

TEST_CASE("cache verify reports kernel descriptions that were edited: entry points swapped, a field mistyped") {
  TempDir dir("cli-cache-descriptions");
  std::string cache = copied_example_cache(dir);
  std::vector<std::string> victims;
  const nlohmann::json listed = stats(cache);
  for (const auto& e : listed["list"])
    if (e["module"] == "springs") victims.push_back(e["path"]);
  REQUIRE(victims.size() == 2);
  // One: forward and adjoint swapped in a kernel's description (what a hit would have loaded
  // as each other before); the other: a mistyped kernels field.
  nlohmann::json a = nlohmann::json::parse(read_file(victims[0] + "/meta.json"));
  std::swap(a["kernels"][0]["forward"], a["kernels"][0]["adjoint"]);
  write_file(victims[0] + "/meta.json", a.dump(1));
  nlohmann::json b = nlohmann::json::parse(read_file(victims[1] + "/meta.json"));
  b["kernels"] = "springs";
  write_file(victims[1] + "/meta.json", b.dump(1));

  Run r = run_kjit("cache verify --json --cache-dir " + cache);
  CHECK(r.status == 1);
  nlohmann::json j = r.json();
  CHECK(j["checked"] == 6);
  REQUIRE(j["problems"].size() == 2);
  std::string reasons = j["problems"][0]["reason"].get<std::string>() + "\n" + j["problems"][1]["reason"].get<std::string>();
  INFO(reasons);
  CHECK(reasons.find("'kernels' is not an array") != std::string::npos);
  CHECK(reasons.find("do not match their recorded SHA-256") != std::string::npos);
  CHECK(!path_exists(victims[0]));
  CHECK(!path_exists(victims[1]));
}

TEST_CASE("cache verify tells an older kjit's entries (no kernels_sha256) from edited ones, and says so") {
  TempDir dir("cli-cache-older");
  std::string cache = copied_example_cache(dir);
  std::map<std::string, std::string> by_module;
  const nlohmann::json listed = stats(cache);
  for (const auto& e : listed["list"])
    if (e["target"] == "sm_90") by_module[e["module"].get<std::string>()] = e["path"];
  REQUIRE(by_module.size() == 3);
  std::string older = by_module["saxpy"], older_shape = by_module["springs"], edited = by_module["loops"];
  // An older kjit wrote no kernels_sha256; one of them also described its kernels in an older
  // shape (a field missing): still stale, not an edit.
  nlohmann::json a = nlohmann::json::parse(read_file(older + "/meta.json"));
  a.erase("kernels_sha256");
  write_file(older + "/meta.json", a.dump(1));
  nlohmann::json b = nlohmann::json::parse(read_file(older_shape + "/meta.json"));
  b.erase("kernels_sha256");
  b["kernels"][0].erase("params");
  write_file(older_shape + "/meta.json", b.dump(1));
  nlohmann::json c = nlohmann::json::parse(read_file(edited + "/meta.json"));
  c["kernels"][0]["params"][0]["type"] = "int8";
  write_file(edited + "/meta.json", c.dump(1));

  Run r = run_kjit("cache verify --cache-dir " + cache);
  CHECK(r.status == 1);  // an edited entry is damage
  CHECK(r.out.find(": 3 valid, 2 stale (another kjit version), 1 bad (edited or corrupt)") != std::string::npos);
  INFO(r.out);
  CHECK(r.out.find("removed stale " + older + ": " + older +
                   "/meta.json lacks 'kernels_sha256' (written by an older kjit") != std::string::npos);
  CHECK(r.out.find("removed stale " + older_shape + ": " + older_shape + "/meta.json lacks 'kernels_sha256'") !=
        std::string::npos);
  CHECK(r.out.find("removed bad " + edited + ": " + edited +
                   "/meta.json has kernel descriptions that do not match their recorded SHA-256 (edited)") !=
        std::string::npos);
  for (const std::string& p : {older, older_shape, edited}) CHECK(!path_exists(p));

  // Only stale entries: removed, reported, and the exit status is 0 (nothing is damaged).
  std::string cache2 = copied_example_cache(dir, "second");
  std::string path2;
  const nlohmann::json listed2 = stats(cache2);
  for (const auto& e : listed2["list"])
    if (e["module"] == "saxpy" && e["target"] == "sm_90") path2 = e["path"];
  REQUIRE(!path2.empty());
  nlohmann::json d = nlohmann::json::parse(read_file(path2 + "/meta.json"));
  d.erase("kernels_sha256");
  write_file(path2 + "/meta.json", d.dump(1));
  Run j = run_kjit("cache verify --json --cache-dir " + cache2);
  CHECK(j.status == 0);
  CHECK(j.json()["stale"] == 1);
  CHECK(j.json()["bad"] == 0);
  REQUIRE(j.json()["problems"].size() == 1);
  CHECK(j.json()["problems"][0]["kind"] == "stale");
  CHECK(j.json()["problems"][0]["removed"] == true);
  CHECK(!path_exists(path2));
}

TEST_CASE("cache prune --max-size leaves at most that many bytes, least recently used out first") {
  TempDir dir("cli-cache-prune");
  std::string cache = copied_example_cache(dir);
  nlohmann::json before = stats(cache);
  uint64_t total = before["bytes"];
  uint64_t bound = total / 2;

  Run r = run_kjit("cache prune --max-size " + std::to_string(bound) + " --json --cache-dir " + cache);
  REQUIRE(r.status == 0);
  nlohmann::json p = r.json();
  CHECK(p["max_size"] == bound);
  CHECK(p["removed"].get<int>() > 0);
  nlohmann::json after = stats(cache);
  CHECK(after["bytes"].get<uint64_t>() <= bound);
  CHECK(after["bytes"] == p["bytes_left"]);
  CHECK(after["entries"] == p["entries_left"]);
  CHECK(after["entries"].get<int>() + p["removed"].get<int>() == 6);
  // The entries kept are the most recently used ones: the last of the list before.
  size_t kept = after["entries"];
  for (size_t i = 0; i < kept; ++i)
    CHECK(after["list"][i]["key"] == before["list"][before["list"].size() - kept + i]["key"]);

  Run human = run_kjit("cache prune --max-size 1K --cache-dir " + cache);
  CHECK(human.status == 0);
  CHECK(human.out.find("pruned " + cache + " to 1.0 KiB: removed ") != std::string::npos);
  CHECK(stats(cache)["entries"] == 0);

  Run bad = run_kjit("cache prune --max-size 12Q --cache-dir " + cache);
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--max-size: invalid size '12Q'") != std::string::npos);
}

TEST_CASE("cache clear asks for --yes when nobody can answer, then empties the folder") {
  TempDir dir("cli-cache-clear");
  std::string cache = copied_example_cache(dir);
  Run refused = run(kTool + " cache clear --cache-dir " + cache + " </dev/null");
  CHECK(refused.status == 2);
  CHECK(refused.err.find("add --yes to confirm") != std::string::npos);
  CHECK(stats(cache)["entries"] == 6);

  Run r = run_kjit("cache clear --yes --cache-dir " + cache);
  CHECK(r.status == 0);
  CHECK(r.out.find("removed 6 entries") != std::string::npos);
  CHECK(stats(cache)["entries"] == 0);
}
