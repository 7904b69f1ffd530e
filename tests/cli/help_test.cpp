// --help for kjit and every subcommand (their own overview and options only), and --version.
#include <doctest/doctest.h>

#include "cli_fixtures.hpp"

using namespace kjit::test;
using namespace kjit::test::cli;

TEST_CASE("kjit --help lists the subcommands") {
  Run r = run_kjit("--help");
  CHECK(r.status == 0);
  for (const char* sub : {"precompile", "list", "source", "cache", "devices"})
    CHECK_MESSAGE(r.out.find(std::string("  ") + sub) != std::string::npos, sub);
}

TEST_CASE("every subcommand has --help with its overview and its own options") {
  struct Expect {
    const char* sub;
    std::vector<const char*> present;
    std::vector<const char*> absent;
  };
  const Expect expects[] = {
      {"precompile", {"kjit precompile: build every module", "--arch=<sm_80,sm_90,...>", "--all-devices",
                      "--current-device", "--ptx", "--cpu", "--no-adjoint", "--module=<name>", "--cache-dir=<folder>",
                      "--jobs=<N>", "--json"}, {"--max-size=", "--ir "}},
      {"list", {"kjit list:", "--json"}, {"--arch=", "--ir "}},
      {"source", {"kjit source:", "--target=<sm_90|compute_90|cpu>", "--ir", "--passes", "--adjoint"}, {"--arch=", "--json "}},
      {"cache", {"kjit cache:", "stats", "verify", "prune", "clear", "--max-size=<size>", "--yes", "--cache-dir"},
       {"--arch="}},
      {"devices", {"kjit devices:", "--json"}, {"--arch=", "--cache-dir="}},
  };
  for (const Expect& e : expects) {
    Run r = run_kjit(std::string(e.sub) + " --help");
    INFO(e.sub << " --help:\n" << r.out);
    CHECK(r.status == 0);
    CHECK(r.out.find(std::string("USAGE: kjit ") + e.sub) != std::string::npos);
    for (const char* p : e.present) CHECK_MESSAGE(r.out.find(p) != std::string::npos, p);
    for (const char* a : e.absent) CHECK_MESSAGE(r.out.find(a) == std::string::npos, a);
  }
}

TEST_CASE("--version names kjit, the cache format and the compilers") {
  Run r = run_kjit("--version");
  CHECK(r.status == 0);
  CHECK(r.out.find("kjit 0.") == 0);
  CHECK(r.out.find("cache format v1") != std::string::npos);
  CHECK(r.out.find("GPU modules: nvrtc ") != std::string::npos);
  CHECK(r.out.find("sm_90") != std::string::npos);
  CHECK(r.out.find("cpu modules: host ") != std::string::npos);
}
