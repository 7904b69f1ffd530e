// fuzz_tests.cpp — the CI seed set of the randomized differential tester, and checks that the
// tester itself notices what it must (a wrong adjoint, a refusal, a shrunk repro).
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

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

namespace {
fuzz::Expr load_a() {
  fuzz::Expr tid{fuzz::Expr::Tid, fuzz::Ty::I};
  fuzz::Expr e{fuzz::Expr::LoadA, fuzz::Ty::D};
  e.a.push_back(tid);
  return e;
}
fuzz::Stmt store_out(fuzz::Expr value) {
  fuzz::Stmt s;
  s.k = fuzz::Stmt::StoreOut;
  s.e.push_back(std::move(value));
  return s;
}
}  // namespace

TEST_CASE("the tester reports a wrong custom gradient, and shrinks the program around it") {
  fuzz::TempCache cache;
  fuzz::CheckOptions o;
  o.nvrtc = false;
  o.opt_level = 1;
  // out[t] = fz_wrong_g(a[t]) after unrelated statements the shrinker must remove.
  fuzz::Program p = fuzz::generate(7, fuzz::known_safe_options());
  p.seed = 900001;
  fuzz::Expr call{fuzz::Expr::CallF, fuzz::Ty::D};
  call.i0 = 6;
  call.a.push_back(load_a());
  std::function<void(std::vector<fuzz::Stmt>&)> drop = [&](std::vector<fuzz::Stmt>& b) {
    b.erase(std::remove_if(b.begin(), b.end(), [](const fuzz::Stmt& s) {
              return s.k == fuzz::Stmt::StoreOut || s.k == fuzz::Stmt::Return;
            }), b.end());
    for (fuzz::Stmt& s : b) { drop(s.body); drop(s.els); }
  };
  drop(p.body);
  p.body.push_back(store_out(call));
  std::vector<fuzz::ProgramResult> r = fuzz::check_batch({p}, "fuzz_selftest", o);
  REQUIRE(r.size() == 1);
  CHECK(r[0].outcome == fuzz::Outcome::Failure);
  CHECK(r[0].kind == "adjoint");
  CHECK(r[0].detail.find("d L / d a component") != std::string::npos);
  fuzz::Program small = fuzz::shrink(p, "adjoint", o);
  CHECK(fuzz::program_size(small) <= 2);
  std::string src = fuzz::to_dsl_source(small, "repro");
  CHECK(src.find("out[t] = fz_wrong_g(") != std::string::npos);
  CHECK(src.find("inline const auto fz_wrong_g") != std::string::npos);
}
