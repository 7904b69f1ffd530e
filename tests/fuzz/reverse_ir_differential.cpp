// reverse_ir_differential.cpp — the differential test of the reverse transform: the adjoints it
// builds (codegen's reverse_transform, printed by the scalar printer) against the adjoint
// emitter's (KJIT_REVERSE_IR=0), bit for bit, over random programs of what it covers:
// straight-line ones, ones with branches, ones with loops, and device functions' own adjoints.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "checker.hpp"
#include "temp_cache.hpp"

namespace {

namespace fs = std::filesystem;

/// KJIT_REVERSE_IR set to `value` while it lives ("0": the adjoint emitter writes every adjoint).
class ReverseIr {
 public:
  explicit ReverseIr(const char* value) { setenv("KJIT_REVERSE_IR", value, 1); }
  ~ReverseIr() { unsetenv("KJIT_REVERSE_IR"); }
  ReverseIr(const ReverseIr&) = delete;
  ReverseIr& operator=(const ReverseIr&) = delete;
};

/// Every file of `dir` by name, with its bytes.
std::map<std::string, std::string> files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    out[e.path().filename().string()] = bytes.str();
  }
  return out;
}

/// The modules' texts (one per program) that hold an adjoint the reverse transform built.
int transformed(const std::map<std::string, std::string>& texts) {
  int n = 0;
  for (const auto& [name, text] : texts) n += text.find("the reverse transform's adjoint") != std::string::npos;
  return n;
}

/// Of those, the ones whose adjoint holds a loop: the transform's overflow flag is a variable
/// of its own ("kj_ovf0 = true; var3 = true;"), the emitter's kj_overflow.
int transformed_loops(const std::map<std::string, std::string>& texts) {
  const std::regex flag("kj_ovf[0-9]+ = true; var[0-9]+ = true;");
  int n = 0;
  for (const auto& [name, text] : texts) n += std::regex_search(text, flag);
  return n;
}

/// The device functions' own adjoints (adj_<f>) the reverse transform built in the modules'
/// texts: the transform's comment opens their bodies.
int transformed_functions(const std::map<std::string, std::string>& texts) {
  const std::regex adjoint("void adj_kjf_[0-9]+\\(.*\\) \\{\n  // the reverse transform's adjoint");
  int n = 0;
  for (const auto& [name, text] : texts)
    n += int(std::distance(std::sregex_iterator(text.begin(), text.end(), adjoint), std::sregex_iterator()));
  return n;
}

/// The programs a run compares: `count`, or KJIT_REVERSE_IR_DIFF_COUNT's (a longer run by hand).
uint64_t programs(uint64_t count) {
  const char* env = std::getenv("KJIT_REVERSE_IR_DIFF_COUNT");
  return env && *env ? std::strtoull(env, nullptr, 10) : count;
}

/// Generates and runs programs [first, first + count) of `gen` twice on the cpu: once with the
/// adjoints the reverse transform builds, once with KJIT_REVERSE_IR=0 (the adjoint emitter's).
/// Every byte kjit's launches give back (forward and adjoint outputs, the gradients of a, v, m
/// and s) must be the same: the same additions in the same order give the same bits. At
/// least `min_taken` of the programs' adjoints must be the transform's, `min_loops` of them
/// with loops, and at least `min_functions` device functions' own adjoints.
void compare(const fuzz::GenOptions& gen, uint64_t first, uint64_t count, uint64_t min_taken, uint64_t min_loops = 0,
             uint64_t min_functions = 0) {
  fuzz::TempCache cache;
  const fs::path root = fs::path(cache.dir()) / "reverse_ir";
  fuzz::CheckOptions o;
  o.gen = gen;
  o.nvrtc = false;
  o.tangents = false;
  o.shrink = false;
  o.opt_level = 1;
  o.jobs = 2;
  std::map<std::string, std::map<std::string, std::string>> texts, values;
  std::map<std::string, fuzz::Summary> runs;
  for (const char* side : {"transform", "emitter"}) {
    ReverseIr env(side == std::string("emitter") ? "0" : "1");
    fuzz::CheckOptions g = o;  // the texts, one module per program
    g.generate_only = true;
    g.batch = 1;
    g.dump_source = (root / side / "source").string();
    fs::create_directories(g.dump_source);
    fuzz::run_seeds(first, count, g);
    texts[side] = files(g.dump_source);
    fuzz::CheckOptions c = o;  // checked, every value read back written
    c.dump_values = (root / side / "values").string();
    fs::create_directories(c.dump_values);
    runs[side] = fuzz::run_seeds(first, count, c);
    values[side] = files(c.dump_values);
    MESSAGE((std::string(side) + ": " + runs[side].line()));
  }
  // The switch works: the transform's side has its adjoints, the emitter's none.
  const int taken = transformed(texts["transform"]);
  MESSAGE(taken << " of " << count << " programs' adjoints built by the reverse transform");
  CHECK(transformed(texts["emitter"]) == 0);
  CHECK(taken >= int(min_taken));
  const int loops = transformed_loops(texts["transform"]);
  MESSAGE(loops << " of them with loops");
  CHECK(loops >= int(min_loops));
  const int functions = transformed_functions(texts["transform"]);
  MESSAGE(functions << " device functions' own adjoints built by the reverse transform");
  CHECK(transformed_functions(texts["emitter"]) == 0);
  CHECK(functions >= int(min_functions));
  CHECK(runs["transform"].failures == 0);
  CHECK(runs["transform"].passed > int(count) / 2);
  // Every program's values, byte for byte.
  REQUIRE(values["transform"].size() == count);
  REQUIRE(values["emitter"].size() == count);
  int identical = 0;
  for (const auto& [name, bytes] : values["transform"]) {
    INFO(name);
    CHECK(values["emitter"].count(name) == 1);
    const bool same = values["emitter"][name] == bytes;
    CHECK(same);
    identical += same;
  }
  MESSAGE(identical << " of " << count << " programs' values identical");
}

}  // namespace

TEST_CASE("the reverse transform's adjoints are the adjoint emitter's, bit for bit") {
  fuzz::GenOptions gen;
  SUBCASE("straight-line programs") {
    // No branch, loop, jump or device function (what its first increment covered).
    gen.straight_line = true;
    const uint64_t count = programs(24);
    compare(gen, 700001, count, count / 2);
  }
  SUBCASE("programs with branches and device function calls") {
    // Nested branches with else sides, variables stored in them, returns (lowered to flags
    // and branches), device function calls (custom gradients among them); no loop. Of seeds
    // 1..300 of such programs the transform took 259 (the other 41 have atomic min/max).
    gen.loops = false;
    const uint64_t count = programs(24);
    compare(gen, 710001, count, count * 3 / 4);
  }
  SUBCASE("device functions' own adjoints") {
    // Programs of device function calls (their adjoints adj_<f>, which the kernels' adjoints
    // call): functions of values and vectors, with an early return (lowered to flags) and with
    // a loop (checkpointed in the function's adjoint); those with a user gradient keep it. Of
    // seeds 1..600 of the default programs the transform built 478 functions' adjoints, every
    // one without a user gradient; of these 16, 17.
    const uint64_t count = programs(16);
    compare(gen, 730001, count, count / 2, 0, count / 2);
  }
  SUBCASE("programs with loops") {
    // The default programs: For and While loops, nested, with variables carried across
    // iterations (checkpointed), branches, jumps (lowered to flags) and calls inside.
    const uint64_t count = programs(16);
    compare(gen, 720001, count, count / 2, count / 8);
  }
}
