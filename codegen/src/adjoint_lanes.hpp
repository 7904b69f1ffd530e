// The cpu's SIMD form of a kernel's adjoint: a block of consecutive threads replay their forward
// pass and sweep back together, with the forward lane function's units, masks and lane arrays
// (lane_code.hpp), the scalar adjoint's reverse rules (reverse_rules.hpp) and its checkpointed
// loops (checkpoint_loops.hpp) kept once per block.
#pragma once

#include <string>
#include <vector>

#include "entry_points.hpp"
#include "expr_emitter.hpp"
#include "kjit/codegen/codegen.hpp"
#include "lower.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// The most bytes a block's lane arrays and loop checkpoints may take on the stack (every
/// checkpoint slot held for each lane): a kernel whose adjoint would need more gets no lane function.
constexpr size_t kMaxAdjointLaneFrame = 512 * 1024;

/// Writes (between `#if !KJ_CUDA` and `#endif`) `static void <name>(const kj::launch_bounds_t&
/// dim, kj_int32 kj_base, <params as kj::dense_array_t>)`, which runs threads kj_base ..
/// kj_base + W - 1 of `fn`'s adjoint with the results of running `<body>` for each
/// (`params`: the adjoint entry's), and before it `<threads>(dim, kj_begin, kj_end, <params>)`,
/// which runs `body` for each thread of a range (the dense path's tail: emit_entry_points'
/// `tail`). A block in which a loop passes its checkpoint bound runs `threads` instead, which
/// reports the loop and skips those threads' sweeps. Loops are named from `first_loop` (as
/// emit_adjoint_body numbers them). W, the lanes per block, is KJ_WIDE_LANES for a kernel
/// whose values are all 32 bits or narrower (two vectors per value with AVX-512), else
/// KJ_LANES. Returns W (the prelude macro's name), or "" writing nothing when the block's
/// frame would pass kMaxAdjointLaneFrame.
std::string emit_adjoint_lane_function(SourceWriter& w, const LoweredFunction& fn, const std::string& name,
                                       const std::string& threads, const std::string& body,
                                       const std::vector<EntryParam>& params,
                                       const CodegenOptions& options, int first_loop, const FunctionNames* functions);

}  // namespace kjit::codegen
