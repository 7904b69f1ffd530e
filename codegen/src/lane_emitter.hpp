// The cpu's SIMD form of a kernel's forward body: KJ_LANES consecutive threads run together,
// one short loop over the lanes per straight-line run of statements, with lane masks for
// branches and loops whose conditions differ between lanes (as ISPC and Dr.Jit run SIMT code
// on SIMD units). GCC vectorizes each run; the plain body's outer loop it does not, once the
// body holds a loop or a branch.
#pragma once

#include <string>
#include <vector>

#include "entry_points.hpp"
#include "expr_emitter.hpp"
#include "kjit/codegen/codegen.hpp"
#include "lower.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// Whether `fn`'s entries (forward and adjoint) get lane functions: it has control flow or
/// atomics (a straight-line body without them already vectorizes across threads) and the
/// module is not bounds-checked (a check would report what inactive lanes compute).
bool wants_lane_function(const ir::Function& fn, const CodegenOptions& options);

/// Whether `fn`'s forward entry gets a lane function: wants_lane_function, or it has block
/// stores (an array it only writes, each thread its own element: written in blocks,
/// non-temporally when large) in a module that is not bounds-checked.
bool wants_forward_lane_function(const ir::Function& fn, const CodegenOptions& options);

/// "static void <name>(const kj::launch_bounds_t& dim, kj_int32 kj_base, <params as
/// kj::dense_array_t>)": the signature of a lane function.
std::string lane_signature(const std::string& name, const std::vector<EntryParam>& params);

/// What the entry of a lane function must know of it.
struct LaneFunction {
  std::string block;  ///< threads per call: the prelude's KJ_LANES or KJ_WIDE_LANES (lane_width)
  bool fence;         ///< it writes block stores (kj::store_block), whose non-temporal stores the entry fences
};

/// Writes `static void <name>(const kj::launch_bounds_t& dim, kj_int32 kj_base, <params as
/// kj::dense_array_t>)`, which runs threads kj_base .. kj_base + block - 1 of `fn`'s forward
/// body with the results and effects of running each alone.
LaneFunction emit_lane_function(SourceWriter& w, const LoweredFunction& fn, const std::string& name,
                                const std::vector<EntryParam>& params,
                                const FunctionNames* functions);

}  // namespace kjit::codegen
