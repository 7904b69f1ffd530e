// kjit::capture and kjit::Graph: work captured once on a device and replayed — on the cpu a
// list of checked, packed launches and array operations run in order; on CUDA a CudaGraph.
#include <cstring>
#include <memory>
#include <utility>

#include "array_uses.hpp"
#include "graph_capture.hpp"
#include "kjit/kernel.hpp"
#include "kjit/runtime/graph.hpp"
#include "write_log.hpp"

namespace kjit {

namespace {

/// A forward launch as packed at capture: its own copy of the parameter bytes, and the
/// pointers to each parameter rebased onto that copy.
struct FrozenLaunch {
  detail::EntryRun run;
  std::unique_ptr<unsigned char[]> bytes;  // new[] aligns to 16 (__STDCPP_DEFAULT_NEW_ALIGNMENT__)
  std::vector<void*> pointers;
  std::vector<LaunchArg> args;          // keeps the arrays alive
  std::vector<NdArray> written;  // arrays it writes, told to the tapes' write log
};
static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= detail::PackedParams::kAlignment,
              "a graph's parameter copy must be as aligned as PackedParams' storage");

std::string describe_graph_write(const void* context) {
  return "a graph's launch of kernel '" + static_cast<const FrozenLaunch*>(context)->run.kernel->name() + "'";
}

}  // namespace

struct Graph::Impl {
  Device device = Device::cpu();
  // cpu: the steps in order; a step is a frozen launch or a function (array operations,
  // adjoint launches, graphs launched during the capture).
  struct Step {
    std::unique_ptr<FrozenLaunch> launch;
    std::function<void()> fn;
  };
  std::vector<Step> steps;
  // CUDA: the graph, and what its launches and array operations used.
  CudaGraph cuda;
  std::vector<NdArray> keep_alive;
  size_t cuda_steps = 0;

  void replay_cpu() const {
    for (const Step& step : steps) {
      if (!step.launch) {
        step.fn();
        continue;
      }
      detail::EntryRun run = step.launch->run;
      run.params = const_cast<void**>(step.launch->pointers.data());
      detail::run_entry(run, nullptr, nullptr);
      for (const NdArray& a : step.launch->written) detail::note_write(a, describe_graph_write, step.launch.get());
    }
  }
};

namespace detail {

struct GraphRecorder {
  Graph::Impl* graph;
};

namespace {
thread_local GraphRecorder* open_capture_slot = nullptr;

/// Opens a capture on this thread until it goes.
class OpenCapture {
 public:
  explicit OpenCapture(GraphRecorder* r) { open_capture_slot = r; }
  ~OpenCapture() { open_capture_slot = nullptr; }
  OpenCapture(const OpenCapture&) = delete;
  OpenCapture& operator=(const OpenCapture&) = delete;
};

void keep_args_alive(Graph::Impl& g, const std::vector<LaunchArg>& args) {
  for (const LaunchArg& a : args)
    if (a.is_array()) g.keep_alive.push_back(a.array());
}
}  // namespace

GraphRecorder* open_capture() noexcept { return open_capture_slot; }

void check_capture_device(const GraphRecorder& capture, const KernelDef& kernel, const Device& device) {
  if (device == capture.graph->device) return;
  throw Error(ErrorKind::User, "launch of kernel '" + kernel.name() + "' on " + device.name() +
                                   " while a graph is being captured on " + capture.graph->device.name() +
                                   ": a graph holds the work of one device; launch it outside the capture");
}

bool capture_forward(GraphRecorder& capture, const EntryRun& run, const PackedParams& params,
                     const std::vector<LaunchArg>& args) {
  Graph::Impl& g = *capture.graph;
  if (!g.device.is_cpu()) {
    keep_args_alive(g, args);
    ++g.cuda_steps;
    return false;
  }
  auto frozen = std::make_unique<FrozenLaunch>();
  frozen->run = run;
  frozen->run.params = nullptr;
  frozen->bytes.reset(new unsigned char[params.bytes_used() ? params.bytes_used() : 1]);
  std::memcpy(frozen->bytes.get(), params.storage(), params.bytes_used());
  for (size_t i = 0; i < params.count(); ++i)
    frozen->pointers.push_back(frozen->bytes.get() + (static_cast<const unsigned char*>(params.param(i)) - params.storage()));
  frozen->args = args;
  for (size_t p : kernel_array_uses(*run.kernel).written)
    if (p < args.size() && args[p].is_array()) frozen->written.push_back(args[p].array());
  g.steps.push_back({std::move(frozen), nullptr});
  return true;
}

bool capture_adjoint(GraphRecorder& capture, const KernelDef& kernel, const Dims& dims,
                     const std::vector<LaunchArg>& args, const std::vector<LaunchArg>& adj_args,
                     const LaunchOptions& options, const Device& device) {
  Graph::Impl& g = *capture.graph;
  if (!g.device.is_cpu()) {
    keep_args_alive(g, args);
    keep_args_alive(g, adj_args);
    ++g.cuda_steps;
    return false;
  }
  LaunchOptions resolved = options;
  resolved.device = device;
  g.steps.push_back({nullptr, [&kernel, dims, args, adj_args, resolved] {
                       launch_adjoint(kernel, dims, args, adj_args, resolved);
                     }});
  return true;
}

bool capture_array_step(const char* what, const std::vector<NdArray>& arrays, std::function<void()> step) {
  GraphRecorder* capture = open_capture_slot;
  if (!capture) return false;
  Graph::Impl& g = *capture->graph;
  for (const NdArray& a : arrays)
    if (a.device() != g.device)
      throw Error(ErrorKind::User, std::string(what) + " of an array on " + a.device().name() +
                                       " while a graph is being captured on " + g.device.name() +
                                       ": a graph holds the work of one device; do it outside the capture");
  if (!g.device.is_cpu()) {
    g.keep_alive.insert(g.keep_alive.end(), arrays.begin(), arrays.end());
    ++g.cuda_steps;
    return false;
  }
  g.steps.push_back({nullptr, std::move(step)});
  return true;
}

}  // namespace detail

