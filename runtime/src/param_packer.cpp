// Launch argument checking and parameter packing.
#include "param_packer.hpp"

#include "checked_size.hpp"

#include "kjit/ir/ir.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/internal/value_slot.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace kjit::detail {

namespace {

std::string where(const KernelDef& k, size_t i, bool adjoint) {
  return "launch of kernel '" + k.name() + "': " + (adjoint ? "adjoint of argument " : "argument ") +
         std::to_string(i + 1) + " ('" + k.params()[i].name + "')";
}

std::string describe(const LaunchArg& a) {
  if (a.absent()) return "nothing";
  if (a.destination()) return "a pointer to " + a.type().str();
  if (a.is_array()) {
    const NdArray& x = a.array();
    return "a " + std::to_string(x.ndim()) + "-D array of " + x.element().str();
  }
  return "a " + a.type().str() + " value";
}

std::string expected(const ir::Type& t) {
  if (t.is_array()) return "a " + std::to_string(t.ndim) + "-D array of " + t.element().str();
  return "a " + t.str() + " value";
}

/// Reads a scalar of kind `s` from `p` as long double (exact for every type kjit has).
long double read_scalar(ir::Scalar s, const void* p) {
  switch (s) {
#define KJIT_READ(E, T) case ir::Scalar::E: { T v; std::memcpy(&v, p, sizeof v); return (long double)v; }
    KJIT_READ(Bool, bool) KJIT_READ(I8, int8_t) KJIT_READ(U8, uint8_t) KJIT_READ(I16, int16_t)
    KJIT_READ(U16, uint16_t) KJIT_READ(I32, int32_t) KJIT_READ(U32, uint32_t) KJIT_READ(I64, int64_t)
    KJIT_READ(U64, uint64_t) KJIT_READ(F32, float) KJIT_READ(F64, double)
#undef KJIT_READ
    case ir::Scalar::F16: { half h; std::memcpy(&h, p, sizeof h); return (long double)float(h); }
    case ir::Scalar::BF16: { bfloat16 h; std::memcpy(&h, p, sizeof h); return (long double)float(h); }
  }
  return 0;
}

/// Converts a scalar argument to the parameter's scalar kind into `out`; false when the
/// conversion would change the value (or crosses bool and numbers).
bool convert_scalar(ir::Scalar to, ir::Scalar from, const void* in, unsigned char* out) {
  if (to == from) {
    std::memcpy(out, in, size_t(ir::scalar_bytes(to)));
    return true;
  }
  if ((to == ir::Scalar::Bool) != (from == ir::Scalar::Bool)) return false;
  long double v = read_scalar(from, in);
  bool to_float = ir::scalar_is_float(to), from_float = ir::scalar_is_float(from);
  if (!to_float && from_float) return false;  // never truncate a float into an integer
  switch (to) {
#define KJIT_WRITE(E, T)                                                                  \
  case ir::Scalar::E: {                                                                   \
    if (!to_float && (v < (long double)std::numeric_limits<T>::lowest() ||                 \
                      v > (long double)std::numeric_limits<T>::max()))                     \
      return false;                                                                       \
    T t = T(v);                                                                           \
    if (to_float && !from_float && (long double)t != v) return false; /* inexact int */   \
    std::memcpy(out, &t, sizeof t);                                                       \
    return true;                                                                          \
  }
    KJIT_WRITE(I8, int8_t) KJIT_WRITE(U8, uint8_t) KJIT_WRITE(I16, int16_t) KJIT_WRITE(U16, uint16_t)
    KJIT_WRITE(I32, int32_t) KJIT_WRITE(U32, uint32_t) KJIT_WRITE(I64, int64_t)
    KJIT_WRITE(U64, uint64_t) KJIT_WRITE(F32, float) KJIT_WRITE(F64, double)
#undef KJIT_WRITE
    case ir::Scalar::F16: { half h{static_cast<float>(v)}; std::memcpy(out, &h, sizeof h); return true; }
    case ir::Scalar::BF16: { bfloat16 h{static_cast<float>(v)}; std::memcpy(out, &h, sizeof h); return true; }
    default: return false;
  }
}

void check_array(const KernelDef& k, size_t i, bool adjoint, const LaunchArg& a, const Device& device) {
  const ir::Type& want = k.params()[i].type;
  const NdArray& x = a.array();
  if (x.element() != want.element() || x.ndim() != want.ndim)
    throw Error(ErrorKind::User, where(k, i, adjoint) + " expects " + expected(want) + ", got " + describe(a));
  if (x.device() != device)
    throw Error(ErrorKind::User, where(k, i, adjoint) + " is on " + x.device().name() +
                                     " but the launch runs on " + device.name());
}

/// Whether a value given in an adjoint slot is zero: the spelling of "no adjoint" from
/// before value adjoints were written back (`{gx, 0.0f, gout}`).
bool is_zero(const LaunchArg& a) {
  if (a.type().is_scalar()) return read_scalar(a.type().scalar, a.bytes()) == 0;
  const auto* b = static_cast<const unsigned char*>(a.bytes());
  return std::all_of(b, b + a.type().element_bytes(), [](unsigned char c) { return c == 0; });
}

/// Packs the adjoint slot of value parameter `i`: the address its gradient is added to (null:
/// none). On the cpu the slot is left for `sums`, which points it at partial sums.
void pack_value_adjoint(PackedParams& out, const KernelDef& k, size_t i, const LaunchArg& a, const Device& device,
                        ValueSums* sums) {
  const ir::Type& want = k.params()[i].type;
  const std::string& name = k.params()[i].name;
  auto refuse = [&](const std::string& why) { return Error(ErrorKind::User, where(k, i, true) + " " + why); };
  const std::string none = "'" + name + "' (" + want.str() + ") has no adjoint (only floating values carry one); pass {}";
  const std::string goes = "a one-element array of " + want.str() + std::string(device.is_cpu() ? " or a pointer to one" : "") +
                           " (where the gradient of '" + name + "' is added), or {} for none";
  void* dst = nullptr;
  if (a.absent()) {
  } else if (a.destination()) {
    if (!want.is_differentiable()) throw refuse("is a pointer, but " + none);
    if (a.type() != want) throw refuse("is a pointer to " + a.type().str() + "; expects " + goes);
    if (!device.is_cpu())
      throw refuse("is a host pointer, but the launch runs on " + device.name() + ": pass a one-element array of " +
                   want.str() + " on " + device.name());
    dst = a.destination();
  } else if (a.is_array()) {
    const NdArray& x = a.array();
    if (!want.is_differentiable()) throw refuse("is an array, but " + none);
    if (x.element() != want.element() || x.size() != 1)
      throw refuse("expects " + goes + ", got " + describe(a) + " of " + std::to_string(x.size()) + " elements");
    if (x.device() != device)
      throw refuse("is on " + x.device().name() + " but the launch runs on " + device.name());
    if (!x.data()) throw refuse("has no data (a view of a null pointer)");
    dst = x.data();
  } else if (!is_zero(a)) {
    throw refuse("is " + describe(a) + ": a value's adjoint is not passed in but written out; expects " + goes);
  }
  void* slot = device.is_cpu() ? nullptr : dst;
  out.push(&slot, sizeof slot, alignof(void*));
  if (dst && device.is_cpu()) {
    KJIT_CHECK(sums != nullptr, "a cpu launch with value adjoints needs ValueSums");
    sums->add(out.pointer_slot(out.count() - 1), dst, want);
  }
}

}  // namespace

