// The CUDA backend of a build that cannot talk to a driver yet: every entry says so.
#include "cuda/cuda_backend.hpp"

#include "kjit/error.hpp"

namespace kjit::cuda {

namespace {
[[noreturn]] void unavailable() { throw Error(ErrorKind::Driver, unavailable_reason()); }
}  // namespace

const std::string& unavailable_reason() {
  static const std::string reason = "this build of kjit has no CUDA driver support";
  return reason;
}
int device_count() { return 0; }
const DeviceProperties& properties(int) { unavailable(); }
compiler::Target target_for(int) { unavailable(); }
void* alloc(int, size_t) { unavailable(); }
void free(int, void*) noexcept {}
void copy(int, void*, const void*, size_t, CopyKind, void*) { unavailable(); }
void zero(int, void*, size_t, void*) { unavailable(); }
void* stream_create(int) { unavailable(); }
void stream_destroy(int, void*) noexcept {}
void stream_synchronize(int, void*) { unavailable(); }
void* module_load(int, const std::vector<char>&) { unavailable(); }
void* module_function(int, void*, const std::string&) { unavailable(); }
void* module_global(int, void*, const std::string&, size_t*) { unavailable(); }
int function_max_threads(int, void*) { unavailable(); }
void launch(int, void*, int64_t, int, unsigned, void*, void**) { unavailable(); }

}  // namespace kjit::cuda
