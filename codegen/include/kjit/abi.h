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
/// 2: launch_bounds_t carries the launch's status slot.
/// 3: value parameters travel as value_t (a value, or where to read it); a value parameter's
///    adjoint is a pointer to where its sum over the launch's threads goes.
/// 4: array_t carries flags (kArrayPrivate: a launch's private zeroed copy, added into
///    plainly and merged by the runtime).
/// 5: kArrayShared (an adjoint array whose memory another argument shares: own-element adds
///    go atomic).
constexpr int kAbiVersion = 5;

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
/// into the user's array after the launch (docs/ARCHITECTURE.md, privatized adds). Never set on CUDA.
constexpr kj_int32 kArrayPrivate = 1;

/// array_t::flags: another array argument of this CUDA launch shares this adjoint array's
/// memory, so the reverse sweep's adds at the thread's own element (kj::own_add) must be atomic
/// too. The cpu runs such a launch in index order instead and never sets it.
constexpr kj_int32 kArrayShared = 2;

/// A strided array of T: the value buffer, an optional gradient buffer of the same layout,
/// the extent per dimension and the byte stride per dimension.
template <class T>
struct array_t {
  T* data;                    ///< element (0, ..., 0); null for an absent array
  T* grad;                    ///< gradient buffer with the same strides, or null
  kj_int32 shape[kMaxDims];   ///< extent per dimension; unused ones are 0
  kj_int32 ndim;              ///< 1..4 (0 for an absent array)
  kj_int32 flags;             ///< kArrayPrivate, kArrayShared or 0 (what launches pass)
  kj_int64 strides[kMaxDims]; ///< byte stride per dimension
};

/// A value parameter (anything that is not an array: a scalar, vector, matrix, quaternion,
/// transform or struct) as entry points take it: the value itself, or, when `ptr` is set,
/// where the kernel reads it — device memory on CUDA, host memory on the cpu. A launch decides
/// per parameter: the C++ runtime and static JAX arguments pass the value (ptr null); a traced
/// JAX scalar is an XLA buffer whose contents the host cannot read without waiting for the
/// stream, so its address travels and every thread reads it.
///
/// A value parameter's slot in an adjoint entry is a pointer instead, where the sum over the
/// launch's threads of the parameter's adjoint goes (null: nobody asked for it):
/// - CUDA: `T*`, the destination; each block reduces its threads' adjoints and adds the sum
///   with one atomic add (in T);
/// - cpu: `S*`, S being T with float16/bfloat16 widened to float32: one partial sum per
///   reduce_block(size) consecutive threads, partial k (threads k*block..) written (=, not +=)
///   by the entry call that runs them, which needs every call's [begin, end) to start at a
///   multiple of the block. The runtime then adds the partials, in order, into the destination.
template <class T>
struct value_t {
  const T* ptr;  ///< where to read the value, or null: `value` holds it
  T value;       ///< the value (when ptr is null), at offset 8
};

#if !defined(__CUDACC_RTC__)
/// Bytes of value_t<T> for a T of `element_bytes` bytes (T's alignment is at most 8): the
/// pointer, then the value padded to 8.
constexpr kj_int64 value_bytes(kj_int64 element_bytes) { return 8 + (element_bytes + 7) / 8 * 8; }

/// Threads per partial sum of a value parameter's adjoint on the cpu, for a launch of `size`
/// threads: at least 1024, a multiple of 16 (the lane blocks of lane functions), and never more
/// than 1024 partial sums per launch. A function of the size alone, so the sum is the same however the
/// launch is split across threads.
constexpr kj_int64 reduce_block(kj_int64 size) {
  const kj_int64 per = ((size + 1023) / 1024 + 15) / 16 * 16;
  return per > 1024 ? per : 1024;
}
/// Partial sums of a launch of `size` threads.
constexpr kj_int64 reduce_partials(kj_int64 size) { return (size + reduce_block(size) - 1) / reduce_block(size); }
#endif

static_assert(sizeof(launch_status_t) == 40, "launch_status_t layout changed");
static_assert(sizeof(launch_bounds_t) == 40, "launch_bounds_t layout changed");
static_assert(alignof(launch_bounds_t) == 8, "launch_bounds_t alignment changed");
static_assert(sizeof(array_t<float>) == 72, "array_t layout changed");
static_assert(alignof(array_t<float>) == 8, "array_t alignment changed");
static_assert(sizeof(value_t<double>) == 16 && alignof(value_t<float>) == 8, "value_t layout changed");
#if !defined(__CUDACC_RTC__)
static_assert(sizeof(value_t<float>) == value_bytes(4) && sizeof(value_t<kj_int8>) == value_bytes(1),
              "value_t layout changed");
#endif

}  // namespace kj

#endif  // KJIT_ABI_H
