// kjit/kernel.hpp — kernel definitions: KernelDef (name, module, signature, lazily traced IR),
// the module registry, and make_kernel (kernels defined at run time). The typed Kernel<Args...>
// handle and KJIT_KERNEL are in kjit/dsl/kernel_handle.hpp, which kernel headers reach.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kjit/dsl/kernel_handle.hpp"
#include "kjit/error.hpp"
#include "kjit/module_options.hpp"

namespace kjit::ir {
struct Function;
}

namespace kjit {

/// A kernel parameter as launches and the FFI see it.
struct KernelParam {
  std::string name;
  ir::Type type;  ///< an array type (ndim > 0) or a value type
};

/// Everything kjit knows about one kernel. Registered in the module registry while it lives.
class KernelDef {
 public:
  /// A kernel whose IR `body` traces (given handles to the parameters), once, on first use.
  KernelDef(std::string name, std::string module, std::vector<KernelParam> params,
            ir::SourceLoc loc, detail::KernelBody body);
  /// A kernel whose IR is given, verified, rather than traced: a kernel derived from another
  /// one (its tangent kernel, kjit/codegen/tangent.hpp). Name, parameters and location are
  /// the IR's; it joins `module`.
  KernelDef(std::unique_ptr<ir::Function> fn, std::string module);
  ~KernelDef();
  KernelDef(const KernelDef&) = delete;
  KernelDef& operator=(const KernelDef&) = delete;

  /// Qualified C++ name, e.g. "demo::springs".
  const std::string& name() const { return name_; }
  /// Name of the module the kernel belongs to.
  const std::string& module() const { return module_; }
  const std::vector<KernelParam>& params() const { return params_; }
  /// Where KJIT_KERNEL was written.
  ir::SourceLoc loc() const { return loc_; }

  /// The traced and verified IR. The first call traces (once, thread-safe); a tracing error
  /// is thrown to every caller as a User error naming the kernel and the line.
  const ir::Function& ir() const;

  /// Threads per CUDA block of this kernel's launches; 0 (the default): the module's
  /// ModuleOptions::block_dim. LaunchOptions::block_dim overrides it per launch.
  int block_dim() const { return block_dim_.load(std::memory_order_relaxed); }
  /// Sets block_dim(): 1 to 1024 threads, or 0 for the module's. A launch setting, not part of
  /// the kernel's identity (no artifact changes), so it may change at any time, from any
  /// thread, even on a `const` kernel handle. Other values are a User error naming the kernel.
  void set_block_dim(int threads) const;

  /// Opaque per-kernel state owned by the runtime (its lock-free launch path caches here).
  mutable std::atomic<void*> runtime_state{nullptr};
  /// Frees runtime_state when the kernel is destroyed (kernels made at run time come and go);
  /// the runtime sets it before it publishes the state.
  mutable std::atomic<void (*)(void*)> runtime_state_deleter{nullptr};

 private:
  std::string name_;
  std::string module_;
  std::vector<KernelParam> params_;
  ir::SourceLoc loc_;
  struct Trace;  ///< the body, the once-flag and the traced IR (kernel_def.cpp)
  Trace* trace_;
  mutable std::atomic<int> block_dim_{0};
};

/// A set of kernels compiled together into one artifact.
class ModuleDef {
 public:
  explicit ModuleDef(std::string name);
  ~ModuleDef();
  ModuleDef(const ModuleDef&) = delete;
  ModuleDef& operator=(const ModuleDef&) = delete;
  const std::string& name() const { return name_; }
  /// The module's kernels, sorted by name.
  std::vector<const KernelDef*> kernels() const;
  ModuleOptions options() const;
  /// Changes the options; later builds of the module use them.
  void set_options(const ModuleOptions& options);
  /// Increases whenever kernels or options change.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  friend class Registry;
  struct State;  ///< the lock, the kernels and the options (kernel_def.cpp)
  std::string name_;
  State* state_;
  std::atomic<uint64_t> generation_{0};
};

/// All kernels and modules of the process. Kernel libraries fill it while they load.
class Registry {
 public:
  /// The process-wide registry.
  static Registry& get();
  /// The module named `name`, created on first use.
  ModuleDef& module(const std::string& name);
  /// The module named `name`, or nullptr.
  const ModuleDef* find_module(std::string_view name) const;
  /// The kernel with qualified name `name`, or nullptr.
  const KernelDef* find_kernel(std::string_view name) const;
  /// Every module, sorted by name.
  std::vector<const ModuleDef*> modules() const;
  /// Every kernel, sorted by name.
  std::vector<const KernelDef*> kernels() const;

  void add(const KernelDef* k);
  void remove(const KernelDef* k);

 private:
  Registry() = default;
  struct State;
  State& state() const;
};

/// The module named `name` (created on first use): set its options before it is built.
inline ModuleDef& module(const std::string& name) { return Registry::get().module(name); }

namespace detail {

/// "demo::springs" from the __PRETTY_FUNCTION__ of the kernel's tag struct.
std::string kernel_name_from_signature(const char* pretty_function);
/// Parameter names from the stringised parameter list "(Array<Float> x, Float a)".
std::vector<std::string> parameter_names(const char* params_text, size_t expected);
/// The default module of a kernel defined in `file`: the file's stem ("springs").
std::string default_module_name(const char* file);

/// Defines and registers a kernel named `name` in `module` with parameters `names` (of
/// `types`), defined at `loc` (make_kernel).
const KernelDef* define_named_kernel(std::string name, std::string module,
                                     std::vector<std::string> names, const ir::Type* types,
                                     dsl::Loc loc, KernelBody body);

}  // namespace detail

/// Defines and registers a kernel from a callable taking DSL parameters, at run time:
///   auto k = kjit::make_kernel<Array<double>, Double>("tests::scale", "tests", {"x", "s"},
///                                                     [](Array<double> x, Double s) {...});
/// The kernel stays registered while the returned object lives.
template <class... Args, class Body>
detail::KernelRegistration<Args...> make_kernel(std::string name, std::string module,
                                                std::vector<std::string> param_names, Body&& body,
                                                dsl::Loc loc = dsl::Loc::here()) {
  if (param_names.size() != sizeof...(Args))
    throw Error(ErrorKind::User, "make_kernel('" + name + "'): " +
                                     std::to_string(param_names.size()) + " names for " +
                                     std::to_string(sizeof...(Args)) + " parameters");
  const ir::Type types[] = {detail::param_traits<std::decay_t<Args>>::type()..., ir::Type{}};
  return detail::KernelRegistration<Args...>(detail::define_named_kernel(
      std::move(name), std::move(module), std::move(param_names), types, loc,
      detail::KernelBodyOf<std::decay_t<Body>, Args...>::make(std::forward<Body>(body))));
}

}  // namespace kjit
