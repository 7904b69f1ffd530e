// launch_tangent: the launch of a kernel's tangent kernel, with its arguments' tangents
// checked against them and the absent ones made up: a view of zeros for a direction the
// kernel reads, scratch memory for an output tangent nobody wants, the argument itself for a
// slot the kernel never touches.
#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "kjit/abi.h"
#include "kjit/ir/ir.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/launch.hpp"
#include "tangent_kernels.hpp"

namespace kjit {

namespace {

std::string where(const KernelDef& k, size_t i) {
  return "launch_tangent of kernel '" + k.name() + "': tangent of argument " + std::to_string(i + 1) + " ('" +
         k.params()[i].name + "')";
}

/// Memory this thread lends to the tangent slots of its launches, per device: zeros that are
/// only ever read, and scratch that receives tangents nobody reads. It only grows; the
/// memory it outgrows stays allocated, since a launch on a CUDA stream may still use it.
struct Lent {
  NdArray zeros, scratch;
  std::vector<NdArray> outgrown;
};

/// A view of `shape` elements of `element` in this thread's buffer `which` of `device`.
NdArray lent(NdArray Lent::*which, const ir::Type& element, const Shape& shape, const Device& device) {
  thread_local std::map<std::string, Lent> by_device;
  Lent& l = by_device[device.name()];
  NdArray& buffer = l.*which;
  int64_t count = 1;
  for (int64_t e : shape) count *= e;
  const int64_t bytes = count * element.element_bytes();
  if (!buffer.defined() || buffer.size() < bytes) {
    if (buffer.defined()) l.outgrown.push_back(buffer);
    const int64_t grown = std::max<int64_t>(bytes, buffer.defined() ? 2 * buffer.size() : 0);
    buffer = NdArray::zeros(ir::Type::scalar_of(ir::Scalar::U8), {std::max<int64_t>(grown, 1)}, device);
  }
  return NdArray::view(buffer.data(), element, shape, device);
}

/// Completes the array fields (at any depth) of struct value `tangent` of `type`, the tangent
/// of the struct value `arg`: a null field whose argument's field holds an array gets zeros of
/// that array's shape of its own (a zero direction, or where an unwanted tangent is written),
/// kept in `keep` until the launch returns; a field that is set must have its array's shape.
void complete_field_tangents(const std::string& at, const std::string& path, const ir::Type& type,
                             const unsigned char* arg, unsigned char* tangent, const Device& device,
                             std::vector<NdArray>& keep) {
  for (const ir::StructField& f : ir::struct_info(type.struct_id).fields) {
    if (!ir::carries_tangent(f.type)) continue;
    const std::string field = path.empty() ? f.name : path + "." + f.name;
    if (f.type.is_struct()) {
      complete_field_tangents(at, field, f.type, arg + f.offset, tangent + f.offset, device, keep);
      continue;
    }
    if (!f.type.is_array()) continue;
    kj::array_t<void> a, d;
    std::memcpy(static_cast<void*>(&a), arg + f.offset, sizeof a);
    std::memcpy(static_cast<void*>(&d), tangent + f.offset, sizeof d);
    if (a.data == nullptr) continue;  // no array: never read
    if (d.data == nullptr) {
      Shape shape(a.shape, a.shape + a.ndim);
      keep.push_back(NdArray::zeros(f.type.element(), shape, device));
      d = keep.back().descriptor();
      std::memcpy(tangent + f.offset, &d, sizeof d);
      continue;
    }
    if (d.ndim != a.ndim || !std::equal(a.shape, a.shape + a.ndim, d.shape))
      throw Error(ErrorKind::User, at + ": the array field '" + field +
                                       "' must have the shape of the array it is the tangent of");
  }
}

/// Whether `type` is a struct holding (at any depth) an array field with tangents.
bool holds_tangent_arrays(const ir::Type& type) {
  if (!type.is_struct()) return false;
  for (const ir::StructField& f : ir::struct_info(type.struct_id).fields)
    if ((f.type.is_array() && ir::carries_tangent(f.type)) || holds_tangent_arrays(f.type)) return true;
  return false;
}

/// The tangent slot of parameter `i` for the tangent kernel's launch.
LaunchArg tangent_slot(const KernelDef& kernel, const detail::TangentKernel& t, size_t i, const LaunchArg& arg,
                       const LaunchArg& tangent, const LaunchOptions& options, const Device& device,
                       std::vector<NdArray>& keep) {
  const ir::Type& type = kernel.params()[i].type;
  if (!ir::carries_tangent(type)) return arg;  // never read: the argument itself fills the slot
  if (holds_tangent_arrays(type) && !tangent.is_array() && !tangent.destination() && !arg.is_array() && !arg.absent() &&
      arg.type() == type && (tangent.absent() || tangent.type() == type) &&
      type.element_bytes() <= int(LaunchArg::kMaxValueBytes)) {
    // A struct holding arrays: its tangent's array fields are the arrays' tangents.
    std::vector<unsigned char> bytes(size_t(type.element_bytes()), 0);
    if (!tangent.absent()) std::memcpy(bytes.data(), tangent.bytes(), bytes.size());
    complete_field_tangents(where(kernel, i), "", type, static_cast<const unsigned char*>(arg.bytes()), bytes.data(),
                            device, keep);
    return LaunchArg::from_bytes(type, bytes.data());
  }
  if (type.is_array() && holds_tangent_arrays(type.element()) && tangent.absent())
    throw Error(ErrorKind::User, where(kernel, i) + " must be given: an array of structs holding arrays has its "
                                     "tangents in an array of the same structs, whose array fields hold the "
                                     "arrays' tangents");
  if (!tangent.absent()) {
    if (type.is_array()) {
      if (!tangent.is_array())
        throw Error(ErrorKind::User, where(kernel, i) + " must be an array of the argument's shape");
      if (arg.is_array() && !tangent.array().same_shape(arg.array()))
        throw Error(ErrorKind::User, where(kernel, i) + " must have the shape of the array it is the tangent of");
    } else if (tangent.is_array() || tangent.destination()) {
      // Caught here, not by the tangent kernel's launch, whose message would name its own
      // parameter ('d_<name>', numbered after the kernel's) rather than the caller's.
      throw Error(ErrorKind::User, where(kernel, i) + " must be a " + type.str() + " value (a direction), not " +
                                       (tangent.is_array() ? "an array" : "a pointer"));
    }
    return tangent;  // the launch checks its type like any argument's
  }
  if (type.is_array()) {
    if (!arg.is_array()) return arg;  // the launch names the missing argument
    const bool reads = t.reads[i], writes = t.writes[i];
    if (!reads && !writes) return arg;  // never touched
    const Device device = options.device ? *options.device : arg.array().device();
    const Shape shape = arg.array().shape();
    if (reads && writes) return NdArray::zeros(type.element(), shape, device);  // in place: its own zeros
    return lent(reads ? &Lent::zeros : &Lent::scratch, type.element(), shape, device);
  }
  unsigned char zero[sizeof(double) * 36] = {};
  return LaunchArg::from_bytes(type, zero);
}

}  // namespace

void launch_tangent(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
                    const std::vector<LaunchArg>& tangents, const LaunchOptions& options) {
  const auto& params = kernel.params();
  if (tangents.size() != params.size())
    throw Error(ErrorKind::User, "launch_tangent of kernel '" + kernel.name() + "': expected " +
                                     std::to_string(params.size()) + " tangents (one per parameter; {} for none), got " +
                                     std::to_string(tangents.size()));
  if (args.size() != params.size())
    throw Error(ErrorKind::User, "launch_tangent of kernel '" + kernel.name() + "': expected " +
                                     std::to_string(params.size()) + " arguments, got " + std::to_string(args.size()));
  const detail::TangentKernel& t = detail::tangent_kernel(kernel);
  std::vector<LaunchArg> all = args;
  all.reserve(2 * params.size());
  Device device = options.device ? *options.device : Device::cpu();
  if (!options.device)
    for (const LaunchArg& a : args)
      if (a.is_array()) {
        device = a.array().device();
        break;
      }
  std::vector<NdArray> keep;  // zeros for the unset array fields of structs' tangents
  for (size_t i = 0; i < params.size(); ++i)
    all.push_back(tangent_slot(kernel, t, i, args[i], tangents[i], options, device, keep));
  launch(*t.kernel, dims, all, options);
}

}  // namespace kjit
