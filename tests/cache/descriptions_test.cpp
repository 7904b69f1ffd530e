// meta.json's kernel descriptions: missing, mistyped or edited ones (entry points swapped,
// parameters changed) are misses that are warned about and rebuilt, and verify reports them.
#include <doctest/doctest.h>

#include <functional>

#include "cache_fixtures.hpp"
#include "sha256.hpp"

using namespace kjit::compiler;

namespace {

struct Edit {
  const char* what;
  const char* reason;   ///< a phrase the warning must contain
  bool verify_sees;     ///< whether verify (which knows no module) reports it too
  bool rehash;          ///< the edit also fixes kernels_sha256, as a careful editor would
  std::function<void(nlohmann::json& meta)> apply;
};

void swap_fields(nlohmann::json& k, const char* a, const char* b) { std::swap(k[a], k[b]); }

const std::vector<Edit>& edits() {
  static const std::vector<Edit> list = {
      {"kernels missing", "lacks 'kernels'", true, false, [](nlohmann::json& m) { m.erase("kernels"); }},
      {"kernels not an array", "'kernels' is not an array", true, true,
       [](nlohmann::json& m) { m["kernels"] = {{"name", "kjit_fixture::saxpy"}}; }},
      {"a kernel that is not an object", "kernel 1 is not an object", true, true,
       [](nlohmann::json& m) { m["kernels"][0] = 7; }},
      {"forward name mistyped", "has a 'forward' that is not a non-empty string", true, true,
       [](nlohmann::json& m) { m["kernels"][0]["forward"] = 42; }},
      {"params mistyped", "has a 'params' that is not an array", true, true,
       [](nlohmann::json& m) { m["kernels"][0]["params"] = "x, y"; }},
      {"a parameter without a type", "parameter 1 lacks 'type'", true, true,
       [](nlohmann::json& m) { m["kernels"][0]["params"][0].erase("type"); }},
      {"forward and adjoint swapped", "entry points are not the entry points it records", true, true,
       [](nlohmann::json& m) { swap_fields(m["kernels"][0], "forward", "adjoint"); }},
      {"forward and adjoint swapped everywhere", "records other entry points than the module has", false, true,
       [](nlohmann::json& m) {
         swap_fields(m["kernels"][0], "forward", "adjoint");
         std::swap(m["entry_points"][0], m["entry_points"][1]);
       }},
      {"a parameter's type changed", "'params' otherwise than its code generator does", false, true,
       [](nlohmann::json& m) { m["kernels"][0]["params"][2]["type"] = "float64"; }},
      {"a parameter's type changed, hash not updated", "do not match their recorded SHA-256", true, false,
       [](nlohmann::json& m) { m["kernels"][0]["params"][2]["type"] = "float64"; }},
      {"descriptions not hashed (an older kjit)", "lacks 'kernels_sha256' (written by an older kjit", true, false,
       [](nlohmann::json& m) { m.erase("kernels_sha256"); }},
      {"a parameter removed", "'params' otherwise than its code generator does", false, true,
       [](nlohmann::json& m) {
         m["kernels"][0]["params"].erase(0);
         m["kernels"][0].erase("own_adds");  // its adjoint parameters would name others now
       }},
      {"an own-element add dropped", "'own_adds' otherwise than its code generator does", false, true,
       [](nlohmann::json& m) { m["kernels"][0]["own_adds"].erase(0); }},
      {"an own-element add on a value", "'own_adds' entry for parameter 6, which is not an array", true, true,
       [](nlohmann::json& m) { m["kernels"][0]["own_adds"][0] = 6; }},  // saxpy(x, y, a, out): a's adjoint
      {"checks turned off", "'checks' otherwise", false, true,
       [](nlohmann::json& m) { m["kernels"][0]["checks"] = !m["kernels"][0]["checks"].get<bool>(); }},
      {"a kernel renamed", "'name' otherwise than its code generator does", false, true,
       [](nlohmann::json& m) { m["kernels"][0]["name"] = "kjit_fixture::someone_else"; }},
      {"a loop status mistyped", "has a 'status' that is not an integer", true, true,
       [](nlohmann::json& m) { m["kernels"][0]["loops"] = {{{"status", "one"}, {"loc", "x.hpp:3"}}}; }},
      {"a loop status repeated in one kernel", "repeats status code 1", true, true,
       [](nlohmann::json& m) {
         m["kernels"][0]["loops"] = {{{"status", 1}, {"loc", "x.hpp:3"}}, {{"status", 1}, {"loc", "x.hpp:3"}}};
       }},
      {"one status code for two loops", "has status code 1, which another kernel gives the loop at x.hpp:3", true, true,
       [](nlohmann::json& m) {
         m["kernels"][0]["loops"] = {{{"status", 1}, {"loc", "x.hpp:3"}}};
         nlohmann::json other = m["kernels"][0];
         other["name"] = "kjit_fixture::other";
         other["forward"] = "other_fwd";
         other["adjoint"] = "other_adj";
         other["loops"] = {{{"status", 1}, {"loc", "y.hpp:9"}}};
         m["kernels"].push_back(other);
       }},
      {"a private add invented", "'private_adds' otherwise than its code generator does", false, true,
       [](nlohmann::json& m) { m["kernels"][0]["private_adds"]["forward"] = {{{"param", 3}, {"adds", 1}}}; }},
      {"a private add into a value", "has a 'private_adds.forward' entry for parameter 2, which is not an array", true,
       true, [](nlohmann::json& m) { m["kernels"][0]["private_adds"]["forward"] = {{{"param", 2}, {"adds", 1}}}; }},
      {"negative dynamic shared memory", "'dynamic_shared_bytes.forward' that is not an integer", true, true,
       [](nlohmann::json& m) { m["kernels"][0]["dynamic_shared_bytes"]["forward"] = -1; }},
  };
  return list;
}

std::string stored_hash(const nlohmann::json& kernels) {
  return sha256_hex(kernels.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

TEST_CASE("edited kernel descriptions are misses: warned about once, rebuilt, and reported by verify") {
  kjit::test::TempDir dir("descriptions");
  kjit::test::WarningLog log;
  Cache cache(kjit::test::cache_config(dir.path(), log));
  for (const Edit& e : edits()) {
    SUBCASE(e.what) {
      ModuleSource m = kjit::test::saxpy_module("described");
      // What the runtime passes: codegen's own descriptions, to cross-check a hit against.
      m.expected_kernels = [k = m.kernels] { return k; };
      Artifact a = build_module(m, Target::ptx(90), CompileOptions{}, cache);
      REQUIRE(a.kernels.size() == 1);
      CHECK(a.kernels[0].forward == "kjit_kjit_fixture__saxpy_fwd");
      CHECK(a.kernels[0].adjoint == "kjit_kjit_fixture__saxpy_adj");
      CHECK(a.kernels[0].params.size() == 4);
      const std::string entry = cache.entry_path(m.name, a.key);
      const std::string original = kjit::test::read_file(entry + "/meta.json");
      nlohmann::json meta = nlohmann::json::parse(original);
      REQUIRE(meta["kernels_sha256"] == stored_hash(meta["kernels"]));
      e.apply(meta);
      if (e.rehash && meta.contains("kernels")) meta["kernels_sha256"] = stored_hash(meta["kernels"]);
      kjit::test::write_file(entry + "/meta.json", meta.dump(1));

      CacheVerifyReport v = cache.verify(/*remove_bad=*/false);
      if (e.verify_sees) {
        REQUIRE(v.problems.size() == 1);
        CHECK(v.problems[0].reason.find(e.reason) != std::string::npos);
      } else {
        CHECK(v.problems.empty());  // only the module's own code generator can tell
      }
      log.clear();
      cache.reset_stats();
      Artifact rebuilt = build_module(m, Target::ptx(90), CompileOptions{}, cache);
      CHECK(rebuilt.origin == ArtifactOrigin::Compiled);
      CHECK(log.count() == 1);
      CHECK(log.all().find(entry) != std::string::npos);
      CHECK_MESSAGE(log.all().find(e.reason) != std::string::npos, log.all());
      CHECK(cache.stats().bad_entries == 1);
      CHECK(rebuilt.image == a.image);
      nlohmann::json again = nlohmann::json::parse(kjit::test::read_file(entry + "/meta.json"));
      CHECK(again["kernels"] == nlohmann::json::parse(original)["kernels"]);
      CHECK(build_module(m, Target::ptx(90), CompileOptions{}, cache).origin == ArtifactOrigin::Cached);
      CHECK(cache.verify().problems.empty());
    }
  }
}

TEST_CASE("kernel descriptions parse into typed fields, and each malformed field is named") {
  ModuleSource m = kjit::test::saxpy_module("typed");
  std::vector<KernelDescription> k;
  REQUIRE(parse_kernel_descriptions(m.kernels, &k) == "");
  REQUIRE(k.size() == 1);
  CHECK(k[0].name == "kjit_fixture::saxpy");
  CHECK(k[0].params[0].name == "x");
  CHECK(k[0].params[0].ndim == 1);
  CHECK(k[0].params[2].ndim == 0);
  CHECK(described_entry_points(k) == m.entry_points);
  nlohmann::json bad = m.kernels;
  bad[0]["launch_ndim"] = 9;
  CHECK(parse_kernel_descriptions(bad, &k) ==
        "kernel 'kjit_fixture::saxpy' has a 'launch_ndim' that is not an integer from 0 to 4");
  CHECK(k.empty());
  bad = m.kernels;
  bad[0]["adjoint"] = bad[0]["forward"];
  CHECK(parse_kernel_descriptions(bad, &k) ==
        "kernel 'kjit_fixture::saxpy' names an entry point another entry point has");
  bad = m.kernels;
  bad[0]["adjoint_error"] = "no";
  CHECK(parse_kernel_descriptions(bad, &k) == "kernel 'kjit_fixture::saxpy' has an adjoint and a reason it has none");
  CHECK(parse_kernel_descriptions(nlohmann::json::array(), &k) == "");
}

TEST_CASE("private adds parse into entry parameter positions; malformed ones are named") {
  ModuleSource m = kjit::test::saxpy_module("private_adds");
  std::vector<KernelDescription> k;
  REQUIRE(parse_kernel_descriptions(m.kernels, &k) == "");
  CHECK(k[0].private_forward.empty());  // saxpy adds into nothing
  CHECK(k[0].private_adjoint.empty());
  nlohmann::json good = m.kernels;
  // Parameters x, y, a, out; the adjoint's are 4 .. 7 (d x at 4).
  good[0]["private_adds"] = {{"forward", {{{"param", 3}, {"adds", 2}}}}, {"adjoint", {{{"param", 4}, {"adds", 1}}, {{"param", 7}, {"adds", 3}}}}};
  REQUIRE(parse_kernel_descriptions(good, &k) == "");
  REQUIRE(k[0].private_forward.size() == 1);
  CHECK(k[0].private_forward[0].param == 3);
  CHECK(k[0].private_forward[0].adds == 2);
  REQUIRE(k[0].private_adjoint.size() == 2);
  CHECK(k[0].private_adjoint[1].param == 7);
  CHECK(k[0].private_adjoint[1].adds == 3);
  const std::string who = "kernel 'kjit_fixture::saxpy' ";
  auto problem = [&](nlohmann::json adds) {
    nlohmann::json bad = m.kernels;
    bad[0]["private_adds"] = adds;
    return parse_kernel_descriptions(bad, &k);
  };
  CHECK(problem(3) == who + "has a 'private_adds' that is not an object");
  CHECK(problem({{"forward", 3}}) == who + "has a 'private_adds.forward' that is not an array");
  CHECK(problem({{"forward", {{{"param", 4}, {"adds", 1}}}}}) == who + "has a 'param' that is not an integer from 0 to 3");
  CHECK(problem({{"adjoint", {{{"param", 8}, {"adds", 1}}}}}) == who + "has a 'param' that is not an integer from 0 to 7");
  CHECK(problem({{"forward", {{{"param", 0}, {"adds", 0}}}}}) ==
        who + "has a 'adds' that is not an integer from 1 to 2147483647");
  CHECK(problem({{"forward", {{{"param", 0}}}}}) == who + "has a 'private_adds.forward' entry without 'param' and 'adds'");
  CHECK(problem({{"adjoint", {{{"param", 6}, {"adds", 1}}}}}) ==
        who + "has a 'private_adds.adjoint' entry for parameter 6, which is not an array");
  CHECK(problem({{"forward", {{{"param", 0}, {"adds", 1}}, {{"param", 0}, {"adds", 2}}}}}) ==
        who + "names parameter 0 twice in 'private_adds.forward'");
  CHECK(problem({{"forward", {7}}}) == who + "has a 'private_adds.forward' entry that is not an object");
  CHECK(problem({{"forward", {{{"param", 0}, {"adds", 1}, {"owned", 1}}}}}) ==
        who + "has a 'private_adds.forward' entry whose 'owned' is not a boolean");
  nlohmann::json no_adjoint = m.kernels;
  no_adjoint[0]["adjoint"] = nullptr;
  no_adjoint[0]["private_adds"] = {{"adjoint", nlohmann::json::array()}};
  CHECK(parse_kernel_descriptions(no_adjoint, &k) == who + "has private adds for an adjoint it does not have");
  CHECK(k.empty());
}
