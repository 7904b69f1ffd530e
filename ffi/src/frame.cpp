// Call-frame decoding: errors, the metadata probe, attributes, buffers, dtypes, stream, device.
#include "frame.hpp"

#include "kjit/ffi/ffi.hpp"

#include <atomic>
#include <cstring>

namespace kjit::ffi::detail {

namespace {

/// Largest buffer rank a kjit argument can have: 4 array dims plus a matrix's 2 inner dims,
/// plus vmap's batch dims (kjit accepts up to 4 of those).
constexpr int64_t kMaxRank = 10;

constexpr size_t kCallFrameSize01 = offsetof(xla::CallFrame, attrs) + sizeof(xla::Attrs);
constexpr size_t kApiSizeErrorCreate = offsetof(xla::Api, Error_Create) + sizeof(void*);

const xla::Buffer& checked_buffer(void* p, int type, bool is_arg, int64_t i) {
  const char* what = is_arg ? "argument" : "result";
  if (type != xla::kArgBuffer)
    invalid(std::string("the call frame's ") + what + " " + std::to_string(i) + " is not a buffer (type " +
            std::to_string(type) + ")");
  if (!p) invalid(std::string("the call frame's ") + what + " " + std::to_string(i) + " is null");
  const auto& b = *static_cast<const xla::Buffer*>(p);
  if (b.rank < 0 || b.rank > kMaxRank)
    invalid(std::string("the call frame's ") + what + " " + std::to_string(i) + " has rank " +
            std::to_string(b.rank) + " (kjit accepts 0 to " + std::to_string(kMaxRank) + ")");
  if (b.rank > 0 && !b.dims)
    invalid(std::string("the call frame's ") + what + " " + std::to_string(i) + " has no dims");
  for (int64_t d = 0; d < b.rank; ++d)
    if (b.dims[d] < 0)
      invalid(std::string("the call frame's ") + what + " " + std::to_string(i) + " has a negative extent " +
              std::to_string(b.dims[d]));
  return b;
}

}  // namespace

void fail(xla::ErrorCode code, std::string message) { throw HandlerError{code, std::move(message)}; }
void invalid(std::string message) { fail(xla::kInvalidArgument, std::move(message)); }

xla::Error* make_error(const xla::Api* api, xla::ErrorCode code, const std::string& message) noexcept {
  if (!api || api->struct_size < kApiSizeErrorCreate || !api->Error_Create) return nullptr;
  xla::ErrorCreateArgs args{};
  args.struct_size = sizeof(args);
  args.extension_start = nullptr;
  args.message = message.c_str();  // XLA copies it into its status
  args.errc = code;
  return api->Error_Create(&args);
}

xla::ErrorCode code_for(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::User: return xla::kInvalidArgument;
    case ErrorKind::Driver: return xla::kUnavailable;
    case ErrorKind::Compile:
    case ErrorKind::Cache:
    case ErrorKind::Internal: return xla::kInternal;
  }
  return xla::kInternal;
}

namespace {
std::atomic<int> g_declared_api_minor{xla::kApiMinor};
}  // namespace

bool answer_metadata(xla::CallFrame* frame, uint32_t traits) {
  if (frame->struct_size < offsetof(xla::CallFrame, extension_start) + sizeof(void*))
    fail(xla::kFailedPrecondition, "the XLA call frame is smaller (" + std::to_string(frame->struct_size) +
                                       " bytes) than its extension list needs");
  // Walk at most kMaxExtensions entries: a cycle (or an endless list) is reported, not followed.
  int count = 0;
  for (xla::ExtensionBase* ext = frame->extension_start; ext; ext = ext->next) {
    if (++count > kMaxExtensions)
      invalid("the call frame's extension list is cyclic or longer than " + std::to_string(kMaxExtensions) +
              " entries");
    if (ext->type != xla::kExtensionMetadata) continue;
    auto* m = reinterpret_cast<xla::MetadataExtension*>(ext);
    if (!m->metadata)
      invalid("the call frame's metadata extension has no metadata to fill (XLA's probe always passes one); "
              "the call did not run");
    m->metadata->api_version.major_version = xla::kApiMajor;
    m->metadata->api_version.minor_version = declared_api_version();
    m->metadata->traits = traits;
    return true;
  }
  return false;
}

