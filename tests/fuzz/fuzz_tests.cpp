// fuzz_tests.cpp — the CI seed set of the randomized differential tester, and checks that the
// tester itself notices what it must (a wrong adjoint, a refusal, a shrunk repro).
#include <doctest/doctest.h>

#include "checker.hpp"
#include "printer.hpp"
#include "temp_cache.hpp"

TEST_CASE("the randomized differential tester: the CI seed set passes") {
  fuzz::TempCache cache;  // cold: CI measures compiles, not cache hits
  fuzz::CheckOptions o;
  o.gen = fuzz::known_safe_options();
  o.jobs = 2;
  o.opt_level = 1;  // the host compile dominates; -O1 keeps the seed set within CI time
  fuzz::Summary s = fuzz::run_seeds(fuzz::kCiFirstSeed, fuzz::kCiSeedCount, o);
  MESSAGE(s.line());
  for (const fuzz::ProgramResult& r : s.failed) MESSAGE(r.detail);
  CHECK(s.programs == int(fuzz::kCiSeedCount));
  CHECK(s.failures == 0);
  CHECK(s.passed > s.programs / 2);
  CHECK(s.components > 1000);
}

TEST_CASE("generation is deterministic and the printer prints a KJIT_KERNEL") {
  std::string a = fuzz::to_dsl_source(fuzz::generate(42), "k"), b = fuzz::to_dsl_source(fuzz::generate(42), "k");
  CHECK(a == b);
  CHECK(a.find("KJIT_KERNEL(k, (Array<Double> a") != std::string::npos);
  CHECK(a != fuzz::to_dsl_source(fuzz::generate(43), "k"));
}