Graph capture(const Device& device, const GraphWork& work) {
  if (const detail::GraphRecorder* open = detail::open_capture())
    throw Error(ErrorKind::User, "kjit::capture on " + device.name() + ": a graph is already being captured on " +
                                     open->graph->device.name() +
                                     " on this thread, and captures do not nest (Warp: 'Graph capture already in "
                                     "progress'); launch a captured graph inside the capture instead");
  auto impl = std::make_shared<Graph::Impl>();
  impl->device = device;
  detail::GraphRecorder recorder{impl.get()};
  {
    detail::OpenCapture open(&recorder);
    if (device.is_cpu()) work(Stream::default_for(device));
    else impl->cuda = CudaGraph::capture(Stream::default_for(device), work);
  }
  Graph graph;
  graph.impl_ = std::move(impl);
  return graph;
}

const Device& Graph::device() const {
  static const Device cpu = Device::cpu();
  return impl_ ? impl_->device : cpu;
}

size_t Graph::steps() const {
  if (!impl_) return 0;
  return impl_->device.is_cpu() ? impl_->steps.size() : impl_->cuda_steps;
}

void Graph::launch() const { launch(Stream::default_for(device())); }

void Graph::launch(const Stream& stream) const {
  if (!impl_) throw Error(ErrorKind::User, "Graph::launch of an empty graph: make one with kjit::capture");
  if (stream.device() != impl_->device)
    throw Error(ErrorKind::User, "Graph::launch: the graph was captured on " + impl_->device.name() +
                                     " and cannot run on a stream of " + stream.device().name() +
                                     "; capture the work again on that device");
  if (detail::GraphRecorder* open = detail::open_capture()) {
    // A graph launched inside a capture is a step of the new graph (it shares the steps).
    if (open->graph->device != impl_->device)
      throw Error(ErrorKind::User, "Graph::launch of a graph of " + impl_->device.name() +
                                       " while a graph is being captured on " + open->graph->device.name() +
                                       ": a graph holds the work of one device");
    if (impl_->device.is_cpu()) {
      std::shared_ptr<const Impl> inner = impl_;
      open->graph->steps.push_back({nullptr, [inner] { inner->replay_cpu(); }});
      return;
    }
    open->graph->keep_alive.insert(open->graph->keep_alive.end(), impl_->keep_alive.begin(), impl_->keep_alive.end());
  }
  if (impl_->device.is_cpu()) impl_->replay_cpu();
  else impl_->cuda.replay(stream);
}

}  // namespace kjit
