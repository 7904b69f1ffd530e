// kjit/module_options.hpp — options a module is built with (code generation and compiler).
#pragma once

#include <string>

namespace kjit {

/// How a module is generated and compiled. Every field that changes the artifact is part of
/// the module key.
struct ModuleOptions {
  bool enable_adjoint = true;  ///< generate adjoint entry points (off: forward only, faster)
  /// The module of this module's tangent kernels (forward mode, "<module>.tangent", built on
  /// first use) takes these options, with adjoint entry points (second derivatives:
  /// launch_adjoint of a tangent kernel) when both enable_adjoint and this are on. Off, it
  /// compiles in about half the time.
  bool tangent_adjoint = true;
  bool fast_math = false;      ///< NVRTC --use_fast_math / host -ffast-math
  bool line_info = false;      ///< line tables for profilers (NVRTC -lineinfo, host -g)
  bool debug = false;          ///< device debug (-G) / host -O0 -g
  int max_registers = 0;       ///< NVRTC --maxrregcount (0 = compiler's choice)
  int opt_level = 3;           ///< 0..3
  bool fast_compile = false;   ///< NVRTC fast-compile mode where available
  std::string cxx_standard = "c++17";  ///< -std= for NVRTC and the host compiler
  int block_dim = 256;         ///< default CUDA block size of the module's launches
  int loop_checkpoints = 64;   ///< adjoint: checkpoints per dynamic loop (see AUTODIFF.md)
  /// Check every array element and local-array / component index, forward and adjoint, and
  /// report integer division by zero: the first fault of a launch is a User error naming the
  /// kernel, line, thread, index and extent (DSL.md). KJIT_BOUNDS_CHECK=1 turns it on for
  /// every module.
  bool bounds_check = false;
  /// The adjoint of a kernel of at least twice this many IR statements sweeps back in spans of
  /// about this many, each run forward again from a checkpoint of its variables just before
  /// its reverse (AUTODIFF.md, "Long kernels"): compile time linear in kernel size, for one
  /// more forward pass. 0: one replay and one sweep at any size.
  int adjoint_span = 256;
  /// The cpu runs kernels with loops or branches in lane functions over blocks of 16 threads
  /// (ARCHITECTURE.md); false runs the plain body one thread after another instead, faster for
  /// loops whose trip counts and gathered loads differ per thread, such as hash-grid queries
  /// (GEOMETRY.md). CUDA code is the same either way.
  bool cpu_lanes = true;

  bool operator==(const ModuleOptions& o) const;
  bool operator!=(const ModuleOptions& o) const { return !(*this == o); }
};

}  // namespace kjit
