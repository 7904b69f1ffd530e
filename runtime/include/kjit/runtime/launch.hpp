// kjit/runtime/launch.hpp — launching kernels forward, backward (adjoint) and in forward mode
// (tangent) on a device.
#pragma once

#include <cstring>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "kjit/dsl/kernel_handle.hpp"  // Kernel<P...>; KernelDef's members are in kjit/kernel.hpp
#include "kjit/runtime/ndarray.hpp"

namespace kjit {

/// The extent of a launch: `n`, or `{rows, cols}`, up to four dimensions.
class Dims {
 public:
  Dims(int64_t n) : shape_{n} {}
  Dims(int n) : shape_{int64_t(n)} {}
  Dims(size_t n) : shape_{int64_t(n)} {}
  Dims(std::initializer_list<int64_t> shape) : shape_(shape) {}
  explicit Dims(Shape shape) : shape_(std::move(shape)) {}
  const Shape& shape() const { return shape_; }
  int ndim() const { return int(shape_.size()); }
  /// The number of threads; a User error naming the dims when the product overflows 64 bits.
  int64_t size() const;

 private:
  Shape shape_;
};

/// One argument of a launch: an array, a value of an element type (float, int32_t,
/// kjit::vec3f, ...), or absent (`{}`: no gradient array, no value adjoint). In an adjoint
/// launch's slot of a value parameter: where the parameter's gradient goes — a one-element
/// array of its type on the launch's device, or (cpu launches) a pointer to host memory.
class LaunchArg {
 public:
  /// Absent.
  LaunchArg() = default;
  LaunchArg(const NdArray& array);
  /// Where a value parameter's adjoint (its sum over the launch's threads) is added: `&dk`
  /// for a `Double k`. Host memory, so for cpu launches; on CUDA pass a one-element array.
  template <class T, std::enable_if_t<type_traits<T>::known, int> = 0>
  LaunchArg(T* destination) : kind_(Kind::Destination), type_(ir_type_of<T>()), destination_(destination) {}
  /// A value; arithmetic values convert to the parameter's scalar type when that loses
  /// nothing (an integer into a float parameter, a double into a float one).
  template <class T, std::enable_if_t<type_traits<T>::known, int> = 0>
  LaunchArg(const T& value) : kind_(Kind::Value), type_(ir_type_of<T>()) {
    static_assert(sizeof(T) <= kMaxValueBytes, "kjit: launch value too large");
    set_bytes(&value, sizeof(T));
  }

  /// An object kernels take as a struct (kjit::HashGrid): the struct its launch_value() makes,
  /// which refuses an object that is not built or was freed. The launch is refused when it
  /// runs on another device than the object's.
  template <class T, class V = decltype(std::declval<const T&>().launch_value()),
            std::enable_if_t<!type_traits<T>::known, int> = 0>
  LaunchArg(const T& object) : LaunchArg(object.launch_value()) {
    object_ = T::kObjectName;
    object_device_ = object.device();
  }

  /// A value of type `type` from its bytes (`type.element_bytes()` of them), for code that
  /// knows types only at run time (gradient checks, the FFI).
  static LaunchArg from_bytes(const ir::Type& type, const void* bytes);

  bool absent() const { return kind_ == Kind::Absent; }
  bool is_array() const { return kind_ == Kind::Array; }
  /// A host pointer given as an adjoint destination (null otherwise).
  void* destination() const { return destination_; }
  const NdArray& array() const { return array_; }
  /// The value's type (for arrays: the array type).
  const ir::Type& type() const { return type_; }
  const void* bytes() const { return large_ ? large_ : small_; }
  /// For an object's struct: the object's kind ("kjit::HashGrid"), else null.
  const char* object() const { return object_; }
  /// The device an object's arrays live on (cpu for everything else).
  const Device& object_device() const { return object_device_; }

  /// The largest value: a struct of fourteen array fields (a 6x6 float64 matrix is 288 bytes;
  /// kjit::dsl::Mesh, seven arrays, 504; Warp's diffray RenderMesh, a Mesh and five arrays, 864).
  static constexpr size_t kMaxValueBytes = 1024;

 private:
  /// Keeps a copy of the value's `n` bytes.
  void set_bytes(const void* bytes, size_t n);