void check_frame(const xla::CallFrame* frame) {
  if (frame->struct_size < kCallFrameSize01)
    fail(xla::kFailedPrecondition, "the XLA call frame is smaller (" + std::to_string(frame->struct_size) +
                                       " bytes) than FFI API 0.1 defines (" + std::to_string(kCallFrameSize01) +
                                       ")");
  if (!frame->api)
    fail(xla::kFailedPrecondition, "the XLA call frame has no api");  // unreportable: guarded() drops it
  if (frame->api->struct_size < kApiSizeErrorCreate)
    fail(xla::kFailedPrecondition, "the XLA FFI api is smaller (" + std::to_string(frame->api->struct_size) +
                                       " bytes) than FFI API 0.1 defines");
  const xla::Args& a = frame->args;
  const xla::Rets& r = frame->rets;
  const xla::Attrs& t = frame->attrs;
  // Counts are int64 in the ABI; bound them before anything converts them to int.
  auto count = [](int64_t n, const char* what) {
    if (n < 0 || n > kMaxFrameEntries)
      invalid(std::string("the call frame's ") + what + " table has " + std::to_string(n) + " entries (kjit accepts 0 to " +
              std::to_string(kMaxFrameEntries) + ")");
  };
  count(a.size, "argument");
  count(r.size, "result");
  count(t.size, "attribute");
  if (a.size > 0 && (!a.types || !a.args)) invalid("the call frame's argument table is malformed");
  if (r.size > 0 && (!r.types || !r.rets)) invalid("the call frame's result table is malformed");
  if (t.size > 0 && (!t.types || !t.names || !t.attrs)) invalid("the call frame's attribute table is malformed");
}

AttrRef find_attr(const xla::Attrs& attrs, std::string_view name) {
  for (int64_t i = 0; i < attrs.size; ++i) {
    if (view(attrs.names[i]) != name) continue;
    AttrRef r;
    r.type = attrs.types[i];
    r.value = attrs.attrs[i];
    if (!r.value) invalid("attribute '" + std::string(name) + "' has no value");
    return r;
  }
  return AttrRef{};
}

std::string_view attr_string(AttrRef a, std::string_view name) {
  if (a.type != xla::kAttrString)
    invalid("attribute '" + std::string(name) + "' must be a string");
  return view(static_cast<const xla::ByteSpan*>(a.value));
}

namespace {
bool read_int(xla::DataType t, const void* p, int64_t* out) {
  switch (t) {
    case xla::kS8: { int8_t v; std::memcpy(&v, p, 1); *out = v; return true; }
    case xla::kS16: { int16_t v; std::memcpy(&v, p, 2); *out = v; return true; }
    case xla::kS32: { int32_t v; std::memcpy(&v, p, 4); *out = v; return true; }
    case xla::kS64: { int64_t v; std::memcpy(&v, p, 8); *out = v; return true; }
    case xla::kU8: { uint8_t v; std::memcpy(&v, p, 1); *out = v; return true; }
    case xla::kU16: { uint16_t v; std::memcpy(&v, p, 2); *out = v; return true; }
    case xla::kU32: { uint32_t v; std::memcpy(&v, p, 4); *out = v; return true; }
    case xla::kU64: {
      uint64_t v; std::memcpy(&v, p, 8);
      if (v > uint64_t(INT64_MAX)) return false;
      *out = int64_t(v); return true;
    }
    default: return false;
  }
}
}  // namespace

