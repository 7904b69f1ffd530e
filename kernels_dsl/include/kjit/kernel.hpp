// kjit/kernel.hpp — kernel definitions: KernelDef (name, module, signature, lazily traced IR),
// the typed Kernel<Args...> handle users launch, and the module registry.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kjit/dsl/array.hpp"
#include "kjit/dsl/tracer.hpp"
#include "kjit/ir/ir.hpp"
#include "kjit/module_options.hpp"

namespace kjit {

/// A kernel parameter as launches and the FFI see it.
struct KernelParam {
  std::string name;
  ir::Type type;  ///< an array type (ndim > 0) or a value type
};

/// Everything kjit knows about one kernel. Registered in the module registry while it lives.
class KernelDef {
 public:
  /// Traces the body into `fn`, whose params are already set; runs under an active Tracer.
  using TraceFn = std::function<void(ir::Function& fn)>;

  KernelDef(std::string name, std::string module, std::vector<KernelParam> params,
            ir::SourceLoc loc, TraceFn trace);
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
  TraceFn trace_;
  mutable std::once_flag traced_;
  mutable std::unique_ptr<ir::Function> fn_;
  mutable std::atomic<int> block_dim_{0};
};

/// A kernel handle typed by the body's parameters: what `kjit::launch` takes.
template <class... Args>
class Kernel {
 public:
  explicit Kernel(const KernelDef* def) : def_(def) {}
  const KernelDef& def() const { return *def_; }
  const std::string& name() const { return def_->name(); }
  static constexpr size_t arity = sizeof...(Args);
  /// The kernel's own CUDA block size (see KernelDef::set_block_dim):
  /// `demo::reduce.set_block_dim(128);`
  void set_block_dim(int threads) const { def_->set_block_dim(threads); }

 protected:
  const KernelDef* def_;
};

/// A set of kernels compiled together into one artifact.
class ModuleDef {
 public:
  explicit ModuleDef(std::string name) : name_(std::move(name)) {}
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
  std::string name_;
  mutable std::mutex mutex_;
  std::vector<const KernelDef*> kernels_;
  ModuleOptions options_;
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

template <class A> struct param_traits;
template <class T> struct param_traits<dsl::Value<T>> {
  static ir::Type type() { return dsl::Value<T>::ir_type(); }
  static dsl::Value<T> make(ir::ValueId id) { return dsl::Value<T>(dsl::detail::BoundTag{}, id); }
};
template <class T, int N> struct param_traits<dsl::ArrayHandle<T, N>> {
  static ir::Type type() { return dsl::ArrayHandle<T, N>::ir_type(); }
  static dsl::ArrayHandle<T, N> make(ir::ValueId id) {
    return dsl::ArrayHandle<T, N>(dsl::detail::BoundTag{}, id);
  }
};

/// Builds the trace callback for a body taking DSL parameters `Args...`.
template <class... Args>
KernelDef::TraceFn make_trace(std::function<void(Args...)> body) {
  return [body = std::move(body)](ir::Function& fn) {
    auto& t = dsl::detail::Tracer::get(dsl::Loc{fn.loc.file, fn.loc.line});
    int64_t k = 0;
    auto param = [&](ir::Type type) {
      return t.emit(ir::Op::Param, type, {}, k++, dsl::Loc{fn.loc.file, fn.loc.line});
    };
    std::tuple<std::decay_t<Args>...> handles{
        param_traits<std::decay_t<Args>>::make(param(param_traits<std::decay_t<Args>>::type()))...};
    std::apply(body, handles);
  };
}

/// Owns a registered kernel definition; a Kernel handle to it.
template <class... Args>
class KernelRegistration : public Kernel<Args...> {
 public:
  KernelRegistration(std::string name, std::string module, std::vector<std::string> names,
                     ir::SourceLoc loc, std::function<void(Args...)> body)
      : Kernel<Args...>(nullptr) {
    std::vector<KernelParam> params;
    std::vector<ir::Type> types{param_traits<std::decay_t<Args>>::type()...};
    for (size_t i = 0; i < types.size(); ++i) params.push_back({names.at(i), types[i]});
    owned_ = std::make_unique<KernelDef>(std::move(name), std::move(module), std::move(params),
                                         loc, make_trace<Args...>(std::move(body)));
    this->def_ = owned_.get();
  }
  KernelRegistration(KernelRegistration&&) = default;

 private:
  std::unique_ptr<KernelDef> owned_;
};

template <class... Args>
KernelRegistration<Args...> register_kernel(void (*body)(Args...), const char* pretty,
                                            const char* params_text, const char* module,
                                            const char* file, int line) {
  return KernelRegistration<Args...>(
      kernel_name_from_signature(pretty), module ? module : default_module_name(file),
      parameter_names(params_text, sizeof...(Args)), ir::SourceLoc{file, line},
      std::function<void(Args...)>(body));
}

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
  return detail::KernelRegistration<Args...>(std::move(name), std::move(module),
                                             std::move(param_names),
                                             ir::SourceLoc{loc.file, loc.line},
                                             std::function<void(Args...)>(std::forward<Body>(body)));
}

}  // namespace kjit

/// The module of the kernels that follow in this namespace (default: the header's file stem).
#define KJIT_MODULE(NAME) \
  inline const char* kjit_module_name() { return #NAME; }

/// Fallback when no KJIT_MODULE is in scope: the file stem is used.
inline const char* kjit_module_name(...) { return nullptr; }

/// Defines a kernel in a header: KJIT_KERNEL(name, (Array<Float> x, Float a)) { body }
/// The body is ordinary C++ over DSL values; it is traced once, lazily. `name` becomes a
/// kjit::Kernel handle; the kernel registers itself when the program or library loads.
#define KJIT_KERNEL(NAME, PARAMS)                                                          \
  inline void NAME##_kjit_body PARAMS;                                                     \
  struct NAME##_kjit_tag {                                                                 \
    static const char* where() { return __PRETTY_FUNCTION__; }                             \
  };                                                                                       \
  inline const auto NAME = ::kjit::detail::register_kernel(                                \
      &NAME##_kjit_body, NAME##_kjit_tag::where(), #PARAMS, kjit_module_name(), __FILE__,  \
      __LINE__);                                                                           \
  inline void NAME##_kjit_body PARAMS

/// Gives the kernel NAME, defined above in the same header, its own CUDA block size (1 to
/// 1024 threads), used unless a launch says otherwise (LaunchOptions::block_dim):
///   KJIT_KERNEL(reduce_rows, (Array<Float, 2> m, Array<Float> out)) { ... }
///   KJIT_BLOCK_DIM(reduce_rows, 128);
#define KJIT_BLOCK_DIM(NAME, THREADS)                                                       \
  static_assert((THREADS) >= 1 && (THREADS) <= 1024,                                       \
                "KJIT_BLOCK_DIM(" #NAME "): a CUDA block has 1 to 1024 threads");          \
  inline const bool NAME##_kjit_block_dim = (NAME.set_block_dim(THREADS), true)
