// kjit_ffi_launch: a kernel entry launched on raw buffers from C (kjit.torch), through the
// very handlers XLA calls: the call becomes an in-process XLA FFI call frame whose api records
// the error and hands out the caller's stream and device, so decoding, checks, packing and
// dispatch are the kjit_launch / kjit_adjoint ones (launch_plan.cpp, kernel_handlers.cpp).
#include "kjit/ffi/c_launch.h"

#include <cstring>
#include <string>

#include "frame.hpp"
#include "kjit/ffi/ffi.hpp"
#include "launch_plan.hpp"

namespace kjit::ffi::detail {

/// The message kjit_ffi_last_error returns (c_api.cpp).
std::string& c_last_error();

namespace {

/// Most buffers and attributes one call may pass: an adjoint of a tangent kernel passes at
/// most 6 per parameter; a call passes one attribute per parameter and a few of its own.
constexpr int kMaxBuffers = 6 * kMaxParams;
constexpr int kMaxAttrs = kMaxParams + 8;

/// What the frame's api hands to the handler: the caller's stream and CUDA device.
struct Context {
  void* stream = nullptr;
  int ordinal = 0;
};

/// The frame of one call, reused by the thread's next call (no allocation per call).
struct CFrame {
  xla::CallFrame frame{};
  xla::Buffer buffers[kMaxBuffers];
  void* args[kMaxBuffers];
  void* rets[kMaxBuffers];
  xla::ArgType arg_types[kMaxBuffers];
  xla::RetType ret_types[kMaxBuffers];
  xla::ByteSpan name_spans[kMaxAttrs];
  xla::ByteSpan* names[kMaxAttrs];
  xla::AttrType attr_types[kMaxAttrs];
  void* attrs[kMaxAttrs];
  xla::Scalar scalars[kMaxAttrs];
  xla::Array arrays[kMaxAttrs];
  xla::ByteSpan strings[kMaxAttrs];
  Context context;
};

// The in-process api: an error is a thread-local record (the handler makes at most one per
// call and the launcher reads it before the next); the stream and ordinal come from the
// frame's context.
thread_local xla::ErrorCode t_code = xla::kOk;
thread_local std::string t_message;
int t_error_token;

xla::Error* create_error(xla::ErrorCreateArgs* a) {
  t_code = a->errc;
  t_message = a->message ? a->message : "";
  return reinterpret_cast<xla::Error*>(&t_error_token);
}
void get_message(xla::ErrorGetMessageArgs* a) { a->message = t_message.c_str(); }
void destroy_error(xla::ErrorDestroyArgs*) {}
xla::Error* get_stream(xla::StreamGetArgs* a) {
  a->stream = reinterpret_cast<Context*>(a->ctx)->stream;
  return nullptr;
}
xla::Error* get_ordinal(xla::DeviceOrdinalGetArgs* a) {
  a->device_ordinal = reinterpret_cast<Context*>(a->ctx)->ordinal;
  return nullptr;
}

const xla::Api* c_api() {
  static const xla::Api api = [] {
    xla::Api a{};
    a.struct_size = sizeof(xla::Api);
    a.api_version.struct_size = sizeof(xla::ApiVersion);
    a.api_version.minor_version = xla::kApiMinor;
    a.Error_Create = &create_error;
    a.Error_GetMessage = &get_message;
    a.Error_Destroy = &destroy_error;
    a.Stream_Get = &get_stream;
    a.DeviceOrdinal_Get = &get_ordinal;
    return a;
  }();
  return &api;
}

[[noreturn]] void user_error(const std::string& m) { throw Error(ErrorKind::User, m); }

/// "cpu" -> -1; "cuda:N" / "cuda" -> N.
int parse_device(const char* device) {
  const char* d = device ? device : "";
  if (std::strcmp(d, "cpu") == 0) return -1;
  if (std::strcmp(d, "cuda") == 0) return 0;
  if (std::strncmp(d, "cuda:", 5) == 0 && d[5]) {
    char* end = nullptr;
    long n = std::strtol(d + 5, &end, 10);
    if (*end == 0 && n >= 0 && n < 1024) return int(n);
  }
  user_error(std::string("kjit_ffi_launch: unknown device '") + d + "' (expected 'cpu' or 'cuda:N')");
}

/// The buffer `b` as an XLA buffer; strides must be row-major (what the handlers index).
void fill_buffer(xla::Buffer& out, const kjit_c_buffer& b, void* data, const char* role, int64_t i,
                 const char* kernel) {
  if (b.rank < 0 || b.rank > 16 || (b.rank > 0 && !b.dims))
    user_error(std::string("kjit kernel '") + kernel + "': " + role + " " + std::to_string(i) + " has rank " +
               std::to_string(b.rank));
  if (b.strides) {
    int64_t want = 1;
    for (int d = b.rank - 1; d >= 0; --d) {
      if (b.dims[d] != 1 && b.strides[d] != want)
        user_error(std::string("kjit kernel '") + kernel + "': " + role + " " + std::to_string(i) + " has strides " +
                   shape_str(b.strides, b.rank) + " for shape " + shape_str(b.dims, b.rank) +
                   ": kjit launches read dense row-major arrays");
      want *= b.dims[d];
    }
  }
  out.struct_size = sizeof(xla::Buffer);
  out.extension_start = nullptr;
  out.dtype = xla::DataType(b.dtype);
  out.data = data;
  out.rank = b.rank;
  out.dims = const_cast<int64_t*>(b.dims);
}

/// The frame of a call; `data` (nullable) holds the buffers' data pointers, operands first.
void build(CFrame& f, const char* kernel, const kjit_c_buffer* args, int64_t nargs, const kjit_c_buffer* rets,
           int64_t nrets, const kjit_c_attr* attrs, int64_t nattrs, void* const* data) {
  if (nargs < 0 || nrets < 0 || nargs + nrets > kMaxBuffers || (nargs && !args) || (nrets && !rets))
    user_error(std::string("kjit kernel '") + kernel + "': a call passes 0 to " + std::to_string(kMaxBuffers) +
               " buffers, got " + std::to_string(nargs) + " operands and " + std::to_string(nrets) + " results");
  if (nattrs < 0 || nattrs + 1 > kMaxAttrs || (nattrs && !attrs))
    user_error(std::string("kjit kernel '") + kernel + "': at most " + std::to_string(kMaxAttrs - 1) +
               " attributes, got " + std::to_string(nattrs));
  for (int64_t i = 0; i < nargs; ++i) {
    fill_buffer(f.buffers[i], args[i], data ? data[i] : args[i].data, "operand", i, kernel);
    f.args[i] = &f.buffers[i];
    f.arg_types[i] = xla::kArgBuffer;
  }
  for (int64_t i = 0; i < nrets; ++i) {
    fill_buffer(f.buffers[nargs + i], rets[i], data ? data[nargs + i] : rets[i].data, "result", i, kernel);
    f.rets[i] = &f.buffers[nargs + i];
    f.ret_types[i] = xla::kRetBuffer;
  }
  // Attribute 0 names the kernel; the caller's follow.
  f.strings[0] = xla::ByteSpan{kernel, std::strlen(kernel)};
  f.name_spans[0] = xla::ByteSpan{kAttrKernel, std::strlen(kAttrKernel)};
  f.attr_types[0] = xla::kAttrString;
  f.attrs[0] = &f.strings[0];
  for (int64_t i = 0; i < nattrs; ++i) {
    const kjit_c_attr& a = attrs[i];
    const int64_t j = i + 1;
    if (!a.name || (!a.data && a.count))
      user_error(std::string("kjit kernel '") + kernel + "': attribute " + std::to_string(i) + " is malformed");
    f.name_spans[j] = xla::ByteSpan{a.name, std::strlen(a.name)};
    switch (a.kind) {
      case KJIT_C_ATTR_SCALAR:
        f.scalars[j] = xla::Scalar{xla::DataType(a.dtype), const_cast<void*>(a.data)};
        f.attr_types[j] = xla::kAttrScalar;
        f.attrs[j] = &f.scalars[j];
        break;
      case KJIT_C_ATTR_ARRAY:
        f.arrays[j] = xla::Array{xla::DataType(a.dtype), size_t(a.count), const_cast<void*>(a.data)};
        f.attr_types[j] = xla::kAttrArray;
        f.attrs[j] = &f.arrays[j];
        break;
      case KJIT_C_ATTR_STRING:
        f.strings[j] = xla::ByteSpan{static_cast<const char*>(a.data), size_t(a.count)};
        f.attr_types[j] = xla::kAttrString;
        f.attrs[j] = &f.strings[j];
        break;
      default:
        user_error(std::string("kjit kernel '") + kernel + "': attribute '" + a.name + "' has unknown kind " +
                   std::to_string(a.kind));
    }
  }
  for (int64_t j = 0; j <= nattrs; ++j) f.names[j] = &f.name_spans[j];
  xla::CallFrame& c = f.frame;
  c = xla::CallFrame{};
  c.struct_size = sizeof(xla::CallFrame);
  c.api = c_api();
  c.ctx = reinterpret_cast<xla::ExecutionContext*>(&f.context);
  c.stage = xla::kExecute;
  c.args = xla::Args{sizeof(xla::Args), nullptr, nargs, f.arg_types, f.args};
  c.rets = xla::Rets{sizeof(xla::Rets), nullptr, nrets, f.ret_types, f.rets};
  c.attrs = xla::Attrs{sizeof(xla::Attrs), nullptr, nattrs + 1, f.attr_types, f.names, f.attrs};
}

int launch(const char* kernel, int adjoint, const char* device, void* stream, const kjit_c_buffer* args,
           int64_t nargs, const kjit_c_buffer* rets, int64_t nrets, const kjit_c_attr* attrs, int64_t nattrs,
           void* const* data) {
  std::string& err = c_last_error();
  try {
    err.clear();
    if (!kernel) user_error("kjit_ffi_launch: no kernel name");
    thread_local CFrame f;
    const int ordinal = parse_device(device);
    f.context = Context{stream, ordinal < 0 ? 0 : ordinal};
    build(f, kernel, args, nargs, rets, nrets, attrs, nattrs, data);
    kjit::xla::Error* e;
    if (ordinal < 0)
      e = adjoint ? kjit_xla_adjoint_cpu(&f.frame) : kjit_xla_launch_cpu(&f.frame);
    else
      e = adjoint ? kjit_xla_adjoint_cuda(&f.frame) : kjit_xla_launch_cuda(&f.frame);
    if (!e) return 0;
    err = t_message;
  } catch (const HandlerError& e) {
    err = e.message;
  } catch (const std::exception& e) {
    err = e.what();
  } catch (...) {
    err = "unknown error";
  }
  return -1;
}

}  // namespace

}  // namespace kjit::ffi::detail

extern "C" KJIT_FFI_EXPORT int kjit_ffi_launch(const char* kernel, int adjoint, const char* device, void* stream,
                                                 const kjit_c_buffer* args, int64_t nargs, const kjit_c_buffer* rets,
                                                 int64_t nrets, const kjit_c_attr* attrs, int64_t nattrs) {
  return kjit::ffi::detail::launch(kernel, adjoint, device, stream, args, nargs, rets, nrets, attrs, nattrs, nullptr);
}

extern "C" KJIT_FFI_EXPORT int kjit_ffi_launch_call(const kjit_c_call* call, void* const* data, void* stream) {
  if (!call) {
    kjit::ffi::detail::c_last_error() = "kjit_ffi_launch_call: no call";
    return -1;
  }
  return kjit::ffi::detail::launch(call->kernel, call->adjoint, call->device, stream, call->args, call->nargs,
                                   call->rets, call->nrets, call->attrs, call->nattrs, data);
}
