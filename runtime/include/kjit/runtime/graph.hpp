// kjit/runtime/graph.hpp — graphs: work that launches several kernels, captured once and
// replayed with one call, on any device (kjit::capture, Warp's wp.ScopedCapture) or as a CUDA
// graph (kjit::CudaGraph); and a bounded cache of instantiated CUDA graphs keyed by the work
// and the buffers it touches (the C++ counterpart of a JAX callable's graph mode).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "kjit/runtime/device.hpp"
#include "kjit/runtime/stream.hpp"

namespace kjit {

/// Work to capture. It must put everything on the stream it is given (kjit::launch with
/// LaunchOptions::stream set to it, NdArray copies and zeroing with it) and do nothing
/// synchronous on the device: while it is captured nothing runs, and the graph records the
/// launches with the argument values and buffer addresses of that moment.
using GraphWork = std::function<void(const Stream& stream)>;

/// An instantiated CUDA graph of one device. Copies share it; the last copy destroys it (safe
/// while a replay is still running: the driver frees it when the replay ends).
class CudaGraph {
 public:
  /// No graph.
  CudaGraph() = default;

  /// Captures `work` on `stream` — or, when `stream` is a default stream, on a private stream
  /// of its device — and instantiates the graph. Modules must be loaded first (see
  /// kjit::preload_module, or launch each kernel once eagerly): loading a module during a
  /// capture is a User error, as is a cpu stream. Adjoint launches inside the work skip their
  /// dynamic-loop bound check (it needs a synchronous read); check eagerly first.
  static CudaGraph capture(const Stream& stream, const GraphWork& work);

  /// Runs the graph on `stream`, which must belong to the graph's device.
  void replay(const Stream& stream) const;
  /// Runs the graph on the calling thread's default stream of its device.
  void replay() const { replay(Stream::default_for(device_)); }

  bool valid() const { return exec_ != nullptr; }
  const Device& device() const { return device_; }
  /// The CUgraphExec (for interoperation; owned by this object).
  void* handle() const { return exec_.get(); }

 private:
  Device device_;
  std::shared_ptr<void> exec_;
};

/// Work captured on one device, replayed with launch() — Warp's wp.ScopedCapture and
/// wp.capture_launch, on the cpu as on CUDA (made by kjit::capture). Copies share it.
///
/// On the cpu the graph is the list of what the work did, each step as it was at capture:
/// kernel launches (the kernel, its dims, its arguments checked and packed once: scalar values
/// as they were, array handles, which keep their memory alive) and NdArray::zero, zero_grad,
/// fill and copy_from. Replay runs them in order, without checking or packing again. On a CUDA
/// device it is a kjit::CudaGraph, and the graph also keeps the launches' arrays alive.
class Graph {
 public:
  /// No graph; launch() is a User error.
  Graph() = default;

  /// Runs the captured work on the graph's device: on the cpu, in order on the calling thread
  /// (each launch on the pool, as kjit::launch); on CUDA, on the device's default stream.
  void launch() const;
  /// Runs it on `stream`, which must be a stream of the graph's device (a User error else).
  void launch(const Stream& stream) const;

  bool valid() const { return impl_ != nullptr; }
  /// The device it was captured on (cpu for an empty graph).
  const Device& device() const;
  /// cpu: the steps recorded (launches, zeroing, fills, copies, graphs launched inside the
  /// capture); CUDA: the launches seen during the capture.
  size_t steps() const;

  struct Impl;

 private:
  friend Graph capture(const Device& device, const GraphWork& work);
  std::shared_ptr<const Impl> impl_;
};

/// Captures `work` on `device` into a Graph (Warp: `with wp.ScopedCapture(device) as c:`).
/// `work` gets the stream to put its work on: on the cpu the cpu's stream (passing it is
/// optional there), on CUDA a capturing stream (LaunchOptions::stream and the NdArray calls'
/// stream argument must be it; see CudaGraph::capture).
///
/// On the cpu, as in Warp, nothing runs during the capture: launches and array operations of
/// the calling thread on the cpu are recorded only (their arguments are checked now, so a bad
/// launch throws here), and the arrays hold what they held before until the graph is
/// launched. Reads on the host (to_vector) are not recorded: they see the values of before.
/// Launches on another device during a cpu capture, and captures inside a capture, are User
/// errors. Launches of a recorded graph are not recorded on a kjit::Tape. Adjoint launches
/// are recorded with their arguments and run as kjit::launch_adjoint would at each replay.
/// If `work` throws, nothing was captured and the exception propagates.
Graph capture(const Device& device, const GraphWork& work);

/// Warp's name for Graph::launch: `kjit::capture_launch(graph)`.
inline void capture_launch(const Graph& graph) { graph.launch(); }
inline void capture_launch(const Graph& graph, const Stream& stream) { graph.launch(stream); }

/// What a cached graph stands for: the work, named by the caller, and every device buffer it
/// reads or writes (the graph has their addresses baked in). Anything else the work bakes in —
/// sizes, scalar arguments — must be part of `function` when it varies between runs.
struct GraphKey {
  std::string function;
  std::vector<const void*> buffers;

  /// A key naming the work by its C++ type: each lambda expression has its own type, so the
  /// call site identifies the work (its captured values do not: put varying ones in `buffers`
  /// or use an explicit name).
  template <class F>
  static GraphKey of(const F&, std::vector<const void*> buffers) {
    return GraphKey{typeid(F).name(), std::move(buffers)};
  }
};

/// Instantiated graphs by (key, device), at most `capacity` of them: past it, the least
/// recently used graph is destroyed. Thread-safe; captures of different keys run concurrently.
class GraphCache {
 public:
  static constexpr size_t kDefaultCapacity = 32;

  explicit GraphCache(size_t capacity = kDefaultCapacity);
  ~GraphCache();
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  /// Replays the graph of `key` on `stream` (a CUDA stream; its device is part of the key),
  /// capturing `work` into it first when there is none. Returns true when it was cached.
  bool run(const GraphKey& key, const Stream& stream, const GraphWork& work);

  /// Destroys every cached graph.
  void clear();
  size_t size() const;
  size_t capacity() const;
  /// Changes the bound (0 caches nothing), destroying what no longer fits.
  void set_capacity(size_t capacity);

  /// Counters since construction.
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t evictions = 0;
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The process-wide graph cache; its capacity is $KJIT_GRAPH_CACHE_SIZE when set, else 32.
GraphCache& graph_cache();

/// Streams being captured into graphs right now, process-wide. kjit never unloads a module;
/// anything that unloads one must wait until this is zero.
int graph_captures_in_progress();

}  // namespace kjit