int64_t attr_int(AttrRef a, std::string_view name) {
  int64_t v = 0;
  if (a.type == xla::kAttrScalar) {
    const auto* s = static_cast<const xla::Scalar*>(a.value);
    if (s->value && read_int(s->dtype, s->value, &v)) return v;
  } else if (a.type == xla::kAttrArray) {
    const auto* arr = static_cast<const xla::Array*>(a.value);
    if (arr->size == 1 && arr->data && read_int(arr->dtype, arr->data, &v)) return v;
  }
  invalid("attribute '" + std::string(name) + "' must be an integer");
}

int attr_int_array(AttrRef a, std::string_view name, int64_t* out, int max) {
  if (a.type == xla::kAttrScalar) {
    out[0] = attr_int(a, name);
    return 1;
  }
  if (a.type != xla::kAttrArray) invalid("attribute '" + std::string(name) + "' must be an array of integers");
  const auto* arr = static_cast<const xla::Array*>(a.value);
  if (arr->size > size_t(max))
    invalid("attribute '" + std::string(name) + "' has " + std::to_string(arr->size) + " elements, at most " +
            std::to_string(max) + " allowed");
  int bytes = dtype_bytes(arr->dtype);
  if (arr->size && (!arr->data || bytes == 0)) invalid("attribute '" + std::string(name) + "' must be an array of integers");
  for (size_t i = 0; i < arr->size; ++i)
    if (!read_int(arr->dtype, static_cast<const char*>(arr->data) + i * size_t(bytes), &out[i]))
      invalid("attribute '" + std::string(name) + "' must be an array of integers, got " + dtype_name(arr->dtype));
  return int(arr->size);
}

std::string dtype_name(xla::DataType t) {
  switch (t) {
    case xla::kPred: return "bool";
    case xla::kS8: return "int8";
    case xla::kS16: return "int16";
    case xla::kS32: return "int32";
    case xla::kS64: return "int64";
    case xla::kU8: return "uint8";
    case xla::kU16: return "uint16";
    case xla::kU32: return "uint32";
    case xla::kU64: return "uint64";
    case xla::kF16: return "float16";
    case xla::kF32: return "float32";
    case xla::kF64: return "float64";
    case xla::kBF16: return "bfloat16";
    case xla::kC64: return "complex64";
    case xla::kC128: return "complex128";
    case xla::kToken: return "token";
    case xla::kF8E5M2: return "float8_e5m2";
    case xla::kF8E4M3FN: return "float8_e4m3fn";
    case xla::kF8E3M4: return "float8_e3m4";
    case xla::kF8E4M3: return "float8_e4m3";
    case xla::kF8E4M3B11FNUZ: return "float8_e4m3b11fnuz";
    case xla::kF8E5M2FNUZ: return "float8_e5m2fnuz";
    case xla::kF8E4M3FNUZ: return "float8_e4m3fnuz";
    case xla::kF4E2M1FN: return "float4_e2m1fn";
    case xla::kF8E8M0FNU: return "float8_e8m0fnu";
    case xla::kS1: return "int1";
    case xla::kS2: return "int2";
    case xla::kS4: return "int4";
    case xla::kU1: return "uint1";
    case xla::kU2: return "uint2";
    case xla::kU4: return "uint4";
    case xla::kInvalid: break;
  }
  return "dtype " + std::to_string(int(t));
}

int dtype_bytes(xla::DataType t) {
  switch (t) {
    case xla::kPred: case xla::kS8: case xla::kU8: return 1;
    case xla::kS16: case xla::kU16: case xla::kF16: case xla::kBF16: return 2;
    case xla::kS32: case xla::kU32: case xla::kF32: return 4;
    case xla::kS64: case xla::kU64: case xla::kF64: case xla::kC64: return 8;
    case xla::kC128: return 16;
    default: return 0;
  }
}

