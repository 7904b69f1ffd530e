// kjit's own CUDA driver declarations (runtime/src/cuda/driver_types.hpp and the signatures of
// driver_symbols.def) against the toolkit's cuda.h and cudaTypedefs.h, where a toolkit is
// installed: every entry point's signature at the ABI version kjit asks for, its versioned
// export, every enumerator kjit names, and the layout of the one structure it reads. kjit builds
// without the toolkit; this is what keeps its declarations honest.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if __has_include(<cuda.h>) && __has_include(<cudaTypedefs.h>)
#include <cuda.h>
#include <cudaTypedefs.h>
#define KJIT_TEST_HAVE_CUDA_H 1

namespace {
// cuda.h spells the special streams as macros, which would rewrite kjit's declarations below.
const uintptr_t kTheirLegacyStream = reinterpret_cast<uintptr_t>(CU_STREAM_LEGACY);
const uintptr_t kTheirPerThreadStream = reinterpret_cast<uintptr_t>(CU_STREAM_PER_THREAD);
}  // namespace
#undef CU_STREAM_LEGACY
#undef CU_STREAM_PER_THREAD

// kjit's declarations live in the global namespace, as cuda.h's do; here they go in their own
// so that both can be compared in one translation unit.
namespace ours {
#include "cuda/driver_types.hpp"
/// Each entry point as kjit's table declares it (the members take cuda.h's versioned names
/// here, through its macros; that changes nothing below).
struct Api {
#define KJIT_CUDA_SYMBOL(name, version, exported, parameters) CUresult(CUDAAPI* name) parameters;
#include "cuda/driver_symbols.def"
#undef KJIT_CUDA_SYMBOL
};
}  // namespace ours