void PackedParams::push(const void* bytes, size_t size, size_t align) {
  size_t offset = (used_ + align - 1) / align * align;
  if (offset + size > sizeof(storage_) || count_ == kMaxParams)
    throw Error(ErrorKind::User, "kernel parameters exceed " + std::to_string(sizeof(storage_)) +
                                     " bytes or " + std::to_string(kMaxParams) + " parameters");
  std::memcpy(storage_ + offset, bytes, size);
  pointers_[count_++] = storage_ + offset;
  used_ = offset + size;
}

kj::launch_bounds_t make_bounds(const KernelDef& kernel, const Dims& dims) {
  const ir::Function& fn = kernel.ir();
  if (dims.ndim() < 1 || dims.ndim() > kj::kMaxDims)
    throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "': launches have 1 to 4 dimensions, not " +
                                     std::to_string(dims.ndim()));
  if (fn.launch_ndim != 0 && fn.launch_ndim != dims.ndim())
    throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "': the kernel uses tid<" +
                                     std::to_string(fn.launch_ndim) + ">() and needs a " +
                                     std::to_string(fn.launch_ndim) + "-D launch, got " +
                                     std::to_string(dims.ndim()) + "-D");
  kj::launch_bounds_t b{};
  b.ndim = dims.ndim();
  b.size = 1;
  for (int d = 0; d < kj::kMaxDims; ++d) b.shape[d] = 1;
  for (int d = 0; d < dims.ndim(); ++d) {
    int64_t e = dims.shape()[size_t(d)];
    if (e < 0 || e > INT32_MAX)
      throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "': extent " + std::to_string(e) +
                                       " of dimension " + std::to_string(d) + " is out of range");
    b.shape[d] = kj_int32(e);
  }
  // Thread indices are int32 in kernels (tid()), as in Warp. Each extent is at most 2^31-1,
  // so checking the running product at every step keeps it from wrapping (65536^4 is 0).
  for (int d = 0; d < dims.ndim(); ++d) {
    b.size *= b.shape[d];
    if (b.size > INT32_MAX)
      throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "': launch dims " +
                                       shape_text(dims.shape().data(), dims.shape().size()) +
                                       " give more threads than the 2^31-1 that int32 thread indices address");
  }
  return b;
}