xla::DataType dtype_of(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::Bool: return xla::kPred;
    case ir::Scalar::I8: return xla::kS8;
    case ir::Scalar::U8: return xla::kU8;
    case ir::Scalar::I16: return xla::kS16;
    case ir::Scalar::U16: return xla::kU16;
    case ir::Scalar::I32: return xla::kS32;
    case ir::Scalar::U32: return xla::kU32;
    case ir::Scalar::I64: return xla::kS64;
    case ir::Scalar::U64: return xla::kU64;
    case ir::Scalar::F16: return xla::kF16;
    case ir::Scalar::BF16: return xla::kBF16;
    case ir::Scalar::F32: return xla::kF32;
    case ir::Scalar::F64: return xla::kF64;
  }
  return xla::kInvalid;
}

bool scalar_of(xla::DataType t, ir::Scalar* out) {
  for (int i = 0; i < ir::kScalarCount; ++i)
    if (dtype_of(ir::Scalar(i)) == t) {
      *out = ir::Scalar(i);
      return true;
    }
  return false;
}

const xla::Buffer& arg_buffer(const xla::CallFrame* frame, int64_t i) {
  return checked_buffer(frame->args.args[i], frame->args.types[i], true, i);
}

const xla::Buffer& ret_buffer(const xla::CallFrame* frame, int64_t i) {
  return checked_buffer(frame->rets.rets[i], frame->rets.types[i], false, i);
}

std::string shape_str(const int64_t* dims, int64_t rank) {
  std::string s = "(";
  for (int64_t d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(dims[d]);
  return s + (rank == 1 ? ",)" : ")");
}

void* stream_of(const xla::CallFrame* frame) {
  const xla::Api* api = frame->api;
  if (!KJIT_XLA_API_HAS(api, Stream_Get) || !api->Stream_Get) fail(xla::kFailedPrecondition, "this XLA offers no XLA_FFI_Stream_Get");
  xla::StreamGetArgs args{};
  args.struct_size = sizeof(args);
  args.ctx = frame->ctx;
  if (xla::Error* e = api->Stream_Get(&args)) {
    // Report XLA's own error text, then release it: the handler returns a fresh one.
    std::string msg = "XLA_FFI_Stream_Get failed";
    if (api->Error_GetMessage) {
      xla::ErrorGetMessageArgs g{};  // API 0.5's size: that XLA writes g.errc too
      g.struct_size = sizeof(g);
      g.error = e;
      api->Error_GetMessage(&g);
      if (g.message) msg += std::string(": ") + g.message;
    }
    if (api->Error_Destroy) {
      xla::ErrorDestroyArgs d{};
      d.struct_size = sizeof(d);
      d.error = e;
      api->Error_Destroy(&d);
    }
    fail(xla::kInternal, msg);
  }
  return args.stream;
}

int device_ordinal_of(const xla::CallFrame* frame) {
  const xla::Api* api = frame->api;
  if (!KJIT_XLA_API_HAS(api, DeviceOrdinal_Get) || !api->DeviceOrdinal_Get) return -1;
  xla::DeviceOrdinalGetArgs args{};
  args.struct_size = sizeof(args);
  args.ctx = frame->ctx;
  if (xla::Error* e = api->DeviceOrdinal_Get(&args)) {
    if (api->Error_Destroy) {
      xla::ErrorDestroyArgs d{};
      d.struct_size = sizeof(d);
      d.error = e;
      api->Error_Destroy(&d);
    }
    fail(xla::kInternal, "XLA_FFI_DeviceOrdinal_Get failed");
  }
  return args.device_ordinal;
}

}  // namespace kjit::ffi::detail

namespace kjit::ffi {

void declare_api_version(int minor) {
  if (minor < xla::kApiMinor || minor > xla::kMirroredApiMinor)
    throw Error(ErrorKind::User, "kjit's XLA FFI handlers can declare API 0." + std::to_string(xla::kApiMinor) +
                                     " to 0." + std::to_string(xla::kMirroredApiMinor) + ", not 0." +
                                     std::to_string(minor));
  detail::g_declared_api_minor.store(minor, std::memory_order_relaxed);
}

int declared_api_version() { return detail::g_declared_api_minor.load(std::memory_order_relaxed); }

}  // namespace kjit::ffi
