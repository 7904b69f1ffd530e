// kjit/ffi/ffi.hpp — kjit kernels as XLA FFI targets: the handlers XLA calls, and the C++
// counterparts of Warp's jax_callable (a C++ function launching several kernels, with CUDA
// graph modes) and register_ffi_callback (a function with a typed view of the call).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kjit/ffi/xla_abi.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/launch.hpp"

/// Symbols the Python shim and XLA reach through dlsym / ctypes.
#define KJIT_FFI_EXPORT __attribute__((visibility("default")))

extern "C" {
/// Launch handlers (XLA_FFI_Handler) for platforms `cpu` and `CUDA`. Attributes:
/// `kjit_kernel` (string, the qualified kernel name), one typed attribute per static
/// parameter named after it, and optionally `kjit_launch_dims` (int array), `kjit_in_out`
/// (int array of parameter indices) and `kjit_block_dim` (int). Arguments: the kernel's
/// input arrays in order (in/out ones included); results: in/out arrays, then pure outputs.
KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_launch_cpu(kjit::xla::CallFrame* frame);
KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_launch_cuda(kjit::xla::CallFrame* frame);
/// Adjoint handlers: the same attributes; arguments: the input arrays (in/out ones holding the
/// values before the forward call), the pure outputs, then one cotangent per forward result
/// (in/out first); results: one gradient per differentiable input array, in order.
KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_adjoint_cpu(kjit::xla::CallFrame* frame);
KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_adjoint_cuda(kjit::xla::CallFrame* frame);
/// Mesh BVH handlers (kjit.jax.mesh): arguments points (P, 3) float32 and indices (3 F,)
/// int32; results bvh_bounds (2 C, 3) float32 and bvh_nodes (2 C + F,) int32, C =
/// 2 F - 1 (kjit/dsl/mesh.hpp's layout, zeros past the tree). Built on the host (on CUDA: the
/// inputs copied to the host and the results back, synchronizing XLA's stream).
KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_mesh_bvh_cpu(kjit::xla::CallFrame* frame);
KJIT_FFI_EXPORT kjit::xla::Error* kjit_xla_mesh_bvh_cuda(kjit::xla::CallFrame* frame);
}

namespace kjit::ffi {

/// Sets the XLA FFI API version (0.`minor`) every kjit handler declares in XLA's metadata probe
/// from now on, for the whole process: any of xla::kApiMinor (0.1, the default) to
/// xla::kMirroredApiMinor. XLA refuses a handler whose version it does not support (jaxlib
/// 0.7.2 takes exactly 0.1), so a registrar declares the version its XLA was built with when
/// kjit mirrors it (kjit.jax reads it from the jaxlib's c_api.h; docs/JAX.md). Throws
/// kjit::Error (User) for a version kjit does not mirror.
void declare_api_version(int minor);
/// The minor API version kjit's handlers declare now.
int declared_api_version();

/// Where an FFI target runs: XLA's platform names "cpu" and "CUDA".
enum class Platform { Cpu, Cuda };

/// How a callable's device work may be captured into CUDA graphs (Warp's GraphMode). On the
/// cpu platform every mode simply runs the callable (as None).
enum class GraphMode {
  None,          ///< never captured: the callable may synchronise, allocate or copy to the host
  Xla,           ///< XLA may capture the call into its own command buffers (the default)
  Kjit,          ///< kjit captures one graph per distinct set of buffer addresses, shapes and
                 ///< static values on XLA's stream, replays it on a hit (LRU, default bound 32)
  KjitStaged,    ///< kjit captures over stable staging buffers (per device, stream and shapes);
                 ///< the copies of the staged inputs in and outputs out are captured inside the
                 ///< graph as memcpy nodes, re-pointed at the call's buffers before each replay,
                 ///< so new XLA addresses reuse the graph (Warp's WARP_STAGED)
  KjitStagedEx,  ///< as KjitStaged, with the copies made on the stream around the replay,
                 ///< outside the graph (Warp's WARP_STAGED_EX)
};

/// "none", "xla", "kjit", "kjit_staged", "kjit_staged_ex".
const char* to_string(GraphMode mode);

/// Options of a registered callable.
struct CallableOptions {
  GraphMode graph_mode = GraphMode::Xla;
  /// Graphs kept per callable and device in the Kjit* modes (least recently used go first);
  /// 0 = unbounded.
  int graph_cache_max = 32;
  /// Kernels (qualified names, "demo::saxpy") whose modules are loaded on a device before the
  /// callable's first capture there. A module that is still missing at capture time makes
  /// that one call run eagerly instead (loading it); the next call captures.
  std::vector<std::string> preload_kernels;
  /// The staged modes: array parameters whose buffers are copied into staging buffers before
  /// the replay (inputs, in/out arrays) and out after it (outputs, in/out arrays). Unset: every
  /// input (resp. output). Unstaged arrays are used in place: their addresses are part of the
  /// graph's key, so a new address captures a new graph.
  std::optional<std::vector<std::string>> stage_in, stage_out;
};

namespace detail {
struct CallableAccess;  // fills a CallContext (ffi/src)
}  // namespace detail

/// What a callable receives: its arguments as arrays viewing XLA's buffers (and static values),
/// the device and the stream to launch on.
class CallContext {
 public:
  /// Arguments in parameter order: arrays view XLA's buffers (outputs included), values hold
  /// the static attributes.
  const std::vector<LaunchArg>& args() const { return args_; }
  /// The argument named `name`; a User error when there is none.
  const LaunchArg& arg(std::string_view name) const;
  /// The array argument named `name`.
  const NdArray& array(std::string_view name) const;
  /// Launch options placing work on this call's device and stream.
  const LaunchOptions& launch_options() const { return options_; }
  const Device& device() const { return *options_.device; }
  const Stream& stream() const { return options_.stream; }
  Platform platform() const { return platform_; }