Device launch_device(const KernelDef& kernel, const std::vector<LaunchArg>& args,
                     const std::vector<LaunchArg>* adj_args, const LaunchOptions& options) {
  if (options.device) return *options.device;
  for (const auto* list : {&args, adj_args}) {
    if (!list) continue;
    for (const LaunchArg& a : *list)
      if (a.is_array()) return a.array().device();
  }
  for (const LaunchArg& a : args)
    if (a.object()) return a.object_device();
  return Device::cpu();
}

void pack_launch(PackedParams& out, const KernelDef& kernel, const kj::launch_bounds_t& bounds,
                 const std::vector<LaunchArg>& args, const std::vector<LaunchArg>* adj_args,
                 const Device& device, ValueSums* sums) {
  const auto& params = kernel.params();
  auto names = [&] {
    std::string s;
    for (size_t i = 0; i < params.size(); ++i) s += (i ? ", " : "") + params[i].name;
    return s;
  };
  if (args.size() != params.size())
    throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "': expected " +
                                     std::to_string(params.size()) + " arguments (" + names() + "), got " +
                                     std::to_string(args.size()));
  if (adj_args && adj_args->size() != params.size())
    throw Error(ErrorKind::User, "adjoint launch of kernel '" + kernel.name() + "': expected " +
                                     std::to_string(params.size()) + " adjoint arguments (" + names() +
                                     "; {} for none), got " + std::to_string(adj_args->size()));
  out.push(bounds);
  auto pack_one = [&](size_t i, const LaunchArg& a, bool adjoint) {
    const ir::Type& want = params[i].type;
    if (want.is_array()) {
      if (a.absent()) {
        if (!adjoint) throw Error(ErrorKind::User, where(kernel, i, false) + " is missing: expected " + expected(want));
        out.push(kj::array_t<void>{});
        return;
      }
      if (!a.is_array())
        throw Error(ErrorKind::User, where(kernel, i, adjoint) + " expects " + expected(want) + ", got " + describe(a));
      check_array(kernel, i, adjoint, a, device);
      if (adjoint) {
        const NdArray& primal = args[i].array();
        if (!a.array().same_shape(primal))
          throw Error(ErrorKind::User, where(kernel, i, true) + " must have the shape of the array it is "
                                                               "the gradient of");
      }
      out.push(a.array().descriptor());
      return;
    }
    if (a.object() && !(a.object_device() == device))
      throw Error(ErrorKind::User, where(kernel, i, adjoint) + ": the " + a.object() + " lives on " +
                                       a.object_device().name() + ", the launch runs on " + device.name());
    if (adjoint) {
      pack_value_adjoint(out, kernel, i, a, device, sums);
      return;
    }
    alignas(16) unsigned char bytes[LaunchArg::kMaxValueBytes] = {};  // the largest launch value
    size_t size = size_t(want.element_bytes());
    // A struct is aligned as its most aligned field (what the generated struct has).
    size_t align = size_t(want.shape == ir::Shape::Struct ? ir::type_align(want) : ir::scalar_bytes(want.scalar));
    auto mismatch = [&](const std::string& extra) {
      return Error(ErrorKind::User, where(kernel, i, adjoint) + " expects " + expected(want) + ", got " +
                                        describe(a) + extra);
    };
    if (a.absent()) {
      throw Error(ErrorKind::User, where(kernel, i, false) + " is missing: expected " + expected(want));
    } else if (a.is_array() || a.destination()) {
      throw mismatch("");
    } else if (want.is_scalar() && a.type().is_scalar()) {
      if (!convert_scalar(want.scalar, a.type().scalar, a.bytes(), bytes))
        throw mismatch(" that does not convert exactly; pass a " + want.str());
    } else if (a.type() == want) {
      std::memcpy(bytes, a.bytes(), size);
    } else {
      throw mismatch("");
    }
    // kj::value_t: no pointer (the value travels in the parameter), then the value.
    (void)align;  // value_t is 8-aligned, and its value field as aligned as any element
    alignas(16) unsigned char slot[kValueFieldOffset + sizeof bytes];
    ValueSlot{slot}.hold(bytes, size);
    out.push(slot, ValueSlot::bytes(size), alignof(kj::value_t<double>));
  };
  for (size_t i = 0; i < params.size(); ++i) pack_one(i, args[i], false);
  if (adj_args)
    for (size_t i = 0; i < params.size(); ++i) pack_one(i, (*adj_args)[i], true);
}

}  // namespace kjit::detail
