// Forward and adjoint launches on the cpu (the thread pool) and on CUDA devices.
#include "kjit/runtime/launch.hpp"

#include <atomic>
#include <cstdlib>

#include "checked_size.hpp"
#include "extent_check.hpp"
#include "graph_capture.hpp"
#include "kjit/runtime/internal/entry_run.hpp"
#include "kjit/runtime/internal/module_table.hpp"
#include "param_packer.hpp"
#include "tape_hooks.hpp"

namespace kjit {

int64_t Dims::size() const {
  int64_t n = 0;
  if (!detail::checked_product(shape_.data(), shape_.size(), 1, &n))
    throw Error(ErrorKind::User, "launch dims " + detail::shape_text(shape_.data(), shape_.size()) +
                                     ": their product overflows 64 bits");
  return n;
}

void LaunchArg::set_bytes(const void* bytes, size_t n) {
  if (n <= sizeof(small_)) {
    std::memcpy(small_, bytes, n);
    return;
  }
  auto* copy = new unsigned char[n];
  std::memcpy(copy, bytes, n);
  large_owner_ = detail::SharedResource(copy, Device::cpu(), [](void* p, const Device&) {
    delete[] static_cast<unsigned char*>(p);
  });
  large_ = copy;
}

LaunchArg LaunchArg::from_bytes(const ir::Type& type, const void* bytes) {
  if (type.is_array() || type.is_void() || size_t(type.element_bytes()) > kMaxValueBytes)
    throw Error(ErrorKind::User, "LaunchArg::from_bytes: a value of type " + type.str() + " is not a launch value");
  LaunchArg a;
  a.kind_ = Kind::Value;
  a.type_ = type;
  a.set_bytes(bytes, size_t(type.element_bytes()));
  return a;
}

LaunchArg::LaunchArg(const NdArray& array)
    : kind_(array.defined() ? Kind::Array : Kind::Absent), array_(array),
      type_(array.defined() ? ir::Type::array(array.element(), array.ndim()) : ir::Type()) {}

namespace {

/// The CUstream of `requested` for a launch of `kernel` on `device`: its handle when it belongs
/// to that device, none (the device's default stream) when it was left unset, and otherwise a
/// User error: work cannot be queued on another device's stream.
void* launch_stream(const KernelDef& kernel, const Device& device, const Stream& requested) {
  if (requested.device() == device) return requested.handle();
  if (requested.device().is_cpu()) return nullptr;  // unset: LaunchOptions' default Stream
  throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "' on " + device.name() +
                                   ": LaunchOptions::stream is a stream of " +
                                   requested.device().name() + ", not of " + device.name() +
                                   "; pass a stream of " + device.name() +
                                   ", or none for its default stream");
}

void run(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
         const std::vector<LaunchArg>* adj_args, const LaunchOptions& options) {
  kj::launch_bounds_t bounds = detail::make_bounds(kernel, dims);
  detail::EntryRun run;
  run.kernel = &kernel;
  run.adjoint = adj_args != nullptr;
  run.device = detail::launch_device(kernel, args, adj_args, options);
  run.stream = launch_stream(kernel, run.device, options.stream);
  run.block_dim = options.block_dim;
  run.deterministic = options.deterministic || deterministic_launches();
  run.entry = &detail::kernel_entry(kernel, run.device);
  detail::entry_function(run);  // a missing adjoint is reported before the arguments
  detail::PackedParams params;
  detail::ValueSums sums;  // the cpu's partial sums of value adjoints (allocated only if asked for)
  detail::pack_launch(params, kernel, bounds, args, adj_args, run.device, &sums);
  detail::check_extents(kernel, bounds, args, adj_args);
  run.params = params.pointers();
  if (detail::GraphRecorder* capture = detail::open_capture()) {  // kjit::capture: checked, then recorded
    detail::check_capture_device(*capture, kernel, run.device);
    if (run.adjoint ? detail::capture_adjoint(*capture, kernel, dims, args, *adj_args, options, run.device)
                    : detail::capture_forward(*capture, run, params, args))
      return;
  }
  detail::run_entry(run, [](void* sums, int64_t) { return static_cast<detail::ValueSums*>(sums); }, &sums);
  if (!run.adjoint) detail::after_forward_launch(kernel, dims, args, options, run.device);
}

}  // namespace

namespace {
std::atomic<bool>& deterministic_slot() {
  static std::atomic<bool> on{[] {
    const char* env = std::getenv("KJIT_DETERMINISTIC");
    return env && env[0] == '1' && !env[1];
  }()};
  return on;
}
}  // namespace

void set_deterministic(bool on) { deterministic_slot().store(on, std::memory_order_relaxed); }
bool deterministic_launches() { return deterministic_slot().load(std::memory_order_relaxed); }

void launch(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
            const LaunchOptions& options) {
  run(kernel, dims, args, nullptr, options);
}

void launch_adjoint(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
                    const std::vector<LaunchArg>& adj_args, const LaunchOptions& options) {
  run(kernel, dims, args, &adj_args, options);
}

void launch_adjoint_grads(const KernelDef& kernel, const Dims& dims, const std::vector<LaunchArg>& args,
                          const LaunchOptions& options) {
  std::vector<LaunchArg> adj;
  for (const LaunchArg& a : args) adj.push_back(a.is_array() && a.array().has_grad() ? LaunchArg(a.array().grad()) : LaunchArg());
  run(kernel, dims, args, &adj, options);
}

}  // namespace kjit
