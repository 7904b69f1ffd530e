// A kernel call decoded from an XLA call frame: the frame's layout matched to the kernel's
// parameters, every buffer and attribute validated, the parameters packed in the kernel ABI
// (kjit/abi.h) — ready to dispatch, once per vmap batch item.
#pragma once

#include <cstdint>

#include "frame.hpp"
#include "kernel_info.hpp"
#include "kjit/abi.h"
#include "kjit/runtime/internal/value_sums.hpp"

namespace kjit::ffi::detail {

/// Attribute names of kjit's handlers (besides one typed attribute per static parameter).
inline constexpr const char* kAttrKernel = "kjit_kernel";          ///< string: qualified name
inline constexpr const char* kAttrLaunchDims = "kjit_launch_dims"; ///< int array (optional)
inline constexpr const char* kAttrInOut = "kjit_in_out";           ///< int array of param indices
inline constexpr const char* kAttrBlockDim = "kjit_block_dim";     ///< int (optional, CUDA)
/// int array (optional): the value parameters whose values are buffers (traced JAX values)
/// rather than attributes, in increasing order; they follow the call's other operands.
inline constexpr const char* kAttrTraced = "kjit_traced";
/// int array (optional): every array parameter, in the order the call passes them (input
/// operands, then pure outputs); default: the kernel's order. Tangent kernels need it: their
/// outputs (the kernel's, then their tangents) are not the last array parameters.
inline constexpr const char* kAttrArrayOrder = "kjit_array_order";

/// Largest number of kernel parameters the FFI packs (forward and adjoint together: 2x).
constexpr int kMaxParams = 64;
/// Largest number of vmap batch dims.
constexpr int kMaxBatchRank = 4;

/// A pointer in the packed parameters that moves per batch item: an array descriptor's data,
/// a traced value's kj::value_t::ptr, a value adjoint's destination.
struct BatchedPointer {
  void** where = nullptr;             ///< inside Plan::storage
  char* base = nullptr;               ///< data of batch item 0
  int64_t batch_stride[kMaxBatchRank] = {};  ///< bytes per batch index (0: broadcast)
};

/// The adjoint slot of a traced, differentiable value parameter: it holds the destination of
/// the parameter's gradient (a result buffer), which the cpu handler hands to ValueSums. For a
/// traced plain leaf of a flattened struct the slot is the struct's, and the leaf's gradient
/// is the struct's sum's bytes [offset, offset + bytes), added into `destination`.
struct ValueGradient {
  void** slot = nullptr;  ///< inside Plan::storage
  ir::Type type;          ///< the parameter's type (the struct's, for a leaf)
  int offset = -1;        ///< a struct leaf's byte offset in the struct; -1: the whole value
  size_t bytes = 0;       ///< a struct leaf's bytes
  void* destination = nullptr;  ///< a struct leaf's result buffer (moves with the batch item)
};

/// A traced plain leaf of a flattened struct: the struct travels by value in the launch's
/// parameters, so the cpu handler copies the leaf's value there before each batch item.
struct LeafCopy {
  unsigned char* dst = nullptr;  ///< inside Plan::storage: the leaf in its struct's value
  void* src = nullptr;           ///< the leaf's buffer (moves with the batch item)
  size_t bytes = 0;
  int param = 0;                 ///< the leaf, for messages
};

/// A buffer to set before the launch: zeroed, or filled with a copy of `src`.
struct Fill {
  void* dst = nullptr;
  const void* src = nullptr;  ///< nullptr: zero
  size_t bytes = 0;
};

/// A decoded, validated and packed kernel call.
struct Plan {
  const KernelInfo* kernel = nullptr;
  bool adjoint = false;
  kj::launch_bounds_t bounds{};
  int block_dim = 0;  ///< 0: the kernel's own, else its module's

  int batch_rank = 0;
  int64_t batch_dims[kMaxBatchRank] = {};
  int64_t batch_count = 1;

  BatchedPointer batched[2 * kMaxParams];  ///< at most one primal and one adjoint per parameter
  int batched_count = 0;
  ValueGradient value_grads[kMaxParams];
  int value_grad_count = 0;
  LeafCopy leaf_copies[kMaxParams];
  int leaf_copy_count = 0;
  kjit::detail::ValueSums sums;  ///< the cpu's partial sums, reused from call to call
  Fill fills[2 * kMaxParams];
  int fill_count = 0;

  void* pointers[1 + 2 * kMaxParams];  ///< the packed parameters, as cuLaunchKernel takes them
  int pointer_count = 0;
  /// One slot per parameter: a value slot of the largest value (a kjit::dsl::Mesh, 360 bytes).
  alignas(16) unsigned char storage[1 + 2 * kMaxParams][528];

  /// Points every batched pointer at batch item `b`.
  void select_batch(int64_t b);
  /// Copies the traced struct leaves of the selected batch item into their structs (host
  /// memory: the cpu only).
  void copy_leaves() const;
};

/// The start of a handler's error messages ("kjit kernel 'demo::saxpy': "), built only when
/// an error is reported: the hot path allocates nothing.
struct Where {
  const char* what;          ///< "kjit kernel '", "kjit adjoint of kernel '", "kjit callable '"
  const std::string* name;   ///< the kernel's or callable's name
  std::string str() const { return what + *name + "': "; }
};
inline std::string operator+(const Where& w, const std::string& s) { return w.str() + s; }
inline std::string operator+(const Where& w, const char* s) { return w.str() + s; }

/// Rejects struct parameter `p` (INVALID_ARGUMENT naming it, its `role` and its struct).
[[noreturn]] void struct_param(const Where& pre, const ParamInfo& p, const char* role);
/// Checks buffer `b` against parameter `p` (dtype, rank, inner dims, data); returns its
/// number of leading batch dims. Messages start with `pre` and name the `role` ("output", ...).
int check_array(const Where& pre, const ParamInfo& p, const xla::Buffer& b, const char* role);
/// Reads static parameter `p` from its typed attribute in `attrs` into `out`.
void read_static(const Where& pre, const xla::Attrs& attrs, const ParamInfo& p, unsigned char* out);

/// Decodes the forward call of `frame`: args = the kernel's input arrays (in/out ones
/// included), then the traced values (kjit_traced); rets = in/out arrays then pure outputs;
/// the other value parameters as typed attributes.
void plan_forward(const xla::CallFrame* frame, Plan& plan);

/// Decodes the adjoint call of `frame`: args = input arrays, pure outputs, one cotangent per
/// result of the forward call (in/out first), then the traced values; rets = one gradient
/// per differentiable input array, then one per differentiable traced value (its adjoint
/// summed over the launch's threads). Static values carry no cotangent.
void plan_adjoint(const xla::CallFrame* frame, Plan& plan);

}  // namespace kjit::ffi::detail
