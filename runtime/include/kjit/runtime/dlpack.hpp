// kjit/runtime/dlpack.hpp — DLPack in C++: NdArray views of other frameworks' tensors
// (libtorch, CuPy, JAX, ...) that keep the producer alive, and NdArrays as DLPack tensors
// (NdArray::to_dlpack), without copies. docs/DLPACK.md is the reference.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kjit/runtime/ndarray.hpp"

// The DLPack ABI, declared from the DLPack 1.1 specification (github.com/dmlc/dlpack,
// include/dlpack/dlpack.h, DLPACK_MAJOR_VERSION 1, DLPACK_MINOR_VERSION 1): the same names,
// field order and enum values. It shares dlpack.h's include guard: whichever of it and a
// producer's dlpack.h (libtorch's ATen/dlpack.h, ...) comes first declares the types, and the
// other is skipped. Include the producer's first where it is of a later minor version (torch
// 2.15 has 1.3), so that its newer names exist. Only the types kjit reads are declared (no
// exchange-API function types).
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 1
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#define DLPACK_DLL

extern "C" {

/// The DLPack version of a DLManagedTensorVersioned: another major version has another layout.
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/// Where a tensor's memory is.
typedef enum : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  ///< pinned host memory (cudaMallocHost)
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,  ///< unified memory (cudaMallocManaged)
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
} DLDeviceType;

typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

/// DLDataType::code.
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U,
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U,
} DLDataTypeCode;

/// An element type: float32 is {kDLFloat, 32, 1}; bool is {kDLBool, 8, 1}.
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/// A tensor's memory and layout; owns nothing. Strides count elements, not bytes; null
/// strides mean compact row-major.
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

/// A tensor lent by its producer: the consumer calls `deleter(self)` once when done with it.
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/// DLManagedTensor with a version and flags (DLPack >= 1.0).
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

}  // extern "C"

#endif  // DLPACK_DLPACK_H_

namespace kjit {

/// An NdArray view of `tensor`'s memory that keeps the producer alive: its deleter is called
/// exactly once, when the last NdArray sharing the memory (copies, views, slices) is gone,
/// from whichever thread drops it. `element` is the array's element type: left out (void),
/// the tensor's scalar type, one array dimension per tensor dimension; a vector, quaternion or
/// transform type takes the last dimension as its components ((n, 3) float32 -> Array of
/// vec3f), a matrix type the last two ((n, 3, 3) -> mat33f); those dimensions must be compact
/// (element strides (cols, 1) / 1). kjit takes ownership of `tensor` in every case: when it
/// throws (a User error naming what it cannot read: dtype, device, dimensions, strides,
/// alignment), it has called the deleter already. Negative and zero strides and a byte_offset
/// are fine. Devices kDLCPU and kDLCUDAHost (pinned) give a cpu array, kDLCUDA `cuda:<device_id>`.
/// The array has no gradient buffer (requires_grad() gives it one of kjit's own).
NdArray from_dlpack(DLManagedTensor* tensor, const ir::Type& element = ir::Type());
/// The same for the versioned struct (DLPack >= 1.0). A tensor of another major version is
/// refused (its deleter is called, as the specification asks), and so is a read-only one
/// (DLPACK_FLAG_BITMASK_READ_ONLY: kjit cannot stop a kernel writing an array) unless
/// `allow_read_only`: then the caller promises that only kernels that read it see it.
NdArray from_dlpack(DLManagedTensorVersioned* tensor, const ir::Type& element = ir::Type(),
                    bool allow_read_only = false);
/// from_dlpack with element type T: `kjit::from_dlpack<kjit::vec3f>(at::toDLPack(points))`.
template <class T>
NdArray from_dlpack(DLManagedTensor* tensor) {
  return from_dlpack(tensor, ir_type_of<T>());
}
template <class T>
NdArray from_dlpack(DLManagedTensorVersioned* tensor, bool allow_read_only = false) {
  return from_dlpack(tensor, ir_type_of<T>(), allow_read_only);
}

// NdArray::to_dlpack() and to_dlpack_versioned() (DLPack 1.1, flags 0) export an array: the
// tensor holds a copy of the NdArray, so the memory lives until the consumer calls the deleter
// (once, from any thread). A vector, quaternion or transform element adds one last dimension
// of its components, a matrix two: an array of n vec3f is an (n, 3) float32 tensor. The
// gradient buffer is not exported (grad().to_dlpack() is). A User error for an empty handle,
// struct elements, and byte strides that are not whole scalars. A view of memory owned
// elsewhere (NdArray::view) is exported as it is: that memory must outlive the tensor.

/// A view of `tensor`'s memory that owns nothing, as NdArray::view: the memory must outlive
/// every use of the view (for DLTensors lent for the length of a call). Element types and
/// errors as from_dlpack's.
NdArray dlpack_view(const DLTensor& tensor, const ir::Type& element = ir::Type());

}  // namespace kjit
