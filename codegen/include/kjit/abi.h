// kjit/abi.h — the kernel ABI: launch bounds and arrays exactly as generated kernels read them.
//
// This one header is compiled three ways: into every generated module by NVRTC, into every
// generated module by the host compiler (the `cpu` device), and into the runtime's packer.
// It therefore uses no standard headers under NVRTC and only fixed-width integer types.
#ifndef KJIT_ABI_H
#define KJIT_ABI_H

#if defined(__CUDACC_RTC__)
typedef signed char kj_int8;
typedef unsigned char kj_uint8;
typedef short kj_int16;
typedef unsigned short kj_uint16;
typedef int kj_int32;
typedef unsigned int kj_uint32;
typedef long long kj_int64;
typedef unsigned long long kj_uint64;
#else
#include <stdint.h>
typedef int8_t kj_int8;
typedef uint8_t kj_uint8;
typedef int16_t kj_int16;
typedef uint16_t kj_uint16;
typedef int32_t kj_int32;
typedef uint32_t kj_uint32;
typedef int64_t kj_int64;
typedef uint64_t kj_uint64;
#endif

namespace kj {

/// Largest number of launch and array dimensions.
constexpr int kMaxDims = 4;

/// Version of this layout; part of every module key.
constexpr int kAbiVersion = 3;  // 2: launch_bounds_t carries the launch's status slot;
                                // 3: array_t carries flags (kArrayPrivate)

/// What went wrong in one launch, written by the first thread that reports (the others see
/// `code` taken and write nothing). Per launch, not per module: concurrent launches of one
/// module each read their own (DESIGN 3.1, docs/RELIABILITY.md).
struct launch_status_t {
  kj_int32 code;    ///< 0: nothing reported; a loop id + 1, or one of kj::kStatus* (core.h)
  kj_int32 line;    ///< the user's source line of the failing access or division (bounds mode)
  kj_int32 axis;    ///< the index's position (array dimension or component index)
  kj_int32 reserved;  ///< explicit padding
  kj_int64 thread;  ///< flat launch index of the reporting thread
  kj_int64 index;   ///< the offending index (or the dividend of a division by zero)
  kj_int64 extent;  ///< the extent it was checked against
};

/// The extent of a launch: up to four dimensions, their count, and their product, and where
/// the launch's threads report failures.
struct launch_bounds_t {
  kj_int32 shape[kMaxDims];  ///< extent per dimension; unused ones are 1
  kj_int32 ndim;             ///< 1..4
  kj_int32 reserved;         ///< explicit padding: the layout has no implicit holes
  kj_int64 size;             ///< shape[0] * ... * shape[ndim-1]
  launch_status_t* status;   ///< this launch's status slot (host or device memory), or null:
                             ///< reports are then dropped (launches captured into graphs)
};

/// array_t::flags: `data` is this cpu thread's private, zeroed copy of an array the entry
/// point only adds into; its adds are plain (kj::array_add), and the runtime merges the copies
/// into the user's array after the launch (runtime/src/private_adds.cpp). Never set on CUDA.
constexpr kj_int32 kArrayPrivate = 1;

/// A strided array of T: the value buffer, an optional gradient buffer of the same layout,
/// the extent per dimension and the byte stride per dimension.
template <class T>
struct array_t {
  T* data;                    ///< element (0, ..., 0); null for an absent array
  T* grad;                    ///< gradient buffer with the same strides, or null
  kj_int32 shape[kMaxDims];   ///< extent per dimension; unused ones are 0
  kj_int32 ndim;              ///< 1..4 (0 for an absent array)
  kj_int32 flags;             ///< kArrayPrivate or 0 (what launches pass)
  kj_int64 strides[kMaxDims]; ///< byte stride per dimension
};

static_assert(sizeof(launch_status_t) == 40, "launch_status_t layout changed");
static_assert(sizeof(launch_bounds_t) == 40, "launch_bounds_t layout changed");
static_assert(alignof(launch_bounds_t) == 8, "launch_bounds_t alignment changed");
static_assert(sizeof(array_t<float>) == 72, "array_t layout changed");
static_assert(alignof(array_t<float>) == 8, "array_t alignment changed");

}  // namespace kj

#endif  // KJIT_ABI_H
