// DLPack: NdArray views of producers' tensors that keep them alive, and NdArrays exported as
// DLPack tensors that keep kjit's memory alive (kjit/runtime/dlpack.hpp, docs/DLPACK.md).
#include "kjit/runtime/dlpack.hpp"

#include <cinttypes>
#include <cstdio>
#include <new>
#include <string>
#include <type_traits>

#include "checked_size.hpp"

// kjit's own declarations come first in this file (above), so these are the layouts compiled
// in; a consumer's or producer's tensor of another major version is recognised at run time.
static_assert(DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION == 1, "kjit implements DLPack 1.1");
static_assert(sizeof(DLTensor) == 48 && sizeof(DLManagedTensor) == 64 && sizeof(DLManagedTensorVersioned) == 80,
              "DLPack's 64-bit ABI");

namespace kjit {

namespace detail {
/// The one door into NdArray that from_dlpack needs: the owner of a producer's memory.
struct DlpackAccess {
  static void set_owner(NdArray& a, SharedResource owner) { a.memory_ = static_cast<SharedResource&&>(owner); }
};
}  // namespace detail

namespace {

[[noreturn]] void fail(const char* what, const std::string& message) {
  throw Error(ErrorKind::User, std::string(what) + ": " + message);
}

/// "OpenCL (kDLOpenCL = 4)", for errors.
std::string device_type_text(int32_t type) {
  static const char* const names[] = {nullptr, "cpu (kDLCPU", "CUDA (kDLCUDA", "pinned host memory (kDLCUDAHost",
                                      "OpenCL (kDLOpenCL", nullptr, nullptr, "Vulkan (kDLVulkan", "Metal (kDLMetal",
                                      "VPI (kDLVPI", "ROCm (kDLROCM", "pinned ROCm host memory (kDLROCMHost",
                                      "an extension device (kDLExtDev", "CUDA managed memory (kDLCUDAManaged",
                                      "oneAPI (kDLOneAPI", "WebGPU (kDLWebGPU", "Hexagon (kDLHexagon",
                                      "MAIA (kDLMAIA"};
  const int32_t count = int32_t(sizeof names / sizeof names[0]);
  if (type >= 0 && type < count && names[type]) return std::string(names[type]) + " = " + std::to_string(type) + ")";
  return "device type " + std::to_string(type) + " (not one of DLPack 1.1's)";
}

/// "float32", "complex64", "float8_e4m3fn", "float32x4", "type code 42 of 8 bits", for errors.
std::string dtype_text(const DLDataType& t) {
  // Codes 0-6 are named with their bits; the 8-, 6- and 4-bit float codes (7-17) carry them.
  static const char* const names[] = {"int",          "uint",          "float",           "opaque handle",
                                      "bfloat",       "complex",       "bool",            "float8_e3m4",
                                      "float8_e4m3",  "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                                      "float8_e5m2",  "float8_e5m2fnuz",    "float8_e8m0fnu", "float6_e2m3fn",
                                      "float6_e3m2fn", "float4_e2m1fn"};
  std::string s;
  if (t.code < sizeof names / sizeof names[0]) {
    s = names[t.code];
    if (t.code <= kDLBool) s += std::to_string(t.bits);
  } else {
    s = "type code " + std::to_string(t.code) + " of " + std::to_string(t.bits) + " bits";
  }
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

/// kjit's scalar for a one-lane dtype; false when kjit has none.
bool scalar_of(const DLDataType& t, ir::Scalar* s) {
  using S = ir::Scalar;
  const int b = t.bits;
  switch (t.code) {
    case kDLInt: *s = b == 8 ? S::I8 : b == 16 ? S::I16 : b == 32 ? S::I32 : S::I64; return b == 8 || b == 16 || b == 32 || b == 64;
    case kDLUInt: *s = b == 8 ? S::U8 : b == 16 ? S::U16 : b == 32 ? S::U32 : S::U64; return b == 8 || b == 16 || b == 32 || b == 64;
    case kDLFloat: *s = b == 16 ? S::F16 : b == 32 ? S::F32 : S::F64; return b == 16 || b == 32 || b == 64;
    case kDLBfloat: *s = S::BF16; return b == 16;
    case kDLBool: *s = S::Bool; return b == 8;
    default: return false;  // complex, opaque handles, 8-, 6- and 4-bit floats, unknown codes
  }
}

/// The DLPack dtype of kjit's scalar.
DLDataType dtype_of(ir::Scalar s) {
  const uint8_t bits = uint8_t(8 * ir::scalar_bytes(s));
  switch (s) {
    case ir::Scalar::Bool: return {kDLBool, bits, 1};
    case ir::Scalar::I8:
    case ir::Scalar::I16:
    case ir::Scalar::I32:
    case ir::Scalar::I64: return {kDLInt, bits, 1};
    case ir::Scalar::U8:
    case ir::Scalar::U16:
    case ir::Scalar::U32:
    case ir::Scalar::U64: return {kDLUInt, bits, 1};
    case ir::Scalar::F16:
    case ir::Scalar::F32:
    case ir::Scalar::F64: return {kDLFloat, bits, 1};
    case ir::Scalar::BF16: return {kDLBfloat, bits, 1};
  }
  return {kDLOpaqueHandle, 0, 0};  // not reached: the switch names every scalar
}

/// Dimensions of a tensor that one element of `element` takes: 0 (scalar), 1 (vector,
/// quaternion, transform: its components) or 2 (matrix: rows, columns).
int component_dims(const ir::Type& element) { return element.shape == ir::Shape::Matrix ? 2 : element.shape == ir::Shape::Scalar ? 0 : 1; }

/// The components' extents of `element` (rows, cols for a matrix).
void component_extents(const ir::Type& element, int64_t* extents) {
  if (element.shape == ir::Shape::Matrix) {
    extents[0] = element.rows;
    extents[1] = element.cols;
  } else {
    extents[0] = element.lanes();
  }
}

/// The element type a tensor of scalar `s` is read as; a User error when `element` does not fit.
ir::Type element_for(ir::Scalar s, const ir::Type& element, const char* what) {
  if (element.is_void()) return ir::Type::scalar_of(s);
  if (element.is_array()) fail(what, "the element type " + element.str() + " is an array type");
  if (element.shape == ir::Shape::Struct)
    fail(what, "an array of " + element.str() + " cannot view a tensor: struct elements have no DLPack dtype");
  if (element.scalar != s) {
    std::string asked = element.str();
    if (element.shape != ir::Shape::Scalar) asked += std::string(" (") + ir::scalar_name(element.scalar) + " components)";
    fail(what, std::string("a ") + ir::scalar_name(s) + " tensor cannot be an array of " + asked);
  }
  return element;
}

NdArray convert(const DLTensor& t, const ir::Type& asked, const char* what) {
  Device device;
  switch (int32_t(t.device.device_type)) {
    case kDLCPU:
    case kDLCUDAHost: device = Device::cpu(); break;  // pinned memory is host memory
    case kDLCUDA:
      if (t.device.device_id < 0) fail(what, "a CUDA tensor of device_id " + std::to_string(t.device.device_id));
      device = Device::cuda(t.device.device_id);
      break;
    default:
      fail(what, "the tensor is on " + device_type_text(int32_t(t.device.device_type)) +
                     "; kjit reads cpu (kDLCPU), pinned host (kDLCUDAHost) and CUDA (kDLCUDA) memory");
  }
  ir::Scalar scalar;
  if (t.dtype.lanes != 1)
    fail(what, "the dtype " + dtype_text(t.dtype) + " has " + std::to_string(t.dtype.lanes) +
                   " lanes; kjit reads tensors of one lane (give the components as the last dimension and ask for a "
                   "vector element type)");
  if (!scalar_of(t.dtype, &scalar))
    fail(what, dtype_text(t.dtype) + " tensors are not supported: kjit has no such element type");
  const ir::Type element = element_for(scalar, asked, what);
  const int inner = component_dims(element);

  if (t.ndim > 0 && !t.shape) fail(what, "the tensor's shape is null");
  const int array_dims = t.ndim - inner;
  if (t.ndim < 0 || array_dims < 1 || array_dims > kj::kMaxDims) {
    std::string m = "a " + std::to_string(t.ndim) + "-D tensor";
    if (inner > 0)
      m += " as an array of " + element.str() + " (whose elements take the last " + std::to_string(inner) +
           " dimension" + (inner > 1 ? "s" : "") + ") leaves " + std::to_string(array_dims) + " array dimension" +
           (array_dims == 1 ? "" : "s");
    fail(what, m + "; kjit arrays have 1 to 4 dimensions");
  }
  const int64_t* shape = t.shape;
  const std::string shape_str = detail::shape_text(shape, size_t(t.ndim));
  // Element strides: the tensor's, or compact row-major ones where it has none.
  int64_t strides[kj::kMaxDims + 2];
  int64_t compact = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    strides[d] = t.strides ? t.strides[d] : compact;
    if (!t.strides && !detail::checked_mul(compact, shape[d] < 0 ? 0 : shape[d], &compact)) compact = 0;  // sizes past int64 fail in view()
  }
  if (inner > 0) {
    int64_t want[2];
    component_extents(element, want);
    const int64_t* have = shape + array_dims;
    if (inner == 1 && have[0] != want[0])
      fail(what, "a tensor of shape " + shape_str + " as an array of " + element.str() + " needs " +
                     std::to_string(want[0]) + " components in its last dimension, not " + std::to_string(have[0]));
    if (inner == 2 && (have[0] != want[0] || have[1] != want[1]))
      fail(what, "a tensor of shape " + shape_str + " as an array of " + element.str() + " needs its last two dimensions " +
                     std::to_string(want[0]) + " x " + std::to_string(want[1]) + ", not " + std::to_string(have[0]) +
                     " x " + std::to_string(have[1]));
    // Components are read as one value: adjacent (a matrix row-major). The stride of an extent
    // of 1 is never used, and producers set it freely.
    const int64_t* got = strides + array_dims;
    const bool row_ok = inner == 1 || want[0] == 1 || got[0] == want[1];
    const bool col_ok = want[inner - 1] == 1 || got[inner - 1] == 1;
    if (!row_ok || !col_ok) {
      std::string needed = inner == 1 ? "1" : "(" + std::to_string(want[1]) + ", 1)";
      std::string found = inner == 1 ? std::to_string(got[0]) : "(" + std::to_string(got[0]) + ", " + std::to_string(got[1]) + ")";
      fail(what, "a tensor of shape " + shape_str + " as an array of " + element.str() + " needs its components " +
                     (inner == 1 ? "adjacent (element stride 1 in the last dimension" : "row-major and compact (element strides " + needed + " in the last two dimensions") +
                     "), not " + found);
    }
  }
  const int64_t scalar_bytes = ir::scalar_bytes(scalar);
  Shape array_shape(shape, shape + array_dims);
  std::vector<int64_t> byte_strides(static_cast<size_t>(array_dims), 0);
  for (int d = 0; d < array_dims; ++d)
    if (!detail::checked_mul(strides[d], scalar_bytes, &byte_strides[size_t(d)]))
      fail(what, "the stride of " + std::to_string(strides[d]) + " elements in dimension " + std::to_string(d) +
                     " of a tensor of shape " + shape_str + " overflows 64 bits in bytes");
  char* data = static_cast<char*>(t.data);
  if (data) data += t.byte_offset;
  if (reinterpret_cast<uintptr_t>(data) % uintptr_t(scalar_bytes) != 0) {
    char address[32];
    std::snprintf(address, sizeof address, "%#" PRIxPTR, reinterpret_cast<uintptr_t>(t.data));
    fail(what, std::string("the data (") + address + " + byte_offset " + std::to_string(t.byte_offset) +
                   ") is not aligned to the " + std::to_string(scalar_bytes) + " bytes of a " + ir::scalar_name(scalar));
  }
  NdArray a;
  try {
    a = NdArray::view(data, element, array_shape, device, byte_strides);
  } catch (const Error& e) {
    fail(what, e.what());
  }
  if (!data && a.size() > 0)
    fail(what, "a tensor of shape " + shape_str + " has " + std::to_string(a.size()) + " elements but no data (a null pointer)");
  return a;
}

/// An owner of `tensor` that calls its deleter when the last array sharing it goes; the
/// deleter right away when the owner cannot be made.
template <class Managed>
detail::SharedResource owner_of(Managed* tensor) {
  const auto release = [](void* r, const Device&) {
    Managed* m = static_cast<Managed*>(r);
    if (m->deleter) m->deleter(m);
  };
  try {
    return detail::SharedResource(tensor, Device::cpu(), release);
  } catch (const std::bad_alloc&) {
    release(tensor, Device::cpu());
    throw;
  }
}

/// An exported array: the DLPack struct, the array it keeps alive, and its extents.
template <class Managed>
struct Exported {
  Managed managed{};
  NdArray array;
  int64_t shape[kj::kMaxDims + 2] = {};
  int64_t strides[kj::kMaxDims + 2] = {};
};

template <class Managed>
Managed* export_array(const NdArray& a, const char* what) {
  if (!a.defined()) fail(what, "an empty handle (no array)");
  const ir::Type element = a.element();
  if (element.shape == ir::Shape::Struct)
    fail(what, "an array of " + element.str() + ": struct elements have no DLPack dtype");
  const int64_t scalar_bytes = ir::scalar_bytes(element.scalar);
  const std::vector<int64_t> byte_strides = a.strides();
  for (size_t d = 0; d < byte_strides.size(); ++d)
    if (byte_strides[d] % scalar_bytes != 0)
      fail(what, "the stride of " + std::to_string(byte_strides[d]) + " bytes in dimension " + std::to_string(d) +
                     " is not a whole number of " + ir::scalar_name(element.scalar) + " (" + std::to_string(scalar_bytes) +
                     " bytes): DLPack counts strides in elements");
  DLDevice device{kDLCPU, 0};
  switch (a.device().kind()) {
    case DeviceKind::Cpu: break;
    case DeviceKind::Cuda: device = {kDLCUDA, a.device().ordinal()}; break;
  }
  auto* e = new Exported<Managed>();
  e->array = a;
  const int ndim = a.ndim(), inner = component_dims(element);
  for (int d = 0; d < ndim; ++d) {
    e->shape[d] = a.shape(d);
    e->strides[d] = byte_strides[size_t(d)] / scalar_bytes;
  }
  if (inner > 0) {
    component_extents(element, e->shape + ndim);
    e->strides[ndim + inner - 1] = 1;
    if (inner == 2) e->strides[ndim] = element.cols;
  }
  DLTensor& t = e->managed.dl_tensor;
  t.data = a.data();
  t.device = device;
  t.ndim = ndim + inner;
  t.dtype = dtype_of(element.scalar);
  t.shape = e->shape;
  t.strides = e->strides;
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = [](Managed* self) { delete static_cast<Exported<Managed>*>(self->manager_ctx); };
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    e->managed.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    e->managed.flags = 0;
  }
  return &e->managed;
}

}  // namespace

