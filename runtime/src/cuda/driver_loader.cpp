// Opens the CUDA driver at run time (libcuda.so.1 or $KJIT_CUDA_DRIVER), resolves every entry
// point of driver_symbols.def at its stated ABI version, initialises it and enumerates devices.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "cuda/device_query.hpp"
#include "cuda/driver_api.hpp"
#include "kjit/error.hpp"

namespace kjit::cuda {

namespace {

/// One row of the symbol list, with where to store what is found.
struct SymbolSlot {
  const char* name;         ///< the base name cuGetProcAddress takes ("cuMemAlloc")
  const char* export_name;  ///< the versioned export dlsym takes ("cuMemAlloc_v2")
  int version;              ///< the ABI version to ask for
  void** slot;
};

std::vector<SymbolSlot> symbol_slots(DriverApi& api) {
  return {
#define KJIT_CUDA_SYMBOL(name, version, exported, parameters) \
  {#name, #exported, version, reinterpret_cast<void**>(&api.name)},
#include "cuda/driver_symbols.def"
#undef KJIT_CUDA_SYMBOL
  };
}

/// Resolves every entry point; returns the names that could not be found.
std::vector<std::string> resolve_symbols(Driver& d) {
  // cuGetProcAddress (12.0 ABI) hands out the entry point of an explicit ABI version, which is
  // what keeps the DriverApi types honest on newer drivers; dlsym of the versioned export is the
  // fallback for drivers or shims without it.
  auto get_proc = reinterpret_cast<PFN_kjit_cuGetProcAddress>(dlsym(d.library, "cuGetProcAddress_v2"));
  std::vector<std::string> missing;
  bool all_via_proc = get_proc != nullptr;
  for (const SymbolSlot& s : symbol_slots(d.api)) {
    *s.slot = nullptr;
    if (get_proc) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      CUresult r = get_proc(s.name, s.slot, s.version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
      if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) *s.slot = nullptr;
      if (status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) {
        missing.push_back(std::string(s.name) + " (ABI " + version_text(s.version) + ")");
        continue;
      }
    }
    if (!*s.slot) {
      all_via_proc = false;
      *s.slot = dlsym(d.library, s.export_name);
    }
    if (!*s.slot) missing.push_back(s.export_name);
  }
  d.via_proc_address = all_via_proc;
  return missing;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 4; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 4) out += " and " + std::to_string(names.size() - 4) + " more";
  return out;
}

/// Fills `d`; sets d.reason instead of throwing.
void open_driver(Driver& d) {
  const char* env = std::getenv("KJIT_CUDA_DRIVER");
  bool overridden = env && *env;
  d.path = overridden ? env : "libcuda.so.1";
  if (d.path == "none") {
    d.reason = "CUDA is disabled (KJIT_CUDA_DRIVER=none)";
    return;
  }
  d.library = dlopen(d.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!d.library) {
    const char* err = dlerror();
    d.reason = "no CUDA driver found (" + std::string(err ? err : d.path) + ")" +
               (overridden ? "; KJIT_CUDA_DRIVER names a library that cannot be opened"
                           : "; install the NVIDIA driver, or set KJIT_CUDA_DRIVER to "
                             "the path of libcuda.so.1");
    return;
  }
  // The version first, with the one entry point every driver exports unversioned, so that a
  // driver that is too old is reported as such rather than as a list of missing symbols.
  auto get_version = reinterpret_cast<PFN_kjit_cuDriverGetVersion>(dlsym(d.library, "cuDriverGetVersion"));
  if (!get_version || get_version(&d.version) != CUDA_SUCCESS) {
    d.reason = "the library " + d.path + " is not a usable CUDA driver (cuDriverGetVersion "
               "is missing or failed)";
    return;
  }
  std::string needs = "kjit needs a driver for CUDA " + version_text(kMinDriverVersion) + " or newer";
  if (d.version < kMinDriverVersion) {
    d.reason = "the CUDA driver is too old: it supports CUDA " + version_text(d.version) +
               ", but " + needs + "; update the NVIDIA driver";
    return;
  }
  std::vector<std::string> missing = resolve_symbols(d);
  if (!missing.empty()) {
    d.reason = "the CUDA driver (CUDA " + version_text(d.version) + ", " + d.path +
               ") lacks entry points kjit calls: " + join(missing) + "; " + needs;
    return;
  }
  CUresult r = d.api.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    d.reason = "the CUDA driver reports no device (cuInit: " + describe(d.api, r) + ")";
    return;
  }
  if (r != CUDA_SUCCESS) {
    d.reason = "the CUDA driver failed to initialise (cuInit: " + describe(d.api, r) + ")";
    return;
  }
  int count = 0;
  r = d.api.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count <= 0) {
    d.reason = "the CUDA driver reports no device" +
               (r != CUDA_SUCCESS ? " (cuDeviceGetCount: " + describe(d.api, r) + ")" : std::string());
    return;
  }
  try {
    for (int i = 0; i < count; ++i) d.devices.push_back(query_device(d.api, d.version, i));
  } catch (const Error& e) {
    d.devices.clear();
    d.reason = std::string("the CUDA driver could not describe its devices: ") + e.what();
    return;
  }
  for (const auto& dev : d.devices)
    if (dev->target_error.empty()) return;  // at least one device kjit can compile for
  d.reason = "no CUDA device is usable: " + d.devices.front()->target_error;
  d.devices.clear();
}

std::mutex g_driver_mutex;
std::atomic<Driver*> g_driver{nullptr};

}  // namespace

Driver::~Driver() {
  // Primary contexts are reference counted by the driver; give back what we retained.
  for (auto& dev : devices)
    if (dev->context.load() && api.cuDevicePrimaryCtxRelease)
      api.cuDevicePrimaryCtxRelease(dev->handle);
}

Driver& driver() {
  if (Driver* d = g_driver.load(std::memory_order_acquire)) return *d;
  std::lock_guard<std::mutex> lock(g_driver_mutex);
  if (Driver* d = g_driver.load(std::memory_order_relaxed)) return *d;
  // Never deleted outside tests: other static destructors (arrays, module tables) may still
  // call into the driver while the process exits, and the driver itself is never dlclose-d
  // because unloading libcuda while it has threads running is not supported.
  auto* d = new Driver();
  open_driver(*d);
  g_driver.store(d, std::memory_order_release);
  return *d;
}

const DriverApi& api() {
  Driver& d = driver();
  if (!d.reason.empty()) throw Error(ErrorKind::Driver, "CUDA is not available: " + d.reason);
  return d.api;
}

const std::string& unavailable_reason() { return driver().reason; }

int device_count() {
  Driver& d = driver();
  return d.reason.empty() ? int(d.devices.size()) : 0;
}

namespace detail {
void reset_for_testing() {
  std::lock_guard<std::mutex> lock(g_driver_mutex);
  delete g_driver.exchange(nullptr);
}
}  // namespace detail

}  // namespace kjit::cuda
