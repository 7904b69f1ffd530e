// Call-frame decoding shared by every kjit FFI handler: the metadata probe, errors that never
// cross the C ABI as exceptions, attributes by name, buffers, data types, stream and device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kjit/error.hpp"
#include "kjit/ffi/xla_abi.hpp"
#include "kjit/ir/type.hpp"

namespace kjit::ffi::detail {

/// An error a handler reports to XLA: thrown inside handlers, turned into an XLA_FFI_Error
/// at the boundary (see guarded()).
struct HandlerError {
  xla::ErrorCode code;
  std::string message;
};

/// Throws HandlerError{code, message}.
[[noreturn]] void fail(xla::ErrorCode code, std::string message);
/// Throws an INVALID_ARGUMENT HandlerError: the caller passed something wrong.
[[noreturn]] void invalid(std::string message);

/// Creates an XLA error through `api` (nullptr when the api cannot create one).
xla::Error* make_error(const xla::Api* api, xla::ErrorCode code, const std::string& message) noexcept;

/// The XLA error code for a kjit::Error of `kind`.
xla::ErrorCode code_for(ErrorKind kind) noexcept;

/// Most extensions a frame's list may hold; a longer (or cyclic) list is an error, not a hang.
inline constexpr int kMaxExtensions = 64;
/// Most arguments, results or attributes a frame may hold: far above what a kjit call passes,
/// far below where counts stop fitting the int arithmetic of the decoders.
inline constexpr int64_t kMaxFrameEntries = 1 << 16;

/// Answers XLA's metadata probe (API version 0.1 and `traits`) when `frame` carries the
/// metadata extension. Returns true when the call was the probe and nothing else is to be done;
/// throws HandlerError for a cyclic or overlong extension list and for a metadata extension
/// without metadata (which is no probe: reporting success would skip the call).
bool answer_metadata(xla::CallFrame* frame, uint32_t traits);

/// Checks the parts of the frame every handler reads (api, struct sizes, arg/ret/attr tables
/// and their counts); throws HandlerError when the frame is malformed.
void check_frame(const xla::CallFrame* frame);

/// Runs `body()` for an EXECUTE call of `frame` and turns every exception into an XLA error
/// made through frame->api: nothing throws across the C ABI. Answers the metadata probe with
/// `traits`; other stages are no-ops.
/// A frame without an api (or one too small to create errors) has nothing to report
/// through: the call returns without running anything, as for a null frame.
template <class Body>
xla::Error* guarded(xla::CallFrame* frame, uint32_t traits, const char* handler, Body&& body) noexcept {
  if (!frame) return nullptr;  // nothing to report through
  const xla::Api* api = frame->api;
  try {
    if (answer_metadata(frame, traits)) return nullptr;
    check_frame(frame);
    if (frame->stage != xla::kExecute) return nullptr;
    body();
    return nullptr;
  } catch (const HandlerError& e) {
    return make_error(api, e.code, e.message);
  } catch (const Error& e) {
    return make_error(api, code_for(e.kind()), std::string(handler) + ": " + e.what());
  } catch (const std::exception& e) {
    return make_error(api, xla::kInternal, std::string(handler) + ": " + e.what());
  } catch (...) {
    return make_error(api, xla::kInternal, std::string(handler) + ": unknown exception");
  }
}

// --- attributes ------------------------------------------------------------------------

/// One attribute of a frame: its type and value pointer (nullptr when absent).
struct AttrRef {
  xla::AttrType type = xla::kAttrString;
  const void* value = nullptr;
  explicit operator bool() const { return value != nullptr; }
};

/// The attribute `name` of `attrs` (value == nullptr when absent). Throws on a malformed table.
AttrRef find_attr(const xla::Attrs& attrs, std::string_view name);
/// A string attribute's value; throws INVALID_ARGUMENT naming `name` when it is not a string.
std::string_view attr_string(AttrRef a, std::string_view name);
/// An integer scalar or 1-element array attribute as int64; throws when it is not one.
int64_t attr_int(AttrRef a, std::string_view name);
/// An integer array attribute (any integer dtype) into out[0..max); returns its length.
int attr_int_array(AttrRef a, std::string_view name, int64_t* out, int max);
/// A ByteSpan as a string_view (empty for a null span).
inline std::string_view view(const xla::ByteSpan* s) {
  return s && s->ptr ? std::string_view(s->ptr, s->len) : std::string_view();
}

// --- buffers and data types -----------------------------------------------------------

/// "float32", "int32", ... as JAX names dtypes; "dtype 99" for unknown values.
std::string dtype_name(xla::DataType t);
/// Bytes of one element of `t` (0 for types kjit cannot use).
int dtype_bytes(xla::DataType t);
/// The XLA data type of a kjit scalar kind.
xla::DataType dtype_of(ir::Scalar s);
/// The kjit scalar kind of an XLA data type; false when kjit has none.
bool scalar_of(xla::DataType t, ir::Scalar* out);

/// The i-th argument of `frame` as a buffer (checked: a buffer, non-null, sane rank).
const xla::Buffer& arg_buffer(const xla::CallFrame* frame, int64_t i);
/// The i-th result of `frame` as a buffer (checked likewise).
const xla::Buffer& ret_buffer(const xla::CallFrame* frame, int64_t i);
/// "(2, 3)": a buffer's dims as Python prints a shape.
std::string shape_str(const int64_t* dims, int64_t rank);

// --- execution context ----------------------------------------------------------------

/// XLA's stream for this call (a CUstream on the CUDA platform).
void* stream_of(const xla::CallFrame* frame);
/// The CUDA device ordinal of this call; -1 when the XLA in use predates DeviceOrdinal_Get.
int device_ordinal_of(const xla::CallFrame* frame);

}  // namespace kjit::ffi::detail