  /// Launches `kernel` on this call's device and stream.
  void launch(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args) const {
    kjit::launch(kernel, dims, args, options_);
  }
  template <class... P>
  void launch(const Kernel<P...>& kernel, const Dims& dims, const std::vector<LaunchArg>& args) const {
    kjit::launch(kernel.def(), dims, args, options_);
  }

 private:
  friend struct detail::CallableAccess;
  std::vector<std::string> names_;
  std::vector<LaunchArg> args_;
  LaunchOptions options_;
  Platform platform_ = Platform::Cpu;
};

/// A C++ function launching kjit kernels, called by XLA.
using CallableFn = std::function<void(const CallContext&)>;

/// Registers `fn` as the callable `name` with parameters `params` (arrays and scalar values,
/// in order; the Python shim's jax_callable splits them into inputs and outputs as
/// jax_kernel does). Replaces a callable of the same name. Thread-safe.
void register_callable(const std::string& name, std::vector<KernelParam> params, CallableFn fn,
                       const CallableOptions& options = {});
/// Removes a callable; its graphs are released. False when there was none.
bool unregister_callable(const std::string& name);
/// The parameters of DSL types `Args...` (Array<Float>, Float, ...) named `names`.
template <class... Args>
std::vector<KernelParam> params(const std::vector<std::string>& names) {
  std::vector<ir::Type> types{kjit::detail::param_traits<Args>::type()...};
  if (names.size() != types.size())
    throw Error(ErrorKind::User, "kjit::ffi::params: " + std::to_string(names.size()) + " names for " +
                                     std::to_string(types.size()) + " parameter types");
  std::vector<KernelParam> out;
  for (size_t i = 0; i < types.size(); ++i) out.push_back({names[i], types[i]});
  return out;
}

/// Registers a callable while it lives (for static registration in a kernel library).
class CallableRegistration {
 public:
  CallableRegistration(std::string name, std::vector<KernelParam> params, CallableFn fn,
                       const CallableOptions& options = {})
      : name_(std::move(name)) {
    register_callable(name_, std::move(params), std::move(fn), options);
  }
  ~CallableRegistration() { unregister_callable(name_); }
  CallableRegistration(const CallableRegistration&) = delete;
  CallableRegistration& operator=(const CallableRegistration&) = delete;

 private:
  std::string name_;
};

/// Graphs cached by the Kjit* modes for `callable` (all callables when empty), all devices.
size_t graph_cache_size(const std::string& callable = "");
/// Releases the cached graphs of `callable` (all callables when empty) and the staging
/// buffers only they used.
void clear_graph_cache(const std::string& callable = "");
/// Changes the cache bound of `callable` (0 = unbounded), trimming it if needed.
void set_graph_cache_max(const std::string& callable, int max);

// --- generic callbacks (register_ffi_callback) -------------------------------------------

/// One buffer of a callback call.
struct BufferView {
  void* data = nullptr;
  xla::DataType dtype = xla::kInvalid;
  std::string dtype_name;   ///< "float32", ...
  std::vector<int64_t> shape;
  /// Bytes of one element (0 for types kjit has no size for).
  int element_bytes = 0;
  /// The buffer as a kjit array of `element` (vector/matrix elements take the inner dims);
  /// a User error when dtype and shape do not fit.
  NdArray as_array(const ir::Type& element, const Device& device) const;
};

/// A decoded attribute: a string, a number, an array of numbers, or a dictionary.
struct AttrValue {
  enum class Kind { String, Int, Float, IntArray, FloatArray, Dict } kind = Kind::Int;
  xla::DataType dtype = xla::kInvalid;  ///< numbers and arrays: XLA's element type
  std::string str;
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::map<std::string, AttrValue> dict;
};

/// What a callback receives: typed views of the call.
struct CallbackContext {
  std::vector<BufferView> inputs;
  std::vector<BufferView> outputs;
  std::map<std::string, AttrValue> attrs;
  Platform platform = Platform::Cpu;
  xla::ExecutionStage stage = xla::kExecute;
  Device device;         ///< cpu, or cuda:N of the call
  Stream stream;         ///< XLA's stream (wrapped) on CUDA
  const xla::CallFrame* frame = nullptr;  ///< the raw frame, for what the views do not cover
};

/// A callback. Throwing reports the error to XLA (kjit::Error kinds map to XLA codes).
using CallbackFn = std::function<void(CallbackContext&)>;

/// Registers `fn` under `name`; the Python shim's register_ffi_callback(name) makes it an
/// FFI target. `graph_compatible`: XLA may capture it on CUDA. Replaces an earlier one.
void register_callback(const std::string& name, CallbackFn fn, bool graph_compatible = true);
/// Removes a callback. False when there was none.
bool unregister_callback(const std::string& name);

/// The XLA handler of callback `name` on `platform` (a distinct function per registration);
/// nullptr when no such callback exists or every handler slot is taken.
xla::Handler* callback_handler(const std::string& name, Platform platform);
/// The XLA handler of callable `name` with `mode` on `platform`; nullptr when unknown.
xla::Handler* callable_handler(const std::string& name, GraphMode mode, Platform platform);

}  // namespace kjit::ffi
