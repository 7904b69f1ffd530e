// kjit/ffi/xla_abi.hpp — kjit's own declarations of the stable, stateless part of the XLA FFI
// C ABI: call frames, arguments, results, attributes, buffers, data types, errors, streams,
// device ordinals and the metadata extension.
//
// These mirror the facts of XLA's public xla/ffi/api/c_api.h under kjit's own names, so kjit
// builds without jaxlib. The layout is that of the newest header kjit is tested with (jaxlib
// 0.12, API 0.5), and every field kjit reads or writes sits where the oldest (jaxlib 0.7.2,
// API 0.1) has it too; tests/ffi/test_abi_layout.cpp checks sizes and offsets against both.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kjit::xla {

/// The API version kjit's handlers declare in the metadata probe unless told otherwise
/// (kjit::ffi::declare_api_version; the JAX shim negotiates it when it registers the targets).
/// jaxlib 0.7.2 (API 0.1) registers a handler only when it declares exactly its own version;
/// jaxlib 0.12 (API 0.5) accepts a range whose oldest end is 0.1 today. The probe carries no
/// api table, so a handler cannot ask XLA which version it runs: the registrar says it (the JAX
/// shim reads the jaxlib's own c_api.h; docs/JAX.md, *Supported JAX versions*).
constexpr int kApiMajor = 0;
constexpr int kApiMinor = 1;

/// XLA_FFI_API_MINOR of the newest c_api.h these declarations mirror (jaxlib 0.12). The layout
/// test fails on a newer header, so that a change there is looked at, not assumed away. Every
/// version from kApiMinor to this one may be declared: kjit's use of the ABI is the same in all.
constexpr int kMirroredApiMinor = 5;

struct Api;
struct Error;             ///< opaque; created by Api::Error_Create
struct ExecutionContext;  ///< opaque
struct Future;            ///< opaque
struct InternalApi;       ///< opaque

/// XLA_FFI_Extension_Type.
enum ExtensionType : int { kExtensionMetadata = 1 };

/// XLA_FFI_Extension_Base (XLA_FFI_InternalExtension since API 0.5, same layout): the head of
/// every extension in a call frame's linked list.
struct ExtensionBase {
  size_t struct_size;
  ExtensionType type;
  ExtensionBase* next;
};

/// XLA_FFI_Api_Version.
struct ApiVersion {
  size_t struct_size;
  ExtensionBase* extension_start;
  int major_version;
  int minor_version;
};

/// XLA_FFI_Error_Code (absl::StatusCode values).
enum ErrorCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

/// XLA_FFI_Error_Create_Args.
struct ErrorCreateArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const char* message;
  ErrorCode errc;
};

/// XLA_FFI_Error_GetMessage_Args (API 0.1-0.4), grown into XLA_FFI_Error_GetDetails_Args in
/// API 0.5, which also writes the error's code. kjit always passes the grown struct with its
/// full struct_size: an older XLA reads only the head (it checks struct_size >= its own), a 0.5
/// XLA writes `errc` inside kjit's struct, not past it.
struct ErrorGetMessageArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Error* error;
  const char* message;  ///< out
  ErrorCode errc;       ///< out (API 0.5)
};

/// XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE of API 0.1-0.4: the struct ends at `message`.
constexpr size_t kErrorGetMessageSize01 = offsetof(ErrorGetMessageArgs, message) + sizeof(const char*);

/// XLA_FFI_Error_Destroy_Args.
struct ErrorDestroyArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  Error* error;
};

/// XLA_FFI_TypeId: a user type's id in one XLA FFI instance (0: XLA_FFI_UNKNOWN_TYPE_ID).
struct TypeId {
  int64_t type_id;
};

/// XLA_FFI_DataType: the element types of buffers, scalars and arrays.
enum DataType : int {
  kInvalid = 0,
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kF64 = 12,
  kC64 = 15,
  kBF16 = 16,
  kToken = 17,
  kC128 = 18,
  kF8E5M2 = 19,
  kF8E4M3FN = 20,
  kS4 = 21,
  kU4 = 22,
  kF8E4M3B11FNUZ = 23,
  kF8E5M2FNUZ = 24,
  kF8E4M3FNUZ = 25,
  kS2 = 26,
  kU2 = 27,
  kF8E4M3 = 28,
  kF8E3M4 = 29,
  kS1 = 30,
  kU1 = 31,
  kF4E2M1FN = 32,
  kF8E8M0FNU = 33,
};

/// XLA_FFI_Buffer: a dense, row-major device (or host) buffer.
struct Buffer {
  size_t struct_size;
  ExtensionBase* extension_start;
  DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims;  ///< length == rank
};

/// XLA_FFI_ArgType / XLA_FFI_RetType.
enum ArgType : int { kArgBuffer = 1 };
enum RetType : int { kRetBuffer = 1 };

/// XLA_FFI_AttrType.
enum AttrType : int { kAttrArray = 1, kAttrDictionary = 2, kAttrScalar = 3, kAttrString = 4 };

/// XLA_FFI_ByteSpan: a string that is not NUL-terminated.
struct ByteSpan {
  const char* ptr;
  size_t len;
};

/// XLA_FFI_Scalar: one typed value.
struct Scalar {
  DataType dtype;
  void* value;
};

/// XLA_FFI_Array: a typed 1-D array of values.
struct Array {
  DataType dtype;
  size_t size;
  void* data;
};

