// The fake CUDA driver's entry points for initialisation, errors, symbol lookup, devices and
// contexts. Exported under the driver's versioned names (fake_state.hpp).
#include <cstdlib>
#include <cstring>

#include "fake_state.hpp"

using namespace kjit::fake_cuda;

#define FAKE_REQUIRE_INIT() \
  if (!s.initialised) return CUDA_ERROR_NOT_INITIALIZED

namespace {

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};
const ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the operation is in an illegal state"},
};

thread_local std::vector<Context*> t_context_stack;

struct ProcEntry {
  const char* name;
  int version;
  void* function;
};

}  // namespace

// --- initialisation, version, errors ---------------------------------------------------------

CUresult CUDAAPI cuInit(unsigned int flags) {
  FAKE_ENTER();
  if (s.init_result != CUDA_SUCCESS) return s.init_result;
  s.initialised = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
  FAKE_ENTER();
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = s.driver_version;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** str) {
  for (const ErrorText& e : kErrors)
    if (e.code == error) return *str = e.name, CUDA_SUCCESS;
  *str = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** str) {
  for (const ErrorText& e : kErrors)
    if (e.code == error) return *str = e.text, CUDA_SUCCESS;
  *str = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

// --- symbol lookup: every entry of kjit's list, at the version kjit's list names --------------

CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cuda_version,
                                  cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  static const ProcEntry kTable[] = {
#define KJIT_CUDA_SYMBOL(name, version, exported, parameters) {#name, version, reinterpret_cast<void*>(&name)},
#include "cuda/driver_symbols.def"
#undef KJIT_CUDA_SYMBOL
  };
  FAKE_ENTER();
  *pfn = nullptr;
  if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  s.proc_requests.push_back({symbol, cuda_version, false});
  if (s.no_proc_address) return CUDA_ERROR_NOT_SUPPORTED;
  for (const ProcEntry& e : kTable) {
    if (std::strcmp(e.name, symbol) != 0) continue;
    // The ABI kjit asks for must exist in this driver and must not predate the fake's own.
    if (e.version > s.driver_version) return CUDA_ERROR_NOT_FOUND;
    if (cuda_version < e.version) {
      if (status) *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = e.function;
    if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    s.proc_requests.back().found = true;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

// --- devices ---------------------------------------------------------------------------------

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  *count = int(s.devices.size());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  if (ordinal < 0 || ordinal >= int(s.devices.size())) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  if (dev < 0 || dev >= int(s.devices.size()) || len <= 0) return CUDA_ERROR_INVALID_DEVICE;
  std::strncpy(name, s.devices[size_t(dev)].name.c_str(), size_t(len));
  name[len - 1] = '\0';
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attr, CUdevice dev) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  if (dev < 0 || dev >= int(s.devices.size())) return CUDA_ERROR_INVALID_DEVICE;
  const FakeDevice& d = s.devices[size_t(dev)];
  switch (attr) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = d.major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = d.minor; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 8 * (dev + 1); break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *value = 16; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 99 * 1024; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  if (dev < 0 || dev >= int(s.devices.size())) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = size_t(16 + 8 * dev) << 30;
  return CUDA_SUCCESS;
}

// --- primary contexts and the current-context stack ------------------------------------------

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  if (dev < 0 || dev >= int(s.devices.size())) return CUDA_ERROR_INVALID_DEVICE;
  Context* c = s.contexts[size_t(dev)].get();
  ++c->refcount;
  *ctx = reinterpret_cast<CUcontext>(c);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  if (dev < 0 || dev >= int(s.devices.size())) return CUDA_ERROR_INVALID_DEVICE;
  Context* c = s.contexts[size_t(dev)].get();
  if (c->refcount <= 0) return CUDA_ERROR_INVALID_CONTEXT;
  --c->refcount;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* ctx) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  *ctx = reinterpret_cast<CUcontext>(current_context());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  auto* c = reinterpret_cast<Context*>(ctx);
  bool known = false;
  for (auto& k : s.contexts) known |= k.get() == c;
  if (!known || c->refcount <= 0) return CUDA_ERROR_INVALID_CONTEXT;
  t_context_stack.push_back(c);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* ctx) {
  FAKE_ENTER();
  FAKE_REQUIRE_INIT();
  if (t_context_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx) *ctx = reinterpret_cast<CUcontext>(t_context_stack.back());
  t_context_stack.pop_back();
  return CUDA_SUCCESS;
}

namespace kjit::fake_cuda {
Context* current_context() { return t_context_stack.empty() ? nullptr : t_context_stack.back(); }
}  // namespace kjit::fake_cuda
