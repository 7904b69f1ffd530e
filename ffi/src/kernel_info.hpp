// What the FFI handlers know about a kernel: its parameters as XLA sees them (dtype, rank,
// inner dims), how the kernel uses each array, whether it has an adjoint — prepared once per
// kernel and found by name through a lock-free per-thread cache.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kjit/ffi/xla_abi.hpp"
#include "kjit/ir/extent_facts.hpp"
#include "kjit/kernel.hpp"

namespace kjit::ffi::detail {

/// How a kernel body uses one array parameter (from its IR).
struct ArrayUse {
  bool loads = false;        ///< reads elements
  bool stores = false;       ///< overwrites elements
  bool accumulates = false;  ///< atomic add / sub
  bool other_atomics = false;  ///< atomic min, max, bitwise, exchange, compare-and-swap
};

/// One kernel parameter as the FFI sees it.
struct ParamInfo {
  std::string name;
  ir::Type type;           ///< the kjit type (an array type when ndim > 0)
  bool is_array = false;
  int ndim = 0;            ///< array dimensions (0 for values)
  int inner_rank = 0;      ///< XLA dims an element adds: 0 scalar, 1 vector, 2 matrix
  int inner[2] = {0, 0};   ///< those dims
  ir::Scalar scalar = ir::Scalar::F32;
  xla::DataType dtype = xla::kInvalid;  ///< the XLA element type of the buffer / attribute
  int element_bytes = 0;   ///< bytes of one element (value) as the ABI lays it out
  int lanes = 1;           ///< scalar components per element
  bool differentiable = false;
  ArrayUse use;
  /// The kernel parameter this one packs into: itself, or the struct whose field it is.
  int kparam = 0;
  /// A leaf of a flattened struct parameter (kernel parameter kparam): its index among the
  /// struct's leaves and its byte offset in the outermost struct; -1 for a parameter of its
  /// own. Its name is "param.field" ("param.inner.field" for a nested struct's field).
  int field = -1;
  int offset = 0;
  std::vector<std::string> path;     ///< the field names from the parameter down to the leaf
  std::vector<std::string> holders;  ///< the struct holding each step of `path` (outermost first)

  /// Whether the element is a user struct (KJIT_STRUCT), which the XLA FFI cannot pass.
  bool is_struct() const { return type.element().shape == ir::Shape::Struct; }
  /// XLA rank of an array argument (ndim + inner_rank), without batch dims.
  int rank() const { return ndim + inner_rank; }
  /// "float32", "vec3f", "mat33d": the element as messages name it.
  std::string element_str() const { return type.element().str(); }
  /// "(3,)" / "(3, 3)": the inner dims as Python prints a shape.
  std::string inner_str() const;
};

/// A kernel parameter as the FFI packs it: params[first, first + count) (a value struct whose
/// fields are arrays, plain values and such structs is one entry per leaf, the rest one entry).
struct PackedParam {
  int first = 0;
  int count = 1;
  int struct_bytes = 0;  ///< a flattened struct's size (0: not one)
};

/// A kernel prepared for the FFI. Never freed: handlers keep pointers to it.
struct KernelInfo {
  const KernelDef* def = nullptr;
  std::string name;
  /// The parameters as calls pass them: a value struct of arrays, plain values and such
  /// structs (a kjit::dsl::Mesh) flattened into its leaves ("mesh.points", "o.inner.w", ...),
  /// which XLA can pass.
  std::vector<ParamInfo> params;
  std::vector<PackedParam> packed;  ///< one per kernel parameter, in order
  std::vector<int> arrays;  ///< indices of the array parameters, in order
  int launch_ndim = 0;      ///< 0: any; 1..4: fixed by tid<N>()
  bool has_adjoint = false;
  std::string adjoint_error;  ///< why there is no adjoint (when there is none)
  int block_dim = 256;        ///< the module's default CUDA block size
  /// The unguarded accesses that bound a launch by the arrays' extents (indexed as params;
  /// struct fields have none).
  ir::ExtentFacts extents;
  std::string json;           ///< the signature the Python shim reads

  /// "x, y, out": the names of the parameters at `indices`.
  std::string names(const std::vector<int>& indices) const;
};

/// A parameter as the FFI sees it (no IR uses recorded).
ParamInfo param_info(const KernelParam& p);

/// A parameter in the signature JSON the Python shim reads: name, kind ("array", "value"),
/// type, ndim, dtype (null for a struct), inner dims, differentiable, supported (false for
/// structs).
nlohmann::json param_json(const ParamInfo& p);

/// The prepared kernel named `name`. Lock-free after the first call per thread and name;
/// throws a NOT_FOUND HandlerError naming the kernel and the loaded libraries' kernels when
/// there is no such kernel.
const KernelInfo& kernel_info(std::string_view name);

/// The signature JSON of every kernel the process has (an array, sorted by name).
std::string all_kernels_json();

}  // namespace kjit::ffi::detail
