/* kjit/ffi/c_launch.h — launching a kernel entry (forward, adjoint, tangent) on raw buffers from
 * C (the Python kjit.torch shim calls it through ctypes). The call is decoded, checked and
 * packed exactly as an XLA FFI call of the kjit_launch / kjit_adjoint handlers is (same
 * operands, same attributes, same error texts): see kjit/ffi/ffi.hpp and docs/TORCH.md. */
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One array operand or result: dense row-major memory at `data` on the call's device. */
typedef struct kjit_c_buffer {
  void* data;
  int32_t dtype;           /**< an XLA data type (kjit::xla::DataType): 11 float32, 12 float64, 4 int32 ... */
  int32_t rank;
  const int64_t* dims;     /**< `rank` extents */
  const int64_t* strides;  /**< `rank` strides in elements, or NULL for row-major; only row-major is accepted */
} kjit_c_buffer;

/** Attribute kinds of kjit_c_attr. */
enum { KJIT_C_ATTR_SCALAR = 0, KJIT_C_ATTR_ARRAY = 1, KJIT_C_ATTR_STRING = 2 };

/** One attribute, as the XLA handlers read them (kjit_in_out, kjit_traced, kjit_array_order,
 * kjit_launch_dims, kjit_block_dim, or a static value parameter named after it). */
typedef struct kjit_c_attr {
  const char* name;
  int32_t kind;        /**< KJIT_C_ATTR_* */
  int32_t dtype;       /**< element type (XLA data type) of a scalar or array */
  int64_t count;       /**< array elements, or string bytes */
  const void* data;
} kjit_c_attr;

/** Launches `kernel` (a qualified name; "<name>.tangent" for its tangent kernel) forward
 * (`adjoint` 0) or its adjoint (1) on `device` ("cpu" or "cuda:N", on CUstream `stream`), with
 * `args` and `rets` as the kjit_launch / kjit_adjoint FFI handlers take them. Returns 0, or -1
 * with the message in kjit_ffi_last_error() (it names the kernel and the argument). */
int kjit_ffi_launch(const char* kernel, int adjoint, const char* device, void* stream, const kjit_c_buffer* args,
                    int64_t nargs, const kjit_c_buffer* rets, int64_t nrets, const kjit_c_attr* attrs,
                    int64_t nattrs);

/** A call of kjit_ffi_launch prepared once and launched many times (kjit.torch keeps one per
 * kernel entry and argument layout): the same fields, in one struct, so that a launch passes
 * three pointers across a language boundary instead of ten values. */
typedef struct kjit_c_call {
  const char* kernel;
  int32_t adjoint;
  int32_t reserved;  /**< 0 */
  const char* device;
  const kjit_c_buffer* args;
  int64_t nargs;
  const kjit_c_buffer* rets;
  int64_t nrets;
  const kjit_c_attr* attrs;
  int64_t nattrs;
} kjit_c_call;

/** kjit_ffi_launch(call->kernel, ..., call->nattrs) on CUstream `stream`, where `data`, if not
 * NULL, holds the nargs + nrets data pointers (operands, then results) that stand for the
 * buffers' own `data` (the buffers' dims stay; only the memory moves from launch to launch).
 * Returns 0, or -1 with the message in kjit_ffi_last_error(). */
int kjit_ffi_launch_call(const kjit_c_call* call, void* const* data, void* stream);

#ifdef __cplusplus
}
#endif