/// XLA_FFI_ExecutionStage.
/// kRecord (API 0.5) reaches only a bundle's `record` handler, which kjit never registers.
enum ExecutionStage : int { kInstantiate = 0, kPrepare = 1, kInitialize = 2, kExecute = 3, kRecord = 4 };

/// XLA_FFI_Args.
struct Args {
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  ArgType* types;  ///< length == size
  void** args;     ///< length == size; Buffer* for kArgBuffer
};

/// XLA_FFI_Rets.
struct Rets {
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  RetType* types;  ///< length == size
  void** rets;     ///< length == size; Buffer* for kRetBuffer
};

/// XLA_FFI_Attrs. XLA sorts attributes by name; kjit does not rely on the order.
struct Attrs {
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  AttrType* types;   ///< length == size
  ByteSpan** names;  ///< length == size
  void** attrs;      ///< length == size: Array*, Attrs*, Scalar* or ByteSpan*
};

/// XLA_FFI_CallFrame: everything one handler call receives.
struct CallFrame {
  size_t struct_size;
  ExtensionBase* extension_start;
  const Api* api;
  ExecutionContext* ctx;
  ExecutionStage stage;
  Args args;
  Rets rets;
  Attrs attrs;
  Future* future;  ///< out (newer than 0.1; kjit never sets it)
};

/// XLA_FFI_Handler.
using Handler = Error*(CallFrame* call_frame);

/// XLA_FFI_Handler_TraitsBits.
enum HandlerTraitsBits : uint32_t { kCommandBufferCompatible = 1u << 0 };

/// XLA_FFI_Stream_Get_Args.
struct StreamGetArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  ExecutionContext* ctx;
  void* stream;  ///< out: a CUstream on the CUDA platform
};

/// XLA_FFI_DeviceOrdinal_Get_Args (newer than the first 0.1 Api: check Api::struct_size).
struct DeviceOrdinalGetArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  ExecutionContext* ctx;
  int32_t device_ordinal;  ///< out
};

/// XLA_FFI_Metadata. `state_type_id` is newer than 0.1, and struct_size does not say whether it
/// is there (XLA_FFI_Metadata_STRUCT_SIZE ends at `traits` in every version): kjit's handlers are
/// stateless and never write it, leaving XLA's own initial value (unknown: no state).
struct Metadata {
  size_t struct_size;
  ApiVersion api_version;
  uint32_t traits;        ///< XLA_FFI_Handler_Traits
  TypeId state_type_id;   ///< API 0.3 (jaxlib 0.10.2): absent from an 0.1 XLA's metadata
};

/// The part of Metadata every API version has (XLA_FFI_Metadata_STRUCT_SIZE): all kjit writes.
constexpr size_t kMetadataSize01 = offsetof(Metadata, traits) + sizeof(uint32_t);

/// XLA_FFI_Metadata_Extension: present in the probe call XLA makes before using a handler.
struct MetadataExtension {
  ExtensionBase extension_base;
  Metadata* metadata;
};

using ErrorCreateFn = Error*(ErrorCreateArgs*);
using ErrorGetMessageFn = void(ErrorGetMessageArgs*);
using ErrorDestroyFn = void(ErrorDestroyArgs*);
using StreamGetFn = Error*(StreamGetArgs*);
using DeviceOrdinalGetFn = Error*(DeviceOrdinalGetArgs*);
/// Entries kjit never calls are declared as opaque function pointers.
using OpaqueFn = void (*)();

/// XLA_FFI_Api: the function table. Entries after the first 0.1 release may be missing in an
/// older XLA: kjit checks struct_size before using DeviceOrdinal_Get. Error_GetMessage is
/// XLA_FFI_Error_GetDetails since API 0.5 (same slot, the grown argument struct above).
struct Api {
  size_t struct_size;
  ExtensionBase* extension_start;
  ApiVersion api_version;
  InternalApi* internal_api;
  ErrorCreateFn* Error_Create;
  ErrorGetMessageFn* Error_GetMessage;
  ErrorDestroyFn* Error_Destroy;
  OpaqueFn Handler_Register;
  StreamGetFn* Stream_Get;
  OpaqueFn Type_Register;         ///< XLA_FFI_TypeId_Register before API 0.3: the same slot
  OpaqueFn ExecutionContext_Get;  ///< XLA_FFI_InvokeContext_Get since API 0.5: the same slot
  OpaqueFn State_Set;
  OpaqueFn State_Get;
  OpaqueFn DeviceMemory_Allocate;
  OpaqueFn DeviceMemory_Free;
  OpaqueFn ThreadPool_Schedule;
  OpaqueFn ThreadPool_NumThreads;
  OpaqueFn Future_Create;
  OpaqueFn Future_SetAvailable;
  OpaqueFn Future_SetError;
  OpaqueFn RunId_Get;
  DeviceOrdinalGetFn* DeviceOrdinal_Get;
  OpaqueFn InvokeContext_FindExtension;  ///< API 0.5
  OpaqueFn CustomOptions_Get;            ///< API 0.5
};

/// Whether `api` has the entry at `member`: its struct_size covers the whole pointer.
#define KJIT_XLA_API_HAS(api, member) \
  ((api)->struct_size >= offsetof(::kjit::xla::Api, member) + sizeof(((::kjit::xla::Api*)0)->member))

}  // namespace kjit::xla
