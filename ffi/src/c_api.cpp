// The C functions the Python shim (kjit.jax) calls through ctypes: handler addresses,
// kernel and callable signatures as JSON, module preload, graph caches. Never throw.
#include <string>

#include "callables.hpp"
#include "frame.hpp"
#include "kernel_info.hpp"
#include "kjit/ffi/ffi.hpp"
#include "kjit/runtime/cpu_threads.hpp"
#include "kjit/runtime/device.hpp"
#include "kjit/runtime/launch.hpp"
#include "kjit/runtime/modules.hpp"

namespace {

thread_local std::string t_error;
thread_local std::string t_result;

template <class F>
auto capture(F&& f, decltype(f()) failed) noexcept -> decltype(f()) {
  try {
    t_error.clear();
    return f();
  } catch (const kjit::ffi::detail::HandlerError& e) {
    t_error = e.message;
  } catch (const std::exception& e) {
    t_error = e.what();
  } catch (...) {
    t_error = "unknown error";
  }
  return failed;
}

kjit::ffi::Platform platform_of(const char* p) {
  std::string s = p ? p : "";
  if (s == "cpu" || s == "Host" || s == "host") return kjit::ffi::Platform::Cpu;
  if (s == "CUDA" || s == "cuda" || s == "gpu") return kjit::ffi::Platform::Cuda;
  throw kjit::Error(kjit::ErrorKind::User, "unknown XLA platform '" + s + "' (kjit has 'cpu' and 'CUDA')");
}

}  // namespace

namespace kjit::ffi::detail {
/// The message kjit_ffi_last_error returns, for the C functions of other files (c_launch.cpp).
std::string& c_last_error() { return t_error; }
}  // namespace kjit::ffi::detail

