// The entry points of a kernel: the CUDA __global__ function with its grid-stride loop and
// the host function over a [begin, end) range of flat indices, both calling one body
// function with the kernel ABI's parameters (kjit/abi.h).
#pragma once

#include <string>
#include <vector>

#include "expr_emitter.hpp"
#include "kjit/codegen/codegen.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// One parameter of an entry point, in ABI order.
struct EntryParam {
  std::string type;     ///< C++ type ("kj::array_t<float>", "float")
  std::string name;     ///< identifier in the body ("p_x", "adj_p_x")
  std::string element;  ///< an array's element type ("float"); empty for a value
};

/// The parameters of `fn`'s entry point of `kind` after the launch bounds: the kernel's
/// parameters, then (adjoint) one adjoint per parameter: an array_t of gradients for an
/// array, a value of its type for a value.
std::vector<EntryParam> entry_params(const ir::Function& fn, const Names& names, EntryKind kind);

/// "template <bool KJ_DENSE> static KJ_FUNC void <body>(const kj::launch_bounds_t& dim,
/// kj_int64 kj_index, ...) {": arrays are kj::dense_array_t when KJ_DENSE (the cpu entry's
/// path for launches whose arrays are all dense), kj::array_t otherwise.
void open_body_function(SourceWriter& w, const std::string& body, const std::vector<EntryParam>& params);

/// Both entry points (CUDA and host, selected by the preprocessor) calling `body`. With
/// `lanes` (a lane function, lane_emitter.hpp), the host entry's dense path runs blocks of
/// KJ_LANES threads through it and the rest through the strided body, or through `tail` when
/// given (a function `(dim, kj_begin, kj_end, <params as lanes takes them>)` running those
/// threads one at a time). `block`: the lanes per block (a prelude macro). `fence`: the lane
/// function writes non-temporal block stores, which the entry fences before it returns.
void emit_entry_points(SourceWriter& w, const std::string& entry, const std::string& body,
                       const std::vector<EntryParam>& params, const std::string& lanes = "",
                       const std::string& tail = "", const std::string& block = "KJ_LANES",
                       bool fence = false);

}  // namespace kjit::codegen
