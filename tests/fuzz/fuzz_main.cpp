// fuzz_main.cpp — kjit_autodiff_fuzz: the randomized differential tester for long runs.
//   kjit_autodiff_fuzz --seed S --count N [--jobs J] [--batch B] [--no-nvrtc] [--adjoint-span S] [--no-shrink] [--no-tangents]
//                      [--avoid-known] [--straight-line] [--no-loops] [--no-calls] [--dump-source DIR] [--generate-only] [--dump-values DIR]
//                      [--print S] [--verbose]
// --straight-line generates programs without branches, loops, jumps or device function calls
// (GenOptions::straight_line): with KJIT_REVERSE_IR=1 on one side of a --dump-values run, the
// differential test of the reverse transform's adjoints against the adjoint emitter's;
// --no-loops (branches and returns, no loop) and --no-calls (no device function call) the
// same for what its later increments cover.
// --dump-source DIR writes the generated text of every module the run builds into DIR (created
// if missing): <seed>.cu and, with tangents, <seed>.tangent.cu for a module of one program
// (--batch 1), <first>-<last>.cu for a batch (CheckOptions::dump_source). --generate-only
// generates the same programs' modules with the same options as a checked run but compiles,
// launches and checks nothing (seconds for thousands of programs); with --dump-source it is
// the differential test of code generation that scripts/codegen_differential.sh runs.
// --dump-values DIR (a checked run) writes DIR/<seed>.values per program: the raw bytes of
// every buffer the checker reads back from kjit's cpu launches (forward outputs, tangent
// outputs, adjoint gradients of the arrays and of s; CheckOptions::dump_values). With
// --no-nvrtc it is the differential test of values that KJIT_DIFF_MODE=values
// scripts/codegen_differential.sh runs: a code-generation change must leave every launch's
// results bit for bit as they were.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "checker.hpp"
#include "printer.hpp"
#include "temp_cache.hpp"

int main(int argc, char** argv) {
  fuzz::TempCache cache;
  fuzz::CheckOptions o;
  uint64_t seed = 1, count = 100;
  long print = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--seed") seed = std::stoull(next());
    else if (a == "--count") count = std::stoull(next());
    else if (a == "--jobs") o.jobs = std::stoi(next());
    else if (a == "--batch") o.batch = std::stoi(next());
    else if (a == "--opt") o.opt_level = std::stoi(next());
    else if (a == "--threads") o.threads = std::stoi(next());
    else if (a == "--no-nvrtc") o.nvrtc = false;
    else if (a == "--adjoint-span") o.adjoint_span = std::stoi(next());
    else if (a == "--no-shrink") o.shrink = false;
    else if (a == "--no-tangents") o.tangents = false;
    else if (a == "--avoid-known") o.gen = fuzz::known_safe_options();
    else if (a == "--avoid") {
      // A comma-separated subset of: mat, grad2, grada, jumps, minmax.
      std::string list = std::string(",") + next() + ",";
      auto has = [&](const char* w) { return list.find(std::string(",") + w + ",") != std::string::npos; };
      if (has("mat")) o.gen.mat_products = false;
      if (has("grad2")) o.gen.custom_grad_multi = false;
      if (has("grada")) o.gen.custom_grad_array = false;
      if (has("jumps")) o.gen.nested_jumps = false;
      if (has("minmax")) o.gen.atomic_minmax = false;
    }
    else if (a == "--straight-line") o.gen.straight_line = true;
    else if (a == "--no-loops") o.gen.loops = false;
    else if (a == "--no-calls") o.gen.calls = false;
    else if (a == "--dump-source") o.dump_source = next();
    else if (a == "--generate-only") o.generate_only = true;
    else if (a == "--dump-values") o.dump_values = next();
    else if (a == "--print") print = std::stol(next());
    else if (a == "--verbose") o.verbose = true;
    else {
      std::fprintf(stderr,
                   "usage: kjit_autodiff_fuzz --seed S --count N [--jobs J] [--batch B] [--no-nvrtc] [--adjoint-span S] "
                   "[--no-shrink] [--no-tangents] [--avoid-known] [--avoid mat,grad2,grada,jumps,minmax] [--opt O] [--threads N] "
                   "[--straight-line] [--no-loops] [--no-calls] [--dump-source DIR] [--generate-only] [--dump-values DIR] [--print SEED] [--verbose]\n"
                   "  --dump-source DIR  write each module's generated text to DIR/<seed>.cu (and <seed>.tangent.cu; "
                   "<first>-<last>.cu for a batch of several programs)\n"
                   "  --generate-only    generate the modules' texts only: compile, launch and check nothing\n"
                   "  --dump-values DIR  in a checked run, write the raw bytes of every buffer read back from kjit's cpu "
                   "launches of each program (forward outputs, tangents, gradients) to DIR/<seed>.values\n"
                   "  --threads N        launch every program over N threads (N elements per array) instead of 4; "
                   "16 or more run the cpu's lane functions\n");
      return 2;
    }
  }
  if (print >= 0) {
    std::printf("%s", fuzz::to_dsl_source(fuzz::generate(uint64_t(print), o.gen), "fuzz_" + std::to_string(print)).c_str());
    return 0;
  }
  if (!o.dump_values.empty() && o.generate_only) {
    std::fprintf(stderr, "--dump-values needs a checked run: it cannot go with --generate-only\n");
    return 2;
  }
  for (const auto& [option, dir] : {std::pair<const char*, std::string>{"--dump-source", o.dump_source},
                                    std::pair<const char*, std::string>{"--dump-values", o.dump_values}}) {
    if (dir.empty()) continue;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir)) {
      std::fprintf(stderr, "%s: cannot make the folder %s: %s\n", option, dir.c_str(), ec.message().c_str());
      return 2;
    }
  }
  fuzz::Summary s = fuzz::run_seeds(seed, count, o);
  for (const fuzz::ProgramResult& r : s.failed) std::printf("---- FAILURE\n%s\n", r.detail.c_str());
  for (auto& [reason, n] : s.refusals_by_reason) std::printf("refusal x%d: %s\n", n, reason.c_str());
  std::printf("%s\n", s.line().c_str());
  return s.failures == 0 ? 0 : 1;
}
