// fuzz_tests.cpp — the CI seed set of the randomized differential tester, and checks that the
// tester itself notices what it must (a wrong adjoint, a refusal, a shrunk repro).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "checker.hpp"
#include "kjit/kjit.hpp"
#include "kjit/runtime/gradcheck.hpp"
#include "kjit/kernel.hpp"
#include "printer.hpp"
#include "temp_cache.hpp"

namespace {

/// The options of the CI runs: known findings avoided, two batches at once, -O1 (the host
/// compile dominates; -O1 keeps the seed sets within CI time).
fuzz::CheckOptions ci_options() {
  fuzz::CheckOptions o;
  o.gen = fuzz::known_safe_options();
  o.jobs = 2;
  o.opt_level = 1;
  return o;
}

/// Runs `count` programs from seed `first` (in ctest's cache folder for this test: cold in a
/// clean build, and what the sanitizer build's run loads) and checks that every one passed or was refused with a line, most passed.
fuzz::Summary expect_clean_run(uint64_t first, uint64_t count, const fuzz::CheckOptions& o) {
  fuzz::TempCache cache(true);
  fuzz::Summary s = fuzz::run_seeds(first, count, o);
  MESSAGE(s.line());
  for (const fuzz::ProgramResult& r : s.failed) MESSAGE(r.detail);
  CHECK(s.programs == int(count));
  CHECK(s.failures == 0);
  CHECK(s.passed > s.programs / 2);
  return s;
}

}  // namespace

TEST_CASE("the randomized differential tester: the CI seed set passes") {
  fuzz::Summary s = expect_clean_run(fuzz::kCiFirstSeed, fuzz::kCiSeedCount, ci_options());
  CHECK(s.components > 1000);
}

TEST_CASE("the randomized differential tester over 37 threads: lane blocks and a tail") {
  // 37 threads: two blocks of 16 through the cpu's lane functions (divergent branches,
  // loops and early exits under masks), 5 through the strided body, against the reference.
  fuzz::CheckOptions o = ci_options();
  o.nvrtc = false;  // the CUDA text has no lane functions; the CI seed set compiles it
  o.threads = 37;
  expect_clean_run(fuzz::kCiFirstSeed + 100000, 48, o);
}

TEST_CASE("the randomized differential tester with the adjoint swept back in spans of 3 statements") {
  // Every program of a few statements or more is cut into spans, each run again from its
  // checkpoint before its reverse (AUTODIFF.md, "Long kernels"): loops, branches, jumps,
  // device functions and atomics at span edges, against the same reference; NVRTC compiles
  // the spans' CUDA text.
  fuzz::CheckOptions o = ci_options();
  o.tangents = false;  // the tangent entry has no sweep
  o.adjoint_span = 3;
  expect_clean_run(fuzz::kCiFirstSeed + 200000, 64, o);
}

TEST_CASE("generation is deterministic and the printer prints a KJIT_KERNEL") {
  std::string a = fuzz::to_dsl_source(fuzz::generate(42), "k"), b = fuzz::to_dsl_source(fuzz::generate(42), "k");
  CHECK(a == b);
  CHECK(a.find("KJIT_KERNEL(k, (Array<Double> a") != std::string::npos);
  CHECK(a != fuzz::to_dsl_source(fuzz::generate(43), "k"));
}

TEST_CASE("every #line of a generated fuzz module names the walker's sources or the module itself") {
  // A DSL value records where it was constructed: one made through std::make_unique named
  // <memory> (unique_ptr.h) in every module. Lines must point at code a reader can open.
  fuzz::TempCache cache(true);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "kjit_fuzz_lines";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  fuzz::CheckOptions o;
  o.nvrtc = false;
  o.generate_only = true;
  o.dump_source = dir.string();
  o.batch = 4;
  fuzz::run_seeds(7, 8, o);
  int modules = 0, lines = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".cu") continue;
    ++modules;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("#line ", 0) != 0) continue;
      ++lines;
      const bool walker = line.find("tests/fuzz/") != std::string::npos;
      const bool own = line.find("kjit_module_fuzz_") != std::string::npos;
      INFO(entry.path().filename().string() << ": " << line);
      CHECK((walker || own));
    }
  }
  CHECK(modules >= 2);
  CHECK(lines > 100);
  std::filesystem::remove_all(dir);
}

