// kjit's own declarations of the part of the CUDA driver ABI it calls: handle types, the
// enumerators it passes or checks, and the one structure it reads (a graph memcpy node's
// parameters). With them, and NVRTC opened at run time, kjit builds without the CUDA toolkit.
// The names are the C API's (they are what the driver documents), declared in the global
// namespace as cuda.h does; the values are fixed by the driver's ABI, and
// tests/cuda/driver_abi_test.cpp checks each one, and every entry point's signature, against
// cuda.h wherever the toolkit is installed.
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef CUDAAPI
#define CUDAAPI  // the calling convention: the platform default on Linux
#endif

// Handles: pointers to opaque driver objects, an int device ordinal, a 64-bit device address.
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using cuuint64_t = uint64_t;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUarray_st;
struct CUgraph_st;
struct CUgraphNode_st;
struct CUgraphExec_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUarray = CUarray_st*;
using CUgraph = CUgraph_st*;
using CUgraphNode = CUgraphNode_st*;
using CUgraphExec = CUgraphExec_st*;

/// The result of every driver call. The underlying type is fixed so that any code a newer
/// driver returns is a valid value (kjit names only the codes it handles).
enum CUresult : unsigned int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_ILLEGAL_STATE = 401,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
};

/// cuDeviceGetAttribute's queries.
enum CUdevice_attribute : unsigned int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
};

/// cuFuncGetAttribute's and cuFuncSetAttribute's.
enum CUfunction_attribute : unsigned int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/// cuModuleLoadDataEx's options (the error log of a module that fails to load).
enum CUjit_option : unsigned int {
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

enum CUstream_flags : unsigned int { CU_STREAM_DEFAULT = 0 };
enum CUevent_flags : unsigned int { CU_EVENT_DEFAULT = 0 };
/// The special stream handles: the legacy default stream and the per-thread default stream.
inline CUstream const CU_STREAM_LEGACY = reinterpret_cast<CUstream>(uintptr_t(1));
inline CUstream const CU_STREAM_PER_THREAD = reinterpret_cast<CUstream>(uintptr_t(2));

enum CUstreamCaptureMode : unsigned int {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};
enum CUstreamCaptureStatus : unsigned int {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
};
enum CUgraphNodeType : unsigned int {
  CU_GRAPH_NODE_TYPE_KERNEL = 0,
  CU_GRAPH_NODE_TYPE_MEMCPY = 1,
  CU_GRAPH_NODE_TYPE_MEMSET = 2,
};

/// cuGetProcAddress's flags and its report.
enum CUdriverProcAddress_flags : unsigned int {
  CU_GET_PROC_ADDRESS_DEFAULT = 0,
  CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
};
enum CUdriverProcAddressQueryResult : unsigned int {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};

enum CUmemorytype : unsigned int {
  CU_MEMORYTYPE_HOST = 1,
  CU_MEMORYTYPE_DEVICE = 2,
  CU_MEMORYTYPE_ARRAY = 3,
  CU_MEMORYTYPE_UNIFIED = 4,
};

/// A 3D copy's parameters, as a graph memcpy node holds them: source, then destination (each
/// a position, a memory type, a host or device pointer or array, and a pitch), then the extent.
struct CUDA_MEMCPY3D {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  void* reserved0;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  CUmemorytype dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  void* reserved1;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
};

/// cuGetProcAddress (its 12.0 ABI), the one entry point resolved by name with dlsym before
/// all others (driver_loader.cpp).
using PFN_kjit_cuGetProcAddress = CUresult(CUDAAPI*)(const char*, void**, int, cuuint64_t,
                                                    CUdriverProcAddressQueryResult*);
/// cuDriverGetVersion, asked before anything else so a driver too old is named as such.
using PFN_kjit_cuDriverGetVersion = CUresult(CUDAAPI*)(int*);
