// launch_tangent: the launch of a kernel's tangent kernel, with its arguments' tangents
// checked against them and the absent ones made up: a view of zeros for a direction the
// kernel reads, scratch memory for an output tangent nobody wants, the argument itself for a
// slot the kernel never touches.
#include <cstring>
#include <map>
#include <vector>

#include "kjit/ir/ir.hpp"
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

/// The tangent slot of parameter `i` for the tangent kernel's launch.
LaunchArg tangent_slot(const KernelDef& kernel, const detail::TangentKernel& t, size_t i, const LaunchArg& arg,
                       const LaunchArg& tangent, const LaunchOptions& options) {
  const ir::Type& type = kernel.params()[i].type;
  if (!type.is_differentiable()) return arg;  // never read: the argument itself fills the slot
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
  for (size_t i = 0; i < params.size(); ++i) all.push_back(tangent_slot(kernel, t, i, args[i], tangents[i], options));
  launch(*t.kernel, dims, all, options);
}

}  // namespace kjit