  enum class Kind : uint8_t { Absent, Array, Value, Destination };
  Kind kind_ = Kind::Absent;
  NdArray array_;
  ir::Type type_;
  void* destination_ = nullptr;
  const char* object_ = nullptr;
  Device object_device_;
  // Scalars and small vectors inline, larger values (matrices, transforms) shared by copies:
  // every launch copies its arguments into a vector, and 4 arguments of 464 bytes each were
  // past the allocator's per-thread cache, whose slower path costs more once a process has a
  // second thread (the pool's): a 1 Ki launch took 10-15 ns longer on the pool than alone.
  alignas(16) unsigned char small_[32];  // only the value's own bytes are ever read
  const unsigned char* large_ = nullptr;  // owned by large_owner_
  detail::SharedResource large_owner_;
};

/// Where and how a launch runs.
struct LaunchOptions {
  /// The device; by default the device of the array arguments (cpu if there are none).
  std::optional<Device> device;
  /// The stream (CUDA); the device's default stream when unset.
  Stream stream;
  /// Threads per CUDA block; 0 = the module's block_dim.
  int block_dim = 0;
  /// The same bits for any thread count and schedule (Warp's wp.config.deterministic): on the
  /// cpu an entry point with atomic updates (float adds, min, max, counters whose returned
  /// slot is used; every adjoint, which adds gradients) runs its threads in index order; on
  /// CUDA such a launch is refused with a User error. Also on for every launch when
  /// set_deterministic(true) was called or KJIT_DETERMINISTIC=1 is set.
  bool deterministic = false;
  /// Warp's record_tape: false keeps this launch off every tape recording on the thread (a
  /// solver whose adjoint a recorded function gives, Tape::record_func). Its writes of arrays
  /// a tape watches are still noted.
  bool record_tape = true;
};

/// Makes every launch deterministic (LaunchOptions::deterministic), or stops; the default is
/// KJIT_DETERMINISTIC=1 in the environment.
void set_deterministic(bool on);
/// Whether every launch is deterministic (set_deterministic / KJIT_DETERMINISTIC).
bool deterministic_launches();

/// Runs `kernel` forward over `dims`, checking the arguments against its parameters (count,
/// array element types and dimensionality, value types, devices); a mismatch is a User error
/// naming the kernel and the parameter.
void launch(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
            const LaunchOptions& options = {});

/// Runs `kernel`'s adjoint: `args` as in the forward launch, `adj_args` one per parameter:
/// for an array a gradient array of its shape; for a value where its gradient goes (a
/// one-element array of its type, or on the cpu a pointer `&dk` to one); `{}` for none (a
/// zero value means none too). Gradients are added (zero them first for a fresh gradient);
/// a value's is the sum over the launch's threads of each thread's adjoint. Throws a User
/// error when the kernel has no adjoint (saying why) or a loop exceeded its checkpoint bound.
void launch_adjoint(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
                    const std::vector<LaunchArg>& adj_args, const LaunchOptions& options = {});

/// The tangent (forward-mode) kernel of `kernel` (docs/AUTODIFF.md, "Forward mode"): a
/// kernel of its own, named "<name>.tangent" in module "<module>.tangent", whose parameters
/// are the kernel's followed by one tangent per parameter (an array's tangent is an array of
/// its shape, a value's a value of its type; non-differentiable slots are never read), and
/// whose launch runs the kernel and writes the tangents of what it writes. launch,
/// launch_adjoint (second derivatives) and check_gradients take it like any kernel. Made on
/// first use with the tangents of every kernel of the module (compiled together, on the first
/// launch of one of them); a User error naming the line when forward mode refuses the kernel.
const KernelDef& tangent_of(const KernelDef& kernel);
template <class... P>
const KernelDef& tangent_of(const Kernel<P...>& kernel) { return tangent_of(kernel.def()); }

/// The kernel named `name`, for callers that know kernels by name only (the FFI handlers,
/// from the names the JAX shim sends): "<kernel>.tangent" is tangent_of the kernel named
/// "<kernel>" (recursively: "<kernel>.tangent.tangent" is forward over forward), made on first
/// use, so a tangent kernel is found before anything in the process has asked for it; any
/// other name is Registry::find_kernel's. nullptr when there is no such kernel; tangent_of's
/// User error when forward mode refuses the kernel.
const KernelDef* find_kernel_or_tangent(std::string_view name);

/// Runs the tangent kernel of `kernel`: `args` as in the forward launch, `tangents` one per
/// parameter: the direction for an input (an array of the array's shape, a value of the
/// value's type: a struct's array fields hold the arrays' directions or output tangents, an
/// unset one is zeros), the array that receives the tangent of an output, or `{}` (a zero
/// direction, an output tangent not wanted, or a non-differentiable parameter: kjit lends the
/// launch zeros, or scratch memory, that the calling thread keeps for its tangent launches).
/// The launch does
/// what `launch` does (it writes the outputs) and writes the tangent of every value stored
/// into an output array's tangent; `atomic_add` adds the tangents of its operands to what the
/// output's tangent array holds (pass the tangent of the output's initial contents, zeros for
/// a zeroed output). It replaces a forward launch: do not run both.
void launch_tangent(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
                    const std::vector<LaunchArg>& tangents, const LaunchOptions& options = {});
template <class... P>
void launch_tangent(const Kernel<P...>& kernel, const Dims& dims, std::vector<LaunchArg> args,
                    std::vector<LaunchArg> tangents, const LaunchOptions& options = {}) {
  launch_tangent(kernel.def(), dims, args, tangents, options);
}

/// `kjit::launch(demo::saxpy, n, x, y, 2.0f, out)`
template <class... P, class... A>
void launch(const Kernel<P...>& kernel, const Dims& dims, const A&... args) {
  launch(kernel.def(), dims, std::vector<LaunchArg>{LaunchArg(args)...});
}

/// `kjit::launch_adjoint(demo::saxpy, n, {x, y, 2.0f, out}, {adj_x, adj_y, &adj_a, adj_out})`
template <class... P>
void launch_adjoint(const Kernel<P...>& kernel, const Dims& dims, std::vector<LaunchArg> args,
                    std::vector<LaunchArg> adj_args, const LaunchOptions& options = {}) {
  launch_adjoint(kernel.def(), dims, args, adj_args, options);
}

/// The adjoint launch with each array's own gradient buffer as its adjoint (arrays without
/// one get none): `kjit::launch_adjoint_grads(demo::saxpy, n, x, y, 2.0f, out)`.
void launch_adjoint_grads(const KernelDef& kernel, const Dims& dims,
                          const std::vector<LaunchArg>& args, const LaunchOptions& options = {});
template <class... P, class... A>
void launch_adjoint_grads(const Kernel<P...>& kernel, const Dims& dims, const A&... args) {
  launch_adjoint_grads(kernel.def(), dims, std::vector<LaunchArg>{LaunchArg(args)...});
}

}  // namespace kjit
