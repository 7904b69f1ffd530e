// The entry points of a kernel: the CUDA __global__ function with its grid-stride loop and
// the host function over a [begin, end) range of flat indices, both calling one body
// function with the kernel ABI's parameters (kjit/abi.h); an adjoint's entry points also sum
// the adjoints of value parameters over the launch's threads.
#pragma once

#include <string>
#include <vector>

#include "expr_emitter.hpp"
#include "kjit/codegen/codegen.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// One parameter of an entry point, in ABI order.
struct EntryParam {
  enum class Kind {
    Array,  ///< an array_t (a parameter, or an array's adjoint)
    Value,  ///< a value parameter: value_t<type> in the ABI, `type` in the body
    Sum,    ///< a differentiable value parameter's adjoint: a pointer in the ABI (kjit/abi.h,
            ///< value_t), in the body a `sum&` the thread's adjoint is added into
    None,   ///< the adjoint of a value that has none (an integer): a pointer in the ABI, always
            ///< null, which the body does not take
  };
  Kind kind = Kind::Value;
  std::string type;     ///< C++ type: the value's ("float"), the array's ("kj::array_t<float>")
  std::string name;     ///< identifier in the body ("p_x", "adj_p_x")
  std::string element;  ///< an array's element type ("float"); empty otherwise
  std::string sum;      ///< Sum: the type the sum is kept in (ir::adjoint_sum_type)
};

/// The parameters of `fn`'s entry point of `kind` after the launch bounds: the kernel's
/// parameters, then (adjoint) one adjoint per parameter: an array_t of gradients for an
/// array, a Sum for a differentiable value, None for another value.
std::vector<EntryParam> entry_params(const ir::Function& fn, const Names& names, EntryKind kind);

/// "template <bool KJ_DENSE> static KJ_FUNC void <body>(const kj::launch_bounds_t& dim,
/// kj_int64 kj_index, ...) {": arrays are kj::dense_array_t when KJ_DENSE (the cpu entry's
/// path for launches whose arrays are all dense), kj::array_t otherwise; a Sum is a reference
/// to the thread's adjoint sum.
void open_body_function(SourceWriter& w, const std::string& body, const std::vector<EntryParam>& params);

/// Both entry points (CUDA and host, selected by the preprocessor) calling `body`. With
/// `lanes` (a lane function, lane_emitter.hpp), the host entry's dense path runs blocks of
/// `block` threads (a prelude macro, KJ_LANES or KJ_WIDE_LANES) through it and the rest
/// through the strided body, or through `tail` when given (a function `(dim, kj_begin, kj_end,
/// <params as lanes takes them>)` running those threads one at a time). Lane and tail
/// functions take the arrays (dense) and values only: they run where no sum is wanted.
/// `fence`: the lane function writes non-temporal block stores, which the entry fences
/// (kj::stream_fence) after its dense loops.
///
/// Sums: the CUDA entry keeps one sum per thread over its grid-stride iterations and adds the
/// block's total to the destination (kj::block_add) when there is one. The host entry runs
/// its dense loop when no Sum has a destination (each thread's sum then starts at zero and is
/// dropped, which the compiler removes with the work that only fed it); otherwise, and for
/// strided arrays, it walks the launch in blocks of kj::reduce_block(dim.size) threads
/// through the strided body, adds the threads' sums in order and writes one partial per block with a destination
/// (kjit/abi.h, value_t). So a kernel with value parameters gets no more copies of its adjoint
/// body than one without. The two paths are functions of their own (`<entry>_plain`,
/// `<entry>_sums`), so the dense loop compiles, registers included, as without sums.
void emit_entry_points(SourceWriter& w, const std::string& entry, const std::string& body,
                       const std::vector<EntryParam>& params, const std::string& lanes = "",
                       const std::string& tail = "", const std::string& block = "KJ_LANES",
                       bool fence = false);

}  // namespace kjit::codegen