extern "C" {

/// The message of the last failed call on this thread ("" when it succeeded).
KJIT_FFI_EXPORT const char* kjit_ffi_last_error() { return t_error.c_str(); }

/// Version of this C interface; the shim checks it.
KJIT_FFI_EXPORT int kjit_ffi_abi_version() { return 2; }

/// Version of kjit_ffi_launch (kjit/ffi/c_launch.h; 2: kjit_ffi_launch_call); kjit.torch checks it.
KJIT_FFI_EXPORT int kjit_ffi_launch_version() { return 2; }

/// Sets the XLA FFI API version (0.`minor`) kjit's handlers declare from now on; 0, or -1 for
/// a version kjit does not mirror (kjit::ffi::declare_api_version).
KJIT_FFI_EXPORT int kjit_ffi_declare_api_version(int minor) {
  return capture([&]() -> int { kjit::ffi::declare_api_version(minor); return 0; }, -1);
}

/// The versions kjit's handlers can declare: the newest mirrored minor * 100 + the oldest
/// (0.5 and 0.1: 501), and the one declared now is kjit_ffi_declared_api_version().
KJIT_FFI_EXPORT int kjit_ffi_api_versions() { return kjit::xla::kMirroredApiMinor * 100 + kjit::xla::kApiMinor; }

/// The minor XLA FFI API version kjit's handlers declare now.
KJIT_FFI_EXPORT int kjit_ffi_declared_api_version() { return kjit::ffi::declared_api_version(); }

/// The address of handler `which` ("launch" or "adjoint") for `platform` ("cpu", "CUDA").
KJIT_FFI_EXPORT void* kjit_ffi_handler(const char* which, const char* platform) {
  return capture(
      [&]() -> void* {
        std::string w = which ? which : "";
        bool cuda = platform_of(platform) == kjit::ffi::Platform::Cuda;
        if (w == "launch") return reinterpret_cast<void*>(cuda ? &kjit_xla_launch_cuda : &kjit_xla_launch_cpu);
        if (w == "adjoint") return reinterpret_cast<void*>(cuda ? &kjit_xla_adjoint_cuda : &kjit_xla_adjoint_cpu);
        if (w == "mesh_bvh") return reinterpret_cast<void*>(cuda ? &kjit_xla_mesh_bvh_cuda : &kjit_xla_mesh_bvh_cpu);
        throw kjit::Error(kjit::ErrorKind::User, "unknown kjit handler '" + w + "' (launch, adjoint, mesh_bvh)");
      },
      nullptr);
}

/// The signature of kernel `name` as JSON (valid until the next call on this thread); null
/// on error (see kjit_ffi_last_error).
KJIT_FFI_EXPORT const char* kjit_ffi_kernel_signature(const char* name) {
  return capture(
      [&]() -> const char* {
        t_result = kjit::ffi::detail::kernel_info(name ? name : "").json;
        return t_result.c_str();
      },
      nullptr);
}

/// Every kernel of the process as a JSON array of signatures.
KJIT_FFI_EXPORT const char* kjit_ffi_kernels() {
  return capture(
      [&]() -> const char* {
        t_result = kjit::ffi::detail::all_kernels_json();
        return t_result.c_str();
      },
      nullptr);
}

/// Builds (or finds in the cache) and loads the module of kernel `name` on `device` ("cpu",
/// "cuda:N", or "all" for every CUDA device, else cpu). 0 on success, -1 on error.
KJIT_FFI_EXPORT int kjit_ffi_preload(const char* name, const char* device) {
  return capture(
      [&]() -> int {
        const auto& k = kjit::ffi::detail::kernel_info(name ? name : "");
        std::string d = device ? device : "";
        if (d == "all")
          kjit::preload_module(k.def->module(), kjit::PreloadMode::AllDevices);
        else
          kjit::load_module(k.def->module(), kjit::Device::parse(d));
        return 0;
      },
      -1);
}

/// Runs the cpu device's pooled work on the thread team of `openmp_library`, a libgomp already
/// loaded in this process (kjit::share_cpu_threads); NULL: on kjit's own pool again. 0 on
/// success, -1 on error (nothing changed).
KJIT_FFI_EXPORT int kjit_ffi_share_cpu_threads(const char* openmp_library) {
  return capture(
      [&]() -> int {
        if (openmp_library)
          kjit::share_cpu_threads(openmp_library);
        else
          kjit::use_own_cpu_threads();
        return 0;
      },
      -1);
}

/// What runs the cpu device's pooled work: "kjit" or the OpenMP library's path.
KJIT_FFI_EXPORT const char* kjit_ffi_cpu_threads() {
  return capture(
      [&]() -> const char* {
        t_result = kjit::cpu_threads();
        return t_result.c_str();
      },
      nullptr);
}

/// The signature of callable `name` as JSON (as for kernels, plus its graph mode).
KJIT_FFI_EXPORT const char* kjit_ffi_callable_signature(const char* name) {
  return capture(
      [&]() -> const char* {
        t_result = kjit::ffi::detail::callable_signature(name ? name : "");
        return t_result.c_str();
      },
      nullptr);
}

/// The handler of callable `name` with graph mode `mode` ("none", "xla", "kjit",
/// "kjit_staged_ex", "kjit_staged") on `platform`; null on error.
KJIT_FFI_EXPORT void* kjit_ffi_callable_handler(const char* name, const char* mode, const char* platform) {
  return capture(
      [&]() -> void* {
        kjit::ffi::GraphMode m = kjit::ffi::detail::parse_graph_mode(mode ? mode : "");
        auto* h = kjit::ffi::callable_handler(name ? name : "", m, platform_of(platform));
        if (!h) throw kjit::Error(kjit::ErrorKind::User, t_error.empty() ? "no callable named '" + std::string(name ? name : "") + "'" : t_error);
        return reinterpret_cast<void*>(h);
      },
      nullptr);
}

/// The handler of callback `name` on `platform`; null on error.
KJIT_FFI_EXPORT void* kjit_ffi_callback_handler(const char* name, const char* platform) {
  return capture(
      [&]() -> void* {
        auto* h = kjit::ffi::callback_handler(name ? name : "", platform_of(platform));
        if (!h)
          throw kjit::Error(kjit::ErrorKind::User,
                            "no C++ callback named '" + std::string(name ? name : "") +
                                "' is registered (kjit::ffi::register_callback), or all handler slots are taken");
        return reinterpret_cast<void*>(h);
      },
      nullptr);
}

/// Names of the registered callables and callbacks, as JSON {"callables": [...], "callbacks": [...]}.
KJIT_FFI_EXPORT const char* kjit_ffi_registered() {
  return capture(
      [&]() -> const char* {
        t_result = kjit::ffi::detail::registered_json();
        return t_result.c_str();
      },
      nullptr);
}

/// Graphs cached for callable `name` ("" = all); -1 on error.
KJIT_FFI_EXPORT long long kjit_ffi_graph_cache_size(const char* name) {
  return capture([&]() -> long long { return (long long)kjit::ffi::graph_cache_size(name ? name : ""); }, -1);
}

/// Releases the graphs cached for callable `name` ("" = all). 0 on success.
KJIT_FFI_EXPORT int kjit_ffi_clear_graph_cache(const char* name) {
  return capture([&]() -> int { kjit::ffi::clear_graph_cache(name ? name : ""); return 0; }, -1);
}

/// Sets the graph cache bound of callable `name` (0 = unbounded). 0 on success.
KJIT_FFI_EXPORT int kjit_ffi_set_graph_cache_max(const char* name, int max) {
  return capture([&]() -> int { kjit::ffi::set_graph_cache_max(name ? name : "", max); return 0; }, -1);
}

}  // extern "C"