NdArray dlpack_view(const DLTensor& tensor, const ir::Type& element) {
  return convert(tensor, element, "dlpack_view");
}

NdArray from_dlpack(DLManagedTensor* tensor, const ir::Type& element) {
  if (!tensor) fail("from_dlpack", "the tensor is null");
  detail::SharedResource owner = owner_of(tensor);  // every throw below calls the deleter
  NdArray a = convert(tensor->dl_tensor, element, "from_dlpack");
  detail::DlpackAccess::set_owner(a, static_cast<detail::SharedResource&&>(owner));
  return a;
}

NdArray from_dlpack(DLManagedTensorVersioned* tensor, const ir::Type& element, bool allow_read_only) {
  if (!tensor) fail("from_dlpack", "the tensor is null");
  detail::SharedResource owner = owner_of(tensor);  // every throw below calls the deleter
  // Another major version lays the struct out otherwise after `flags`: nothing past the
  // deleter may be read.
  if (tensor->version.major != DLPACK_MAJOR_VERSION)
    fail("from_dlpack", "a DLPack " + std::to_string(tensor->version.major) + "." + std::to_string(tensor->version.minor) +
                            " tensor; kjit reads DLPack 1.x (the tensor's deleter has been called)");
  if ((tensor->flags & DLPACK_FLAG_BITMASK_READ_ONLY) && !allow_read_only)
    fail("from_dlpack", "the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY) and kjit cannot stop a kernel writing "
                        "an array; pass allow_read_only = true if only kernels that read it will see it");
  NdArray a = convert(tensor->dl_tensor, element, "from_dlpack");
  detail::DlpackAccess::set_owner(a, static_cast<detail::SharedResource&&>(owner));
  return a;
}

DLManagedTensor* NdArray::to_dlpack() const { return export_array<DLManagedTensor>(*this, "to_dlpack"); }

DLManagedTensorVersioned* NdArray::to_dlpack_versioned() const {
  return export_array<DLManagedTensorVersioned>(*this, "to_dlpack_versioned");
}

}  // namespace kjit
