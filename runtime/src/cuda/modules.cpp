// Modules on a device: loading a cubin or PTX image, looking up kernels and globals.
#include <cstring>

#include "cuda/driver_api.hpp"
#include "kjit/error.hpp"

namespace kjit::cuda {

namespace {
thread_local uint64_t t_refused_loads = 0;

bool is_elf(const std::vector<char>& image) {
  return image.size() >= 4 && std::memcmp(image.data(), "\x7f" "ELF", 4) == 0;
}
}  // namespace

uint64_t refused_module_loads() { return t_refused_loads; }

void* module_load(int ordinal, const std::vector<char>& image) {
  if (image.empty())
    throw Error(ErrorKind::Internal, "internal error: an empty module image for cuda:" +
                                         std::to_string(ordinal));
  if (this_thread_capturing()) {
    ++t_refused_loads;
    throw Error(ErrorKind::User,
                "a kernel module would be loaded on cuda:" + std::to_string(ordinal) +
                    " while this thread captures a CUDA graph; load modules before capturing "
                    "(kjit::preload_module, or launch each kernel once before the capture)");
  }
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  // PTX must end in a NUL; add one rather than let the driver read past the buffer.
  const std::vector<char>* data = &image;
  std::vector<char> terminated;
  if (!is_elf(image) && image.back() != '\0') {
    terminated = image;
    terminated.push_back('\0');
    data = &terminated;
  }
  // The JIT's error log makes a rejected PTX image (a driver older than NVRTC's PTX) readable.
  char log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(uintptr_t(sizeof(log) - 1))};
  CUmodule module = nullptr;
  CUresult r = driver().api.cuModuleLoadDataEx(&module, data->data(), 2, options, values);
  if (r != CUDA_SUCCESS) {
    std::string what = std::string("cuModuleLoadDataEx(") + (is_elf(image) ? "cubin" : "PTX") +
                       ", " + std::to_string(image.size()) + " bytes on cuda:" +
                       std::to_string(ordinal) + ")";
    if (log[0]) what += " with JIT log: " + std::string(log);
    throw_driver_error(r, what);
  }
  return module;
}

void* module_function(int ordinal, void* module, const std::string& name) {
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  CUfunction fn = nullptr;
  CUresult r = driver().api.cuModuleGetFunction(&fn, static_cast<CUmodule>(module), name.c_str());
  if (r != CUDA_SUCCESS)
    throw_driver_error(r, "cuModuleGetFunction('" + name + "' on cuda:" +
                              std::to_string(ordinal) + ")");
  return fn;
}

void* module_global(int ordinal, void* module, const std::string& name, size_t* bytes) {
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  CUdeviceptr ptr = 0;
  size_t size = 0;
  CUresult r =
      driver().api.cuModuleGetGlobal(&ptr, &size, static_cast<CUmodule>(module), name.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) {
    if (bytes) *bytes = 0;
    return nullptr;
  }
  if (r != CUDA_SUCCESS)
    throw_driver_error(r, "cuModuleGetGlobal('" + name + "' on cuda:" +
                              std::to_string(ordinal) + ")");
  if (bytes) *bytes = size;
  return reinterpret_cast<void*>(ptr);
}

int function_max_threads(int ordinal, void* function) {
  DeviceState& dev = device(ordinal);
  ContextScope scope(dev);
  int value = 0;
  KJIT_CU(driver().api.cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                          static_cast<CUfunction>(function)));
  return value;
}

}  // namespace kjit::cuda
