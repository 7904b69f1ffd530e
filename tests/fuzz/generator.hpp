// generator.hpp — random well-typed, race-free and overwrite-free programs from a seed.
#pragma once

#include <cstdint>

#include "program.hpp"

namespace fuzz {

/// Which constructs the generator may use. Each flag that is off names a construct the
/// tester avoids (a known open finding, see FINDINGS.md), so a seed set stays meaningful.
struct GenOptions {
  bool mat_products = true;     ///< Mat33d * Mat33d (square products)
  bool atomic_minmax = true;    ///< atomic_min / atomic_max
  bool custom_grad_multi = true;  ///< .grad() on a function of two value parameters
  bool custom_grad_array = true;  ///< .grad() on a function with an array parameter
  bool nested_jumps = true;     ///< Break / Continue / Return inside a loop nested in a loop
  bool refusable = true;        ///< now and then a store in a loop, which kjit must refuse to differentiate
  int max_stmts = 22;           ///< statement budget
  /// Straight-line programs only: no branches, loops, jumps or device function calls (what
  /// the reverse transform's first increment built adjoints of; reverse_ir_differential.cpp).
  bool straight_line = false;
  bool loops = true;  ///< For and While (off: branches and returns, no loop: the reverse transform's second increment)
  bool calls = true;  ///< device function calls
};

/// The program of `seed` (deterministic: the same seed gives the same program everywhere).
Program generate(uint64_t seed, const GenOptions& options = {});

}  // namespace fuzz

namespace fuzz {
/// The generator options that avoid every known open finding of FINDINGS.md.
GenOptions known_safe_options();
/// The CI seed set: seeds [kCiFirstSeed, kCiFirstSeed + kCiSeedCount).
constexpr uint64_t kCiFirstSeed = 1;
constexpr uint64_t kCiSeedCount = 320;
}  // namespace fuzz