namespace {

/// The type spelt with cuda.h's types for one spelt with kjit's.
template <class T> struct Theirs { using type = T; };
template <class T> using theirs_t = typename Theirs<T>::type;
template <class T> struct Theirs<T*> { using type = theirs_t<T>*; };
template <class T> struct Theirs<const T> { using type = const theirs_t<T>; };
template <class R, class... A> struct Theirs<R (*)(A...)> { using type = theirs_t<R> (*)(theirs_t<A>...); };
#define KJIT_SAME_TYPE(ours_type, their_type) \
  template <> struct Theirs<ours::ours_type> { using type = their_type; };
KJIT_SAME_TYPE(CUresult, ::CUresult)
KJIT_SAME_TYPE(CUdevice_attribute, ::CUdevice_attribute)
KJIT_SAME_TYPE(CUfunction_attribute, ::CUfunction_attribute)
KJIT_SAME_TYPE(CUjit_option, ::CUjit_option)
KJIT_SAME_TYPE(CUstreamCaptureMode, ::CUstreamCaptureMode)
KJIT_SAME_TYPE(CUstreamCaptureStatus, ::CUstreamCaptureStatus)
KJIT_SAME_TYPE(CUgraphNodeType, ::CUgraphNodeType)
KJIT_SAME_TYPE(CUdriverProcAddressQueryResult, ::CUdriverProcAddressQueryResult)
KJIT_SAME_TYPE(CUDA_MEMCPY3D, ::CUDA_MEMCPY3D)
KJIT_SAME_TYPE(CUctx_st, std::remove_pointer_t<::CUcontext>)
KJIT_SAME_TYPE(CUmod_st, std::remove_pointer_t<::CUmodule>)
KJIT_SAME_TYPE(CUfunc_st, std::remove_pointer_t<::CUfunction>)
KJIT_SAME_TYPE(CUstream_st, std::remove_pointer_t<::CUstream>)
KJIT_SAME_TYPE(CUevent_st, std::remove_pointer_t<::CUevent>)
KJIT_SAME_TYPE(CUgraph_st, std::remove_pointer_t<::CUgraph>)
KJIT_SAME_TYPE(CUgraphNode_st, std::remove_pointer_t<::CUgraphNode>)
KJIT_SAME_TYPE(CUgraphExec_st, std::remove_pointer_t<::CUgraphExec>)
KJIT_SAME_TYPE(CUarray_st, std::remove_pointer_t<::CUarray>)
#undef KJIT_SAME_TYPE

constexpr bool same_text(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}
#define KJIT_TEXT2(x) #x
#define KJIT_TEXT(x) KJIT_TEXT2(x)

// Every row: the signature is cudaTypedefs.h's PFN_<name>_v<version>, and the export is the
// name cuda.h's macros turn `name` into.
#define KJIT_CUDA_SYMBOL(name, version, exported, parameters)                                      \
  static_assert(std::is_same_v<theirs_t<decltype(ours::Api::name)>, PFN_##name##_v##version>,      \
                #name " in driver_symbols.def does not match cudaTypedefs.h's PFN_" #name "_v" #version); \
  static_assert(same_text(#exported, KJIT_TEXT(name)),                                             \
                #name "'s export in driver_symbols.def is not the one cuda.h maps it to");
#include "cuda/driver_symbols.def"
#undef KJIT_CUDA_SYMBOL
static_assert(std::is_same_v<theirs_t<ours::PFN_kjit_cuGetProcAddress>, PFN_cuGetProcAddress_v12000>);
static_assert(std::is_same_v<theirs_t<ours::PFN_kjit_cuDriverGetVersion>, PFN_cuDriverGetVersion_v2020>);
static_assert(same_text("cuGetProcAddress_v2", KJIT_TEXT(cuGetProcAddress)));

static_assert(std::is_same_v<ours::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<ours::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<ours::cuuint64_t, ::cuuint64_t>);

// Enumerators: the same values, and enumerations of the same size.
#define KJIT_SAME_VALUE(e) static_assert(uint64_t(ours::e) == uint64_t(::e), #e " differs from cuda.h");
KJIT_SAME_VALUE(CUDA_SUCCESS)
KJIT_SAME_VALUE(CUDA_ERROR_INVALID_VALUE)
KJIT_SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY)
KJIT_SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED)
KJIT_SAME_VALUE(CUDA_ERROR_DEINITIALIZED)
KJIT_SAME_VALUE(CUDA_ERROR_NO_DEVICE)
KJIT_SAME_VALUE(CUDA_ERROR_INVALID_DEVICE)
KJIT_SAME_VALUE(CUDA_ERROR_INVALID_IMAGE)
KJIT_SAME_VALUE(CUDA_ERROR_INVALID_CONTEXT)
KJIT_SAME_VALUE(CUDA_ERROR_NO_BINARY_FOR_GPU)
KJIT_SAME_VALUE(CUDA_ERROR_INVALID_PTX)
KJIT_SAME_VALUE(CUDA_ERROR_INVALID_HANDLE)
KJIT_SAME_VALUE(CUDA_ERROR_ILLEGAL_STATE)
KJIT_SAME_VALUE(CUDA_ERROR_NOT_FOUND)
KJIT_SAME_VALUE(CUDA_ERROR_ILLEGAL_ADDRESS)
KJIT_SAME_VALUE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
KJIT_SAME_VALUE(CUDA_ERROR_LAUNCH_FAILED)
KJIT_SAME_VALUE(CUDA_ERROR_NOT_SUPPORTED)
KJIT_SAME_VALUE(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
KJIT_SAME_VALUE(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
KJIT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
KJIT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
KJIT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
KJIT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
KJIT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
KJIT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
KJIT_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)
KJIT_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
KJIT_SAME_VALUE(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
KJIT_SAME_VALUE(CU_FUNC_ATTRIBUTE_NUM_REGS)
KJIT_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
KJIT_SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER)
KJIT_SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
KJIT_SAME_VALUE(CU_STREAM_DEFAULT)
KJIT_SAME_VALUE(CU_EVENT_DEFAULT)
KJIT_SAME_VALUE(CU_STREAM_CAPTURE_MODE_GLOBAL)
KJIT_SAME_VALUE(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
KJIT_SAME_VALUE(CU_STREAM_CAPTURE_MODE_RELAXED)
KJIT_SAME_VALUE(CU_STREAM_CAPTURE_STATUS_NONE)
KJIT_SAME_VALUE(CU_STREAM_CAPTURE_STATUS_ACTIVE)
KJIT_SAME_VALUE(CU_STREAM_CAPTURE_STATUS_INVALIDATED)
KJIT_SAME_VALUE(CU_GRAPH_NODE_TYPE_KERNEL)
KJIT_SAME_VALUE(CU_GRAPH_NODE_TYPE_MEMCPY)
KJIT_SAME_VALUE(CU_GRAPH_NODE_TYPE_MEMSET)
KJIT_SAME_VALUE(CU_GET_PROC_ADDRESS_DEFAULT)
KJIT_SAME_VALUE(CU_GET_PROC_ADDRESS_LEGACY_STREAM)
KJIT_SAME_VALUE(CU_GET_PROC_ADDRESS_SUCCESS)
KJIT_SAME_VALUE(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)
KJIT_SAME_VALUE(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
KJIT_SAME_VALUE(CU_MEMORYTYPE_HOST)
KJIT_SAME_VALUE(CU_MEMORYTYPE_DEVICE)
KJIT_SAME_VALUE(CU_MEMORYTYPE_ARRAY)
KJIT_SAME_VALUE(CU_MEMORYTYPE_UNIFIED)
#undef KJIT_SAME_VALUE
static_assert(sizeof(ours::CUresult) == sizeof(::CUresult));
static_assert(sizeof(ours::CUdevice_attribute) == sizeof(::CUdevice_attribute));
static_assert(sizeof(ours::CUmemorytype) == sizeof(::CUmemorytype));

// The graph memcpy node's parameters, field by field.
static_assert(sizeof(ours::CUDA_MEMCPY3D) == sizeof(::CUDA_MEMCPY3D));
static_assert(alignof(ours::CUDA_MEMCPY3D) == alignof(::CUDA_MEMCPY3D));
#define KJIT_SAME_FIELD(f) \
  static_assert(offsetof(ours::CUDA_MEMCPY3D, f) == offsetof(::CUDA_MEMCPY3D, f), "CUDA_MEMCPY3D::" #f);
KJIT_SAME_FIELD(srcXInBytes) KJIT_SAME_FIELD(srcY) KJIT_SAME_FIELD(srcZ) KJIT_SAME_FIELD(srcLOD)
KJIT_SAME_FIELD(srcMemoryType) KJIT_SAME_FIELD(srcHost) KJIT_SAME_FIELD(srcDevice)
KJIT_SAME_FIELD(srcArray) KJIT_SAME_FIELD(reserved0) KJIT_SAME_FIELD(srcPitch) KJIT_SAME_FIELD(srcHeight)
KJIT_SAME_FIELD(dstXInBytes) KJIT_SAME_FIELD(dstY) KJIT_SAME_FIELD(dstZ) KJIT_SAME_FIELD(dstLOD)
KJIT_SAME_FIELD(dstMemoryType) KJIT_SAME_FIELD(dstHost) KJIT_SAME_FIELD(dstDevice)
KJIT_SAME_FIELD(dstArray) KJIT_SAME_FIELD(reserved1) KJIT_SAME_FIELD(dstPitch) KJIT_SAME_FIELD(dstHeight)
KJIT_SAME_FIELD(WidthInBytes) KJIT_SAME_FIELD(Height) KJIT_SAME_FIELD(Depth)
#undef KJIT_SAME_FIELD

}  // namespace
#endif

TEST_CASE("kjit's driver declarations match the toolkit's cuda.h") {
#ifdef KJIT_TEST_HAVE_CUDA_H
  // Everything else is checked at compile time, above; the special streams are values.
  CHECK(reinterpret_cast<uintptr_t>(ours::CU_STREAM_LEGACY) == kTheirLegacyStream);
  CHECK(reinterpret_cast<uintptr_t>(ours::CU_STREAM_PER_THREAD) == kTheirPerThreadStream);
  size_t rows = 0;
#define KJIT_CUDA_SYMBOL(name, version, exported, parameters) ++rows;
#include "cuda/driver_symbols.def"
#undef KJIT_CUDA_SYMBOL
  CHECK(rows == sizeof(ours::Api) / sizeof(void*));
#else
#ifdef KJIT_TEST_EXPECT_CUDA_HEADERS
  FAIL("CMake found cuda.h and cudaTypedefs.h, but this compile could not include them");
#else
  // Registered as the skipped test cuda_driver_declarations, which says so loudly.
  MESSAGE("no CUDA headers here: kjit's driver declarations are not checked");
#endif
#endif
}