namespace {
fuzz::Expr load_a() {
  fuzz::Expr tid = fuzz::Expr::of(fuzz::Expr::Tid, fuzz::Ty::I);
  fuzz::Expr e = fuzz::Expr::of(fuzz::Expr::LoadA, fuzz::Ty::D);
  e.a.push_back(tid);
  return e;
}
/// Removes the statements `drop` picks from `b` and every block inside it.
void drop_stmts(std::vector<fuzz::Stmt>& b, const std::function<bool(const fuzz::Stmt&)>& drop) {
  b.erase(std::remove_if(b.begin(), b.end(), drop), b.end());
  for (fuzz::Stmt& s : b) {
    drop_stmts(s.body, drop);
    drop_stmts(s.els, drop);
  }
}
fuzz::Stmt store_out(fuzz::Expr value) {
  fuzz::Stmt s;
  s.k = fuzz::Stmt::StoreOut;
  s.e.push_back(std::move(value));
  return s;
}
/// The self-tests' options: host only, -O1, shrinking to the end however loaded the machine.
fuzz::CheckOptions self_test_options() {
  fuzz::CheckOptions o;
  o.nvrtc = false;
  o.opt_level = 1;
  o.shrink_seconds = 0;
  return o;
}

/// Generated program `generated` (seed `seed`) ending in out[t] = <device function `fn`>(a[t]),
/// after unrelated statements the shrinker must remove; `keep_stores`: the program's own
/// stores into out stay before it.
fuzz::Program calling(uint64_t generated, uint64_t seed, int fn, bool keep_stores) {
  fuzz::Program p = fuzz::generate(generated, fuzz::known_safe_options());
  p.seed = seed;
  fuzz::Expr call = fuzz::Expr::of(fuzz::Expr::CallF, fuzz::Ty::D);
  call.i0 = fn;
  call.a.push_back(load_a());
  drop_stmts(p.body, [&](const fuzz::Stmt& s) {
    return (!keep_stores && s.k == fuzz::Stmt::StoreOut) || s.k == fuzz::Stmt::Return;
  });
  p.body.push_back(store_out(call));
  return p;
}
}  // namespace

TEST_CASE("the tester reports a wrong custom gradient, and shrinks the program around it") {
  fuzz::TempCache cache(true);
  const fuzz::CheckOptions o = self_test_options();
  fuzz::Program p = calling(7, 900001, 6, false);  // fz_wrong_g
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

TEST_CASE("the tester reports a wrong tangent (.jvp), and shrinks the program around it") {
  fuzz::TempCache cache(true);
  const fuzz::CheckOptions o = self_test_options();
  fuzz::Program p = calling(11, 900002, 7, true);  // fz_wrong_t: d(x * x) given as x dx
  std::vector<fuzz::ProgramResult> r = fuzz::check_batch({p}, "fuzz_selftest_tangent", o);
  REQUIRE(r.size() == 1);
  CHECK(r[0].outcome == fuzz::Outcome::Failure);
  CHECK(r[0].kind == "tangent");
  CHECK(r[0].detail.find("kjit tangent") != std::string::npos);
  fuzz::Program small = fuzz::shrink(p, "tangent", o);
  CHECK(fuzz::program_size(small) <= 2);
  CHECK(fuzz::to_dsl_source(small, "repro").find("fz_wrong_t(") != std::string::npos);
}

// F1 of FINDINGS.md, as the shrinker printed it: a jump in one loop of a kernel with a nested
// loop elsewhere (and a Return after a nested loop) broke jump lowering.
namespace fuzz_f1 {
KJIT_MODULE(fuzz_f1)
using namespace kjit::dsl;
KJIT_KERNEL(jump_beside_nest, (Array<Double> x, Int k, Array<Double> out)) {
  Int t = tid();
  Var<Double> y = x[t];
  For(0, k, [&](Int) {
    Var<Int> c1 = 0;
    While([&] { return Int(c1) < 2; }, [&] { c1 = c1 + 1; y = y * 0.9 + sin(y); });
  });
  Var<Int> c3 = 0;
  While([&] { return Int(c3) < k; }, [&] {
    c3 = c3 + 1;
    If(y > 5.0, [&] { Continue(); });
    y = y * y * 0.5;
  });
  out[t] = y;
}
KJIT_KERNEL(return_after_nest, (Array<Double> x, Int k, Array<Double> out)) {
  Int t = tid();
  Var<Double> y = x[t];
  For(0, k, [&](Int) { For(0, 2, [&](Int) { y = y * 0.8 + cos(y); }); });
  If(y > 10.0, [&] { Return(); });
  out[t] = y * y;
}
}  // namespace fuzz_f1

TEST_CASE("F1: jumps beside a nested loop compile and differentiate") {
  fuzz::TempCache cache(true);
  for (const kjit::KernelDef* def : {&fuzz_f1::jump_beside_nest.def(), &fuzz_f1::return_after_nest.def()}) {
    INFO(def->name());
    auto x = kjit::from_vector(std::vector<double>{0.3, -0.7, 1.1, 0.05});
    auto out = kjit::zeros<double>({4});
    std::vector<kjit::LaunchArg> args{x, int32_t(3), out};
    kjit::launch(*def, 4, args);
    auto report = kjit::check_gradients(*def, 4, args);
    CHECK_MESSAGE(report.passed(), report.str());
  }
}
