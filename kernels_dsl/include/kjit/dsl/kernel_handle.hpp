// kjit/dsl/kernel_handle.hpp — KJIT_KERNEL and the typed Kernel<Args...> handle that launches
// take. The definition itself (KernelDef: name, module, parameters, lazily traced IR) lives in
// kernels_dsl/src and in kjit/kernel.hpp; kernel headers reach it only through this light API.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "kjit/dsl/array.hpp"

namespace kjit {

class KernelDef;

/// A kernel handle typed by the body's parameters: what `kjit::launch` takes.
template <class... Args>
class Kernel {
 public:
  explicit Kernel(const KernelDef* def) : def_(def) {}
  /// The definition (kjit/kernel.hpp, which <kjit/kjit.hpp> includes, has its members).
  const KernelDef& def() const { return *def_; }
  /// The qualified name, e.g. "demo::springs" (needs kjit/kernel.hpp).
  template <class D = KernelDef>
  const auto& name() const { return static_cast<const D*>(def_)->name(); }
  static constexpr size_t arity = sizeof...(Args);
  /// The kernel's own CUDA block size (see KernelDef::set_block_dim):
  /// `demo::reduce.set_block_dim(128);`
  void set_block_dim(int threads) const;

 protected:
  const KernelDef* def_;
};

namespace detail {

/// How the definition traces a kernel body: `trace(body, params)` calls the body with handles
/// for the parameter values `params` (already emitted); `destroy(body)` frees the body.
struct KernelBody {
  void (*trace)(void* body, const ir::ValueId* params);
  void* body;
  void (*destroy)(void* body);
};

/// Defines and registers a kernel from KJIT_KERNEL's texts: the tag's __PRETTY_FUNCTION__
/// (the qualified name), the parameter list as written (the names), the module (nullptr: the
/// file's stem) and where it was written; `types` are the parameters' IR types.
const KernelDef* define_kernel(const char* pretty, const char* params_text, const char* module,
                               const char* file, int line, const ir::Type* types, size_t count,
                               KernelBody body);
/// Unregisters and frees a kernel made by define_kernel (or make_kernel).
void destroy_kernel(const KernelDef* def);
/// KernelDef::set_block_dim.
void set_kernel_block_dim(const KernelDef* def, int threads);

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

/// The KernelBody of callable `Body` (a function pointer or a lambda) taking `Args...`.
template <class Body, class... Args>
struct KernelBodyOf {
  template <size_t... I>
  static void call(Body& body, const ir::ValueId* params, std::index_sequence<I...>) {
    body(param_traits<std::decay_t<Args>>::make(params[I])...);
  }
  static void trace(void* body, const ir::ValueId* params) {
    call(*static_cast<Body*>(body), params, std::index_sequence_for<Args...>{});
  }
  static void destroy(void* body) { delete static_cast<Body*>(body); }
  static KernelBody make(Body body) { return KernelBody{&trace, new Body(std::move(body)), &destroy}; }
};

/// Owns a registered kernel definition; a Kernel handle to it.
template <class... Args>
class KernelRegistration : public Kernel<Args...> {
 public:
  explicit KernelRegistration(const KernelDef* def) : Kernel<Args...>(def) {}
  KernelRegistration(KernelRegistration&& o) : Kernel<Args...>(o.def_) { o.owned_ = false; }
  KernelRegistration(const KernelRegistration&) = delete;
  KernelRegistration& operator=(const KernelRegistration&) = delete;
  ~KernelRegistration() {
    if (owned_) destroy_kernel(this->def_);
  }

 private:
  bool owned_ = true;
};

template <class... Args>
KernelRegistration<Args...> register_kernel(void (*body)(Args...), const char* pretty,
                                            const char* params_text, const char* module,
                                            const char* file, int line) {
  const ir::Type types[] = {param_traits<std::decay_t<Args>>::type()..., ir::Type{}};
  using Fn = void (*)(Args...);
  return KernelRegistration<Args...>(define_kernel(pretty, params_text, module, file, line, types,
                                                   sizeof...(Args), KernelBodyOf<Fn, Args...>::make(body)));
}

}  // namespace detail

template <class... Args>
void Kernel<Args...>::set_block_dim(int threads) const {
  detail::set_kernel_block_dim(def_, threads);
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
