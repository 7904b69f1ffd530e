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

// API 0.3 added XLA_FFI_Metadata::state_type_id and renamed XLA_FFI_TypeId_Register to
// XLA_FFI_Type_Register (same slot). Which of them this header has:
template <class T, class = void>
struct HasStateTypeId : std::false_type {};
template <class T>
struct HasStateTypeId<T, std::void_t<decltype(&T::state_type_id)>> : std::true_type {};
template <class T, class = void>
struct HasTypeRegister : std::false_type {};
template <class T>
struct HasTypeRegister<T, std::void_t<decltype(&T::XLA_FFI_Type_Register)>> : std::true_type {};

template <class T>
size_t type_register_offset() {
  if constexpr (HasTypeRegister<T>::value) return offsetof(T, XLA_FFI_Type_Register);
  else return offsetof(T, XLA_FFI_TypeId_Register);
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

int main() {
  SAME_STRUCT(ExtensionBase, XLA_FFI_Extension_Base);
  SAME_FIELD(ExtensionBase, XLA_FFI_Extension_Base, type, type);
  SAME_FIELD(ExtensionBase, XLA_FFI_Extension_Base, next, next);
  SAME_STRUCT(ApiVersion, XLA_FFI_Api_Version);
  SAME_FIELD(ApiVersion, XLA_FFI_Api_Version, minor_version, minor_version);
  SAME_STRUCT(ErrorCreateArgs, XLA_FFI_Error_Create_Args);
  SAME_FIELD(ErrorCreateArgs, XLA_FFI_Error_Create_Args, message, message);
  SAME_FIELD(ErrorCreateArgs, XLA_FFI_Error_Create_Args, errc, errc);
  SAME_STRUCT(ErrorGetMessageArgs, XLA_FFI_Error_GetMessage_Args);
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
  SAME_STRUCT(Api, XLA_FFI_Api);
  SAME_FIELD(Api, XLA_FFI_Api, api_version, api_version);
  SAME_FIELD(Api, XLA_FFI_Api, Error_Create, XLA_FFI_Error_Create);
  SAME_FIELD(Api, XLA_FFI_Api, Error_GetMessage, XLA_FFI_Error_GetMessage);
  SAME_FIELD(Api, XLA_FFI_Api, Error_Destroy, XLA_FFI_Error_Destroy);
  SAME_FIELD(Api, XLA_FFI_Api, Stream_Get, XLA_FFI_Stream_Get);
  SAME(offsetof(kjit::xla::Api, Type_Register), type_register_offset<XLA_FFI_Api>());
  SAME_FIELD(Api, XLA_FFI_Api, RunId_Get, XLA_FFI_RunId_Get);
  SAME_FIELD(Api, XLA_FFI_Api, DeviceOrdinal_Get, XLA_FFI_DeviceOrdinal_Get);

  // The handlers declare 0.1 to every jaxlib; the mirror must be at least as new as the header.
  SAME(kjit::xla::kApiMajor, XLA_FFI_API_MAJOR);
  if (kjit::xla::kApiMinor > XLA_FFI_API_MINOR || kjit::xla::kMirroredApiMinor < XLA_FFI_API_MINOR) {
    std::printf("MISMATCH this c_api.h is API 0.%d; kjit declares 0.%d and mirrors up to 0.%d\n", XLA_FFI_API_MINOR,
                kjit::xla::kApiMinor, kjit::xla::kMirroredApiMinor);
    ++failures;
  }
  SAME(kjit::xla::kExtensionMetadata, XLA_FFI_Extension_Metadata);
  SAME(kjit::xla::kExecute, XLA_FFI_ExecutionStage_EXECUTE);
  SAME(kjit::xla::kInstantiate, XLA_FFI_ExecutionStage_INSTANTIATE);
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
  std::printf("kjit's XLA FFI declarations match jaxlib's c_api.h (API %d.%d%s)\n", XLA_FFI_API_MAJOR,
              XLA_FFI_API_MINOR, HasStateTypeId<XLA_FFI_Metadata>::value ? ", with state_type_id" : "");
  return 0;
}
