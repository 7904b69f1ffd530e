// kjit/compiler/kernel_description.hpp — meta.json's `kernels` field, parsed into typed,
// validated descriptions: what the runtime loads entry points by on a cache hit.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kjit::compiler {

/// One kernel parameter as codegen describes it.
struct ParamDescription {
  std::string name;
  std::string type;     ///< the parameter's type, e.g. "array<vec3f,1>" or "float32"
  std::string element;  ///< the element type (the type itself for values)
  std::string scalar;   ///< the scalar kind; empty for structs
  int ndim = 0;         ///< 0 for values
  int lanes = 1;
  bool differentiable = false;
  nlohmann::json layout;  ///< a struct's layout (name, size, align, fields); null otherwise
};

/// A checkpointed adjoint loop: the status code it reports an overflow with, and where it is.
struct LoopDescription {
  int status = 0;
  std::string loc;
};

/// An array parameter an entry point only adds into (codegen's private_adds): the cpu runtime
/// may give each thread of a launch a private copy of it.
struct PrivateAddDescription {
  int param = 0;  ///< position among the entry point's parameters (adjoint: kernel params, then adjoints)
  int adds = 0;   ///< add statements into it
  bool owned = false;  ///< every add at the thread's own element (no two threads share one)
};

/// One kernel of a module, as codegen described it when the entry was written.
struct KernelDescription {
  std::string name;
  std::vector<ParamDescription> params;
  int launch_ndim = 0;
  std::string forward;        ///< the forward entry point's name
  std::string adjoint;        ///< the adjoint entry point's name; empty when there is none
  std::string adjoint_error;  ///< why there is no adjoint (empty when there is one, or none asked)
  bool checks = false;        ///< device-side checks report through the status word
  unsigned dynamic_shared_forward = 0;  ///< dynamic shared bytes of each entry point's launch
  unsigned dynamic_shared_adjoint = 0;
  std::vector<LoopDescription> loops;
  std::vector<PrivateAddDescription> private_forward;  ///< arrays the forward only adds into
  std::vector<PrivateAddDescription> private_adjoint;  ///< arrays the adjoint only adds into
  /// Adjoint entry parameters (kernel params, then adjoints) the reverse sweep adds into plainly
  /// at each thread's own element (codegen's own_adds): a launch where another array argument
  /// shares one's memory makes those adds atomic or runs in index order.
  std::vector<int> own_adds;
};

/// Parses and validates a `kernels` field: an array of objects with every field of the right
/// type and range, names unique, entry points unique and distinct, loop status codes positive
/// and unique, private adds (optional) naming distinct array parameters of the entry point.
/// Returns "" and fills `out`, or says what is wrong (naming the kernel and field).
std::string parse_kernel_descriptions(const nlohmann::json& kernels, std::vector<KernelDescription>* out);

/// The entry points the descriptions name, in module order (forward, then adjoint when there
/// is one, per kernel): what codegen's entry_points() gives for the same module.
std::vector<std::string> described_entry_points(const std::vector<KernelDescription>& kernels);

/// Compares stored descriptions with what codegen expects of the module's kernels
/// (`expected`: codegen's describe_kernel per kernel, in order) on the fields that decide
/// which code runs and how arguments are read: name, parameters, launch dimensionality, entry
/// points and checks. Returns "" when they agree, else the first difference.
std::string compare_kernel_descriptions(const nlohmann::json& stored, const nlohmann::json& expected);

}  // namespace kjit::compiler
