// launch_tangent: the launch of a kernel's tangent kernel, with its arguments' tangents
// checked against them and the absent ones made up (zeros, or the unread slot's argument).
#include <cstring>

#include "kjit/ir/ir.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/launch.hpp"

namespace kjit {

namespace {

std::string where(const KernelDef& k, size_t i) {
  return "launch_tangent of kernel '" + k.name() + "': tangent of argument " + std::to_string(i + 1) + " ('" +
         k.params()[i].name + "')";
}

/// The tangent slot of parameter `i` for the tangent kernel's launch.
LaunchArg tangent_slot(const KernelDef& kernel, size_t i, const LaunchArg& arg, const LaunchArg& tangent,
                       const LaunchOptions& options) {
  const ir::Type& t = kernel.params()[i].type;
  if (!t.is_differentiable()) return arg;  // never read: the argument itself fills the slot
  if (!tangent.absent()) {
    if (t.is_array()) {
      if (!tangent.is_array())
        throw Error(ErrorKind::User, where(kernel, i) + " must be an array of the argument's shape");
      if (arg.is_array() && !tangent.array().same_shape(arg.array()))
        throw Error(ErrorKind::User, where(kernel, i) + " must have the shape of the array it is the tangent of");
    }
    return tangent;  // the launch checks its type like any argument's
  }
  if (t.is_array()) {
    if (!arg.is_array()) return arg;  // the launch names the missing argument
    Device device = options.device ? *options.device : arg.array().device();
    return NdArray::zeros(t.element(), arg.array().shape(), device);
  }
  unsigned char zero[sizeof(double) * 36] = {};
  return LaunchArg::from_bytes(t, zero);
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
  const KernelDef& tangent = tangent_of(kernel);
  std::vector<LaunchArg> all = args;
  for (size_t i = 0; i < params.size(); ++i) all.push_back(tangent_slot(kernel, i, args[i], tangents[i], options));
  launch(tangent, dims, all, options);
}

}  // namespace kjit
