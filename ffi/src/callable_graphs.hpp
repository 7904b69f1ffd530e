// kjit's own CUDA graphs for C++ callables (GraphMode::Kjit, KjitStagedEx, KjitStaged): capture
// on XLA's stream, replay, the per-device LRU of instantiated graphs and the staging buffers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kjit/ffi/ffi.hpp"

namespace kjit::ffi::detail {

/// Fills a CallContext's private parts (friend of CallContext).
struct CallableAccess {
  static std::vector<std::string>& names(CallContext& c) { return c.names_; }
  static std::vector<LaunchArg>& args(CallContext& c) { return c.args_; }
  static LaunchOptions& options(CallContext& c) { return c.options_; }
  static Platform& platform(CallContext& c) { return c.platform_; }
};

/// How an array argument takes part in a call.
enum class ArrayRole : uint8_t { Input, InOut, Output };

/// One array argument of a decoded call.
struct CallArray {
  int param = 0;  ///< its index in CallContext::args()
  ArrayRole role = ArrayRole::Input;
  size_t bytes = 0;
};

/// What the graph modes need of a decoded call besides its CallContext.
struct CallShape {
  /// Every array's role and dims (batch dims included): equal strings take equal staging buffers.
  std::string shapes;
  /// The static values' bytes: with `shapes`, what a graph bakes in besides addresses.
  std::string statics;
  std::vector<CallArray> arrays;
  void clear() {
    shapes.clear();
    statics.clear();
    arrays.clear();
  }
};

/// What the graph modes need of a registered callable.
struct GraphCallable {
  std::string name;         ///< for messages
  uint64_t generation = 0;  ///< unique per registration: part of every graph's key
  CallableFn fn;
  std::vector<std::string> preload_kernels;
  /// Per parameter: whether the staged modes copy it in (when it is an input or in/out array)
  /// or out (when it is an output or in/out array).
  std::vector<bool> stage_in, stage_out;
};

/// The graphs of one callable on every device: one LRU of instantiated graphs per device, and
/// the staging buffers of the staged modes. Thread-safe; calls on one device are serialised
/// (staged calls share buffers, and a staged graph's copy nodes are updated before its replay).
class CallableGraphs {
 public:
  /// `max`: graphs kept per device (0 = unbounded).
  explicit CallableGraphs(int max);
  ~CallableGraphs();
  CallableGraphs(const CallableGraphs&) = delete;
  CallableGraphs& operator=(const CallableGraphs&) = delete;

  /// Runs call `ctx` (decoded on the CUDA platform, `call` describing it) of `c` in `mode`
  /// (Kjit, KjitStagedEx or KjitStaged): replays a cached graph, or captures one on the call's
  /// stream and replays it. Throws kjit::Error; a failed capture is aborted first.
  void run(GraphMode mode, const GraphCallable& c, const CallContext& ctx, const CallShape& call);

  /// Graphs cached on every device.
  size_t size() const;
  /// Releases every graph, and the staging buffers only they kept.
  void clear();
  /// Changes the bound per device (0 = unbounded), releasing what no longer fits.
  void set_max(int max);
  /// The bound per device now (0 = unbounded).
  int max() const;

 private:
  struct PerDevice;
  PerDevice& device(int ordinal);

  mutable std::mutex mutex_;  // guards devices_ and max_; never held while a device's is taken
  std::map<int, std::unique_ptr<PerDevice>> devices_;
  int max_;
};

}  // namespace kjit::ffi::detail
