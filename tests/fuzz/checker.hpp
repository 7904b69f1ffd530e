// checker.hpp — runs generated programs through kjit and checks them: forward values against
// the reference evaluator, adjoints and tangents against its finite differences, tangents
// against adjoints, NVRTC compiles, refusals.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "generator.hpp"
#include "program.hpp"

namespace fuzz {

/// How a program fared.
enum class Outcome { Pass, Refused, Degenerate, Failure };

struct ProgramResult {
  uint64_t seed = 0;
  Outcome outcome = Outcome::Pass;
  /// Failures: "forward", "adjoint", "tangent", "tangent-dot", "nvrtc", "host-compile", "crash",
  /// "internal", "refusal-without-line", "launch"; refusals and degenerate programs: a short
  /// reason.
  std::string kind;
  std::string detail;
  int components = 0;   ///< gradient components compared
  int nonsmooth = 0;    ///< components skipped: a finite-difference step crossed a kink
  int rounding = 0;     ///< components whose adjoint's own rounding error exceeds the tolerance
  int tangent_components = 0;  ///< tangent output components compared with finite differences
  int tangent_nonsmooth = 0;   ///< tangent directions skipped at kinks
  bool tangent_refused = false;  ///< forward mode refused the program (it was checked in reverse)
  bool dot_checked = false;      ///< <w, J v> was compared with <v, J^T w>
  /// With CheckOptions::dump_values: the raw bytes of every buffer read back from kjit's
  /// launches of the program, as records of append_values (launch_support.hpp), in the order
  /// the checker read them.
  std::string values;
};

struct CheckOptions {
  GenOptions gen;
  int batch = 16;        ///< programs per module
  bool nvrtc = true;     ///< compile every module for sm_90 as well
  bool shrink = true;    ///< shrink failures and print them as DSL source
  /// The shrinker's time limit in seconds; 0: none (tests whose result must not depend on the
  /// machine's load: shrinking ends anyway, when no smaller candidate fails).
  int shrink_seconds = 120;
  int jobs = 1;          ///< batches checked at once
  bool verbose = false;
  bool tangents = true;  ///< forward mode too: tangents, dot products, NVRTC of the tangent modules
  int opt_level = 3;     ///< the host compile's -O level (ModuleOptions::opt_level)
  /// Threads per launch (and elements per array) instead of the generator's few; 16 or more
  /// run the cpu's lane functions (blocks of 16 threads under masks) beside the tail.
  int threads = 0;
  /// ModuleOptions::adjoint_span of the modules (-1: the default). Small spans put every
  /// program's adjoint through the span-by-span sweep (rerun from checkpoints).
  int adjoint_span = -1;
  /// When set, a folder where each module's generated text is written as it is built (and its
  /// tangent module's, when tangents are on), named after the seeds of its programs:
  /// <seed>.cu and <seed>.tangent.cu for a module of one program, <first>-<last>.cu for a
  /// batch (".r<round>" added for the rest of a batch that failed as a whole), and
  /// <name>.error / <name>.tangent.error holding the message where generation failed. The
  /// shrinker's modules are not written.
  std::string dump_source;
  /// Generate each module's text (and its tangent module's) exactly as a checked run would,
  /// and stop there: nothing is compiled, launched or checked. With dump_source, a quick
  /// differential test of code generation (scripts/codegen_differential.sh).
  bool generate_only = false;
  /// When set, a folder where a checked run writes, per program, <seed>.values: the raw bytes
  /// of everything the checker reads back from kjit's cpu launches of it (forward outputs,
  /// tangent outputs, adjoint gradients of the arrays and of the value s, and the outputs'
  /// adjoints as the adjoint launch leaves them), nothing of the reference's
  /// (write_values_file in checker.cpp has the format). Two builds that launch the same
  /// programs give identical files exactly when kjit's results are bit for bit the same: the
  /// differential test of values across a code-generation change
  /// (KJIT_DIFF_MODE=values scripts/codegen_differential.sh). The launches of the generated
  /// programs are below the size the cpu thread pool splits (cpu_dispatch.hpp), so the files
  /// do not depend on the pool; the script still runs with KJIT_NUM_THREADS=1. The shrinker's
  /// programs are not written.
  std::string dump_values;
};

/// Totals of a run, and each failure (shrunk, with its DSL repro).
struct Summary {
  int programs = 0, passed = 0, refusals = 0, degenerate = 0, failures = 0;
  long components = 0, nonsmooth = 0, rounding = 0;
  long tangent_components = 0, tangent_nonsmooth = 0, tangent_refusals = 0, dot_products = 0;
  std::map<std::string, int> failures_by_kind, refusals_by_reason;
  std::vector<ProgramResult> failed;   ///< detail holds the shrunk repro
  bool generate_only = false;          ///< the programs were only generated (passed: generated)
  std::string line() const;            ///< the one-line summary
};

/// Checks programs of seeds [first, first + count).
Summary run_seeds(uint64_t first, uint64_t count, const CheckOptions& options);

/// Checks `programs` as one module (falling back to one module per program when the module
/// fails as a whole); one result per program, in order.
std::vector<ProgramResult> check_batch(const std::vector<Program>& programs, const std::string& module,
                                       const CheckOptions& options);

/// A smaller program that fails the same way as `p` (kind `kind`), found by deleting
/// statements, simplifying expressions and reducing loop bounds.
Program shrink(const Program& p, const std::string& kind, const CheckOptions& options);

}  // namespace fuzz
