// Checks kjit's own XLA FFI declarations (kjit/ffi/xla_abi.hpp) against jaxlib's c_api.h:
// the same sizes, offsets and enum values. Built once per JAX venv (oldest and newest tested
// jaxlib), each against that venv's header; the few differences between API versions are
// detected from the header itself, not from its version number.
#include <cstddef>
#include <cstdio>
#include <type_traits>

#include "kjit/ffi/xla_abi.hpp"
#include "xla/ffi/api/c_api.h"

static int failures = 0;

#define SAME(a, b)                                                                          \
  do {                                                                                      \
    if ((size_t)(a) != (size_t)(b)) {                                                       \
      std::printf("MISMATCH %s = %zu, %s = %zu\n", #a, (size_t)(a), #b, (size_t)(b));       \
      ++failures;                                                                           \
    }                                                                                       \
  } while (0)
#define SAME_STRUCT(ours, theirs) \
  SAME(sizeof(kjit::xla::ours), sizeof(theirs)); SAME(alignof(kjit::xla::ours), alignof(theirs))
#define SAME_FIELD(ours, theirs, f1, f2) SAME(offsetof(kjit::xla::ours, f1), offsetof(theirs, f2))

// Differences between API versions, detected from the header itself: API 0.3 added
// XLA_FFI_Metadata::state_type_id and renamed XLA_FFI_TypeId_Register to XLA_FFI_Type_Register
// (same slot); API 0.5 renamed XLA_FFI_Extension_Base to XLA_FFI_InternalExtension and
// XLA_FFI_ExecutionContext_Get to XLA_FFI_InvokeContext_Get (same layouts and slots), grew
// XLA_FFI_Error_GetMessage_Args into XLA_FFI_Error_GetDetails_Args (an `errc` output) and added
// two Api entries. Names that differ are reached through a template parameter, so that a
// header without them still compiles.
// Has<Name><T>::value: whether T has `member` (one detector per name the versions differ in).
#define KJIT_MEMBER_DETECTOR(Name, member)                                   \
  template <class T, class = void>                                          \
  struct Has##Name : std::false_type {};                                    \
  template <class T>                                                        \
  struct Has##Name<T, std::void_t<decltype(&T::member)>> : std::true_type {};
KJIT_MEMBER_DETECTOR(StateTypeId, state_type_id)
KJIT_MEMBER_DETECTOR(TypeRegister, XLA_FFI_Type_Register)
KJIT_MEMBER_DETECTOR(GetDetails, XLA_FFI_Error_GetDetails)
KJIT_MEMBER_DETECTOR(InvokeContext, XLA_FFI_InvokeContext_Get)
KJIT_MEMBER_DETECTOR(CustomOptions, XLA_FFI_CustomOptions_Get)
#undef KJIT_MEMBER_DETECTOR

/// The argument struct of an Api entry, from its function pointer type.
template <class F>
struct ArgsOf;
template <class R, class A>
struct ArgsOf<R (*)(A*)> {
  using type = A;
};

/// XLA_FFI_Extension_Base or XLA_FFI_InternalExtension: whatever a call frame's list holds.
using XlaExtension = std::remove_pointer_t<decltype(XLA_FFI_CallFrame::extension_start)>;

template <class T>
size_t type_register_offset() {
  if constexpr (HasTypeRegister<T>::value) return offsetof(T, XLA_FFI_Type_Register);
  else return offsetof(T, XLA_FFI_TypeId_Register);
}

template <class T>
size_t context_get_offset() {
  if constexpr (HasInvokeContext<T>::value) return offsetof(T, XLA_FFI_InvokeContext_Get);
  else return offsetof(T, XLA_FFI_ExecutionContext_Get);
}

template <class T>
void check_metadata() {
  if constexpr (HasStateTypeId<T>::value) {
    SAME_STRUCT(Metadata, T);
    SAME_FIELD(Metadata, T, state_type_id, state_type_id);
    SAME_STRUCT(TypeId, XLA_FFI_TypeId);
  } else {
    // An 0.1 XLA's metadata ends where kjit's 0.3 layout adds state_type_id, which kjit never
    // writes (tests/ffi/test_handlers.cpp probes with exactly this much memory).
    SAME(kjit::xla::kMetadataSize01, XLA_FFI_Metadata_STRUCT_SIZE);
    SAME(offsetof(kjit::xla::Metadata, state_type_id), sizeof(T));
  }
}

// The error-message arguments kjit passes to XLA (frame.cpp, stream_of's error path): API 0.5's
// XLA writes `errc` as well, so kjit's struct must be the 0.5 one, and its struct_size at least
// what every XLA checks (each checks struct_size >= its own STRUCT_SIZE).
template <class T>
void check_error_details() {
  using Ours = kjit::xla::ErrorGetMessageArgs;
  if constexpr (HasGetDetails<T>::value) {
    using Theirs = typename ArgsOf<decltype(T::XLA_FFI_Error_GetDetails)>::type;
    SAME(sizeof(Ours), sizeof(Theirs));
    SAME(alignof(Ours), alignof(Theirs));
    SAME(offsetof(Ours, error), offsetof(Theirs, error));
    SAME(offsetof(Ours, message), offsetof(Theirs, message));
    SAME(offsetof(Ours, errc), offsetof(Theirs, errc));
    if (sizeof(Ours) < offsetof(Theirs, errc) + sizeof(Theirs::errc)) {  // the 0.5 STRUCT_SIZE
      std::printf("MISMATCH kjit's error-details arguments end before this XLA's errc\n");
      ++failures;
    }
    SAME(offsetof(kjit::xla::Api, Error_GetMessage), offsetof(T, XLA_FFI_Error_GetDetails));
  } else {
    using Theirs = typename ArgsOf<decltype(T::XLA_FFI_Error_GetMessage)>::type;
    SAME(kjit::xla::kErrorGetMessageSize01, sizeof(Theirs));
    SAME(offsetof(Ours, error), offsetof(Theirs, error));
    SAME(offsetof(Ours, message), offsetof(Theirs, message));
    if (sizeof(Ours) < sizeof(Theirs)) {
      std::printf("MISMATCH kjit's error-message arguments (%zu bytes) are smaller than this XLA's (%zu)\n",
                  sizeof(Ours), sizeof(Theirs));
      ++failures;
    }
    SAME(offsetof(kjit::xla::Api, Error_GetMessage), offsetof(T, XLA_FFI_Error_GetMessage));
  }
}

// The function table: as long as kjit's where the header is as new, else ending where kjit's
// first newer entry starts (kjit checks struct_size before using an entry).
template <class T>
void check_api_size() {
  if constexpr (HasCustomOptions<T>::value) {
    SAME_STRUCT(Api, T);
    SAME_FIELD(Api, T, InvokeContext_FindExtension, XLA_FFI_InvokeContext_FindExtension);
    SAME_FIELD(Api, T, CustomOptions_Get, XLA_FFI_CustomOptions_Get);
  } else {
    SAME(offsetof(kjit::xla::Api, InvokeContext_FindExtension), sizeof(T));
  }
}

int main() {
  SAME_STRUCT(ExtensionBase, XlaExtension);
  SAME_FIELD(ExtensionBase, XlaExtension, type, type);
  SAME_FIELD(ExtensionBase, XlaExtension, next, next);
  SAME_STRUCT(ApiVersion, XLA_FFI_Api_Version);
  SAME_FIELD(ApiVersion, XLA_FFI_Api_Version, minor_version, minor_version);
  SAME_STRUCT(ErrorCreateArgs, XLA_FFI_Error_Create_Args);
  SAME_FIELD(ErrorCreateArgs, XLA_FFI_Error_Create_Args, message, message);
  SAME_FIELD(ErrorCreateArgs, XLA_FFI_Error_Create_Args, errc, errc);
  check_error_details<XLA_FFI_Api>();
  SAME_STRUCT(ErrorDestroyArgs, XLA_FFI_Error_Destroy_Args);
  SAME_STRUCT(Buffer, XLA_FFI_Buffer);
  SAME_FIELD(Buffer, XLA_FFI_Buffer, dtype, dtype);
  SAME_FIELD(Buffer, XLA_FFI_Buffer, data, data);
  SAME_FIELD(Buffer, XLA_FFI_Buffer, rank, rank);
  SAME_FIELD(Buffer, XLA_FFI_Buffer, dims, dims);
  SAME_STRUCT(ByteSpan, XLA_FFI_ByteSpan);
  SAME_STRUCT(Scalar, XLA_FFI_Scalar);
  SAME_FIELD(Scalar, XLA_FFI_Scalar, value, value);
  SAME_STRUCT(Array, XLA_FFI_Array);
  SAME_FIELD(Array, XLA_FFI_Array, size, size);
  SAME_FIELD(Array, XLA_FFI_Array, data, data);
  SAME_STRUCT(Args, XLA_FFI_Args);
  SAME_FIELD(Args, XLA_FFI_Args, size, size);
  SAME_FIELD(Args, XLA_FFI_Args, types, types);
  SAME_FIELD(Args, XLA_FFI_Args, args, args);
  SAME_STRUCT(Rets, XLA_FFI_Rets);
  SAME_FIELD(Rets, XLA_FFI_Rets, rets, rets);
  SAME_STRUCT(Attrs, XLA_FFI_Attrs);
  SAME_FIELD(Attrs, XLA_FFI_Attrs, types, types);
  SAME_FIELD(Attrs, XLA_FFI_Attrs, names, names);
  SAME_FIELD(Attrs, XLA_FFI_Attrs, attrs, attrs);
  SAME_STRUCT(CallFrame, XLA_FFI_CallFrame);
  SAME_FIELD(CallFrame, XLA_FFI_CallFrame, api, api);
  SAME_FIELD(CallFrame, XLA_FFI_CallFrame, ctx, ctx);
  SAME_FIELD(CallFrame, XLA_FFI_CallFrame, stage, stage);
  SAME_FIELD(CallFrame, XLA_FFI_CallFrame, args, args);
  SAME_FIELD(CallFrame, XLA_FFI_CallFrame, rets, rets);
  SAME_FIELD(CallFrame, XLA_FFI_CallFrame, attrs, attrs);
  SAME_FIELD(CallFrame, XLA_FFI_CallFrame, future, future);
  SAME_STRUCT(StreamGetArgs, XLA_FFI_Stream_Get_Args);
  SAME_FIELD(StreamGetArgs, XLA_FFI_Stream_Get_Args, stream, stream);
  SAME_STRUCT(DeviceOrdinalGetArgs, XLA_FFI_DeviceOrdinal_Get_Args);
  SAME_FIELD(DeviceOrdinalGetArgs, XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal, device_ordinal);
  check_metadata<XLA_FFI_Metadata>();
  SAME(kjit::xla::kMetadataSize01, XLA_FFI_Metadata_STRUCT_SIZE);
  SAME_FIELD(Metadata, XLA_FFI_Metadata, api_version, api_version);
  SAME_FIELD(Metadata, XLA_FFI_Metadata, traits, traits);
  SAME_STRUCT(MetadataExtension, XLA_FFI_Metadata_Extension);
  SAME_FIELD(MetadataExtension, XLA_FFI_Metadata_Extension, metadata, metadata);
  check_api_size<XLA_FFI_Api>();
  SAME_FIELD(Api, XLA_FFI_Api, api_version, api_version);
  SAME_FIELD(Api, XLA_FFI_Api, Error_Create, XLA_FFI_Error_Create);
  SAME_FIELD(Api, XLA_FFI_Api, Error_Destroy, XLA_FFI_Error_Destroy);
  SAME_FIELD(Api, XLA_FFI_Api, Stream_Get, XLA_FFI_Stream_Get);
  SAME(offsetof(kjit::xla::Api, Type_Register), type_register_offset<XLA_FFI_Api>());
  SAME(offsetof(kjit::xla::Api, ExecutionContext_Get), context_get_offset<XLA_FFI_Api>());
  SAME_FIELD(Api, XLA_FFI_Api, RunId_Get, XLA_FFI_RunId_Get);
  SAME_FIELD(Api, XLA_FFI_Api, DeviceOrdinal_Get, XLA_FFI_DeviceOrdinal_Get);

  // The handlers declare 0.1 unless told a newer version (the JAX shim negotiates the newest
  // this XLA accepts); the mirror must be at least as new as the header.
  SAME(kjit::xla::kApiMajor, XLA_FFI_API_MAJOR);
  if (kjit::xla::kApiMinor > XLA_FFI_API_MINOR || kjit::xla::kMirroredApiMinor < XLA_FFI_API_MINOR) {
    std::printf("MISMATCH this c_api.h is API 0.%d; kjit declares 0.%d and mirrors up to 0.%d\n", XLA_FFI_API_MINOR,
                kjit::xla::kApiMinor, kjit::xla::kMirroredApiMinor);
    ++failures;
  }
  SAME(kjit::xla::kExtensionMetadata, XLA_FFI_Extension_Metadata);
  SAME(kjit::xla::kExecute, XLA_FFI_ExecutionStage_EXECUTE);
  SAME(kjit::xla::kInstantiate, XLA_FFI_ExecutionStage_INSTANTIATE);
#if XLA_FFI_API_MINOR >= 5
  SAME(kjit::xla::kRecord, XLA_FFI_ExecutionStage_RECORD);
#endif
  SAME(kjit::xla::kInvalidArgument, XLA_FFI_Error_Code_INVALID_ARGUMENT);
  SAME(kjit::xla::kNotFound, XLA_FFI_Error_Code_NOT_FOUND);
  SAME(kjit::xla::kInternal, XLA_FFI_Error_Code_INTERNAL);
  SAME(kjit::xla::kUnimplemented, XLA_FFI_Error_Code_UNIMPLEMENTED);
  SAME(kjit::xla::kArgBuffer, XLA_FFI_ArgType_BUFFER);
  SAME(kjit::xla::kRetBuffer, XLA_FFI_RetType_BUFFER);
  SAME(kjit::xla::kAttrArray, XLA_FFI_AttrType_ARRAY);
  SAME(kjit::xla::kAttrDictionary, XLA_FFI_AttrType_DICTIONARY);
  SAME(kjit::xla::kAttrScalar, XLA_FFI_AttrType_SCALAR);
  SAME(kjit::xla::kAttrString, XLA_FFI_AttrType_STRING);
  SAME(kjit::xla::kCommandBufferCompatible, XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE);
  SAME(kjit::xla::kPred, XLA_FFI_DataType_PRED);
  SAME(kjit::xla::kS8, XLA_FFI_DataType_S8);
  SAME(kjit::xla::kS16, XLA_FFI_DataType_S16);
  SAME(kjit::xla::kS32, XLA_FFI_DataType_S32);
  SAME(kjit::xla::kS64, XLA_FFI_DataType_S64);
  SAME(kjit::xla::kU8, XLA_FFI_DataType_U8);
  SAME(kjit::xla::kU16, XLA_FFI_DataType_U16);
  SAME(kjit::xla::kU32, XLA_FFI_DataType_U32);
  SAME(kjit::xla::kU64, XLA_FFI_DataType_U64);
  SAME(kjit::xla::kF16, XLA_FFI_DataType_F16);
  SAME(kjit::xla::kF32, XLA_FFI_DataType_F32);
  SAME(kjit::xla::kF64, XLA_FFI_DataType_F64);
  SAME(kjit::xla::kBF16, XLA_FFI_DataType_BF16);
  SAME(kjit::xla::kC64, XLA_FFI_DataType_C64);
  SAME(kjit::xla::kC128, XLA_FFI_DataType_C128);
  SAME(kjit::xla::kToken, XLA_FFI_DataType_TOKEN);
  SAME(kjit::xla::kF8E5M2, XLA_FFI_DataType_F8E5M2);
  SAME(kjit::xla::kF8E4M3FN, XLA_FFI_DataType_F8E4M3FN);
  SAME(kjit::xla::kF8E8M0FNU, XLA_FFI_DataType_F8E8M0FNU);

  if (failures) {
    std::printf("%d layout mismatches against jaxlib's c_api.h\n", failures);
    return 1;
  }
  std::printf("kjit's XLA FFI declarations match jaxlib's c_api.h (API %d.%d%s%s)\n", XLA_FFI_API_MAJOR,
              XLA_FFI_API_MINOR, HasStateTypeId<XLA_FFI_Metadata>::value ? ", with state_type_id" : "",
              HasGetDetails<XLA_FFI_Api>::value ? ", Error_GetDetails" : "");
  return 0;
}
