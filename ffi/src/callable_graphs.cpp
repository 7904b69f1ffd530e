// kjit's own CUDA graphs for C++ callables: capture on XLA's stream (aborted cleanly on
// errors), replay from a per-device LRU, staging buffers with copies around the replay
// (KjitStagedEx) or captured inside it and re-pointed per call (KjitStaged).
#include "callable_graphs.hpp"

#include <functional>
#include <limits>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/internal/graph_lru.hpp"
#include "kernel_info.hpp"
#include "kjit/runtime/modules.hpp"

namespace kjit::ffi::detail {

namespace {

using Copy = cuda::CapturedCopy;

/// An instantiated graph in the LRU, with what its replays need.
struct Graph {
  int ordinal = 0;
  void* exec = nullptr;
  void* graph = nullptr;            ///< KjitStaged: the captured graph its copy nodes belong to
  std::vector<void*> copy_nodes;    ///< KjitStaged: one per copy, in the call's copy order
  std::vector<Copy> copies;         ///< KjitStaged: what each copy node copies now
  std::shared_ptr<void> staging;    ///< staged modes: keeps the buffers the graph uses alive

  explicit Graph(int o) : ordinal(o) {}
  ~Graph() {
    cuda::graph_destroy(ordinal, exec);  // safe while a replay runs: the driver defers it
    cuda::graph_release(ordinal, graph);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
};

/// The staging buffers of one (stream, shapes): one array per parameter (unset: not staged).
struct Staging {
  std::vector<NdArray> arrays;
};

size_t lru_capacity(int max) {
  return max <= 0 ? std::numeric_limits<size_t>::max() : size_t(max);
}

char mode_tag(GraphMode mode) {
  return mode == GraphMode::Kjit ? 'k' : mode == GraphMode::KjitStagedEx ? 's' : 'x';
}

template <class T>
void append_bytes(std::string& s, const T& v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

bool has_input(ArrayRole r) { return r != ArrayRole::Output; }
bool has_output(ArrayRole r) { return r != ArrayRole::Input; }

/// Whether array `a` is staged under `c`'s stage_in / stage_out.
bool staged(const GraphCallable& c, const CallArray& a) {
  return (has_input(a.role) && c.stage_in[size_t(a.param)]) ||
         (has_output(a.role) && c.stage_out[size_t(a.param)]);
}

/// Captures `work` on `stream` (on a private stream when it is a default one: those cannot be
/// captured) into a graph of `ordinal`, keeping the nodes of `copies` when `keep_copies`.
/// Returns null when the capture failed only because a kernel's module was not loaded yet: the
/// capture is aborted and the caller runs the call eagerly, which loads it.
std::shared_ptr<Graph> capture(const Stream& stream, const std::vector<Copy>& copies, bool keep_copies,
                               const std::function<void(const Stream&)>& work) {
  const int ordinal = stream.device().ordinal();
  Stream target = stream.handle() ? stream : Stream::create(stream.device());
  const uint64_t refused = cuda::refused_module_loads();
  cuda::capture_begin(ordinal, target.handle());
  try {
    work(target);
  } catch (...) {
    cuda::capture_abort(ordinal, target.handle());
    if (cuda::refused_module_loads() != refused) return nullptr;
    throw;
  }
  auto g = std::make_shared<Graph>(ordinal);
  if (keep_copies) {
    g->exec = cuda::capture_end_with_copies(ordinal, target.handle(), copies, &g->graph, &g->copy_nodes);
    g->copies = copies;
  } else {
    g->exec = cuda::capture_end(ordinal, target.handle());
  }
  return g;
}

void copy_all(int ordinal, const std::vector<Copy>& copies, size_t begin, size_t end, void* stream) {
  for (size_t i = begin; i < end; ++i)
    cuda::copy(ordinal, copies[i].dst, copies[i].src, copies[i].bytes, cuda::CopyKind::DeviceToDevice, stream);
}

}  // namespace

struct CallableGraphs::PerDevice {
  explicit PerDevice(size_t capacity) : lru(capacity) {}
  std::mutex mutex;
  cuda::GraphLru lru;  // entries are std::shared_ptr<Graph>
  /// Staging buffers by (stream, shapes); the graphs own them, so they go with their last graph.
  std::map<std::pair<void*, std::string>, std::weak_ptr<Staging>> staging;
  bool preloaded = false;
};

CallableGraphs::CallableGraphs(int max) : max_(max) {}
CallableGraphs::~CallableGraphs() = default;

CallableGraphs::PerDevice& CallableGraphs::device(int ordinal) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& d = devices_[ordinal];
  if (!d) d = std::make_unique<PerDevice>(lru_capacity(max_));
  return *d;  // never removed: the reference stays valid
}

size_t CallableGraphs::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (auto& [ordinal, d] : devices_) {
    std::lock_guard<std::mutex> g(d->mutex);
    n += d->lru.size();
  }
  return n;
}

void CallableGraphs::clear() {
  std::vector<cuda::GraphLru::Handle> dropped;  // destroyed after the locks: that calls the driver
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [ordinal, d] : devices_) {
    std::lock_guard<std::mutex> g(d->mutex);
    for (auto& h : d->lru.clear()) dropped.push_back(std::move(h));
    d->staging.clear();
  }
}

int CallableGraphs::max() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return max_;
}

void CallableGraphs::set_max(int max) {
  std::vector<cuda::GraphLru::Handle> dropped;
  std::lock_guard<std::mutex> lock(mutex_);
  max_ = max;
  for (auto& [ordinal, d] : devices_) {
    std::lock_guard<std::mutex> g(d->mutex);
    for (auto& h : d->lru.set_capacity(lru_capacity(max))) dropped.push_back(std::move(h));
  }
}

void CallableGraphs::run(GraphMode mode, const GraphCallable& c, const CallContext& ctx, const CallShape& call) {
  const Stream& stream = ctx.stream();
  const int ordinal = ctx.device().ordinal();
  void* const sh = stream.handle();
  PerDevice& d = device(ordinal);
  std::vector<cuda::GraphLru::Handle> dropped;  // declared before the lock: released after it
  std::lock_guard<std::mutex> lock(d.mutex);

  if (!d.preloaded) {
    // Outside any capture: loading a module during one is refused.
    for (const std::string& k : c.preload_kernels) load_module(kernel_info(k).def->module(), ctx.device());
    d.preloaded = true;
  }

  // Work already captured by someone else (the application capturing XLA's stream) takes the
  // call's launches as they are; a second capture cannot begin on that stream.
  auto external = [&] { return cuda::stream_capturing(ordinal, sh); };

  thread_local cuda::GraphLruKey key;
  key.device = ordinal;
  key.function.assign(1, mode_tag(mode));
  append_bytes(key.function, c.generation);
  key.function += call.shapes;
  key.function += call.statics;
  key.buffers.clear();
  const std::vector<LaunchArg>& args = ctx.args();

  if (mode == GraphMode::Kjit) {
    for (const CallArray& a : call.arrays) key.buffers.push_back(args[size_t(a.param)].array().data());
    std::shared_ptr<void> h = d.lru.find(key);
    if (!h) {
      std::shared_ptr<Graph> g;
      if (!external())
        g = capture(stream, {}, false, [&](const Stream& s) {
          CallContext cc = ctx;
          CallableAccess::options(cc).stream = s;
          c.fn(cc);
        });
      if (!g) return c.fn(ctx);  // run eagerly: captured by the caller, or loading a module
      dropped = d.lru.insert(key, g);
      h = std::move(g);
    }
    cuda::graph_launch(ordinal, static_cast<Graph*>(h.get())->exec, sh);
    return;
  }

  // Staged modes: the staging buffers of this stream and these shapes (allocated outside any
  // capture), and the call's arguments with the staged arrays replaced by them.
  std::shared_ptr<Staging> st = d.staging[{sh, call.shapes}].lock();
  if (!st) {
    for (auto it = d.staging.begin(); it != d.staging.end();)
      it = it->second.expired() ? d.staging.erase(it) : std::next(it);
    st = std::make_shared<Staging>();
    st->arrays.resize(args.size());
    for (const CallArray& a : call.arrays)
      if (staged(c, a)) {
        const NdArray& v = args[size_t(a.param)].array();
        st->arrays[size_t(a.param)] = NdArray::empty(v.element(), v.shape(), ctx.device());
      }
    d.staging[{sh, call.shapes}] = st;
  }
  thread_local CallContext sctx;
  sctx = ctx;
  std::vector<LaunchArg>& sargs = CallableAccess::args(sctx);
  // Copies in (XLA -> staging) first, then out (staging -> XLA); none of zero bytes (a
  // zero-length copy node cannot be updated, and there is nothing to copy).
  thread_local std::vector<Copy> copies;
  copies.clear();
  for (const CallArray& a : call.arrays) {
    const NdArray& s = st->arrays[size_t(a.param)];
    void* xla = args[size_t(a.param)].array().data();
    if (!s.defined()) {
      key.buffers.push_back(xla);  // used in place: its address is baked into the graph
      continue;
    }
    sargs[size_t(a.param)] = LaunchArg(s);
    key.buffers.push_back(s.data());
    if (has_input(a.role) && a.bytes) copies.push_back({s.data(), xla, a.bytes});
  }
  const size_t n_in = copies.size();
  for (const CallArray& a : call.arrays) {
    const NdArray& s = st->arrays[size_t(a.param)];
    if (s.defined() && has_output(a.role) && a.bytes)
      copies.push_back({args[size_t(a.param)].array().data(), s.data(), a.bytes});
  }

  const bool inside = mode == GraphMode::KjitStaged;
  std::shared_ptr<void> h = d.lru.find(key);
  if (!h) {
    std::shared_ptr<Graph> g;
    if (!external())
      g = capture(stream, copies, inside, [&](const Stream& s) {
        CallableAccess::options(sctx).stream = s;
        if (inside) copy_all(ordinal, copies, 0, n_in, s.handle());
        c.fn(sctx);
        if (inside) copy_all(ordinal, copies, n_in, copies.size(), s.handle());
      });
    if (!g) return c.fn(ctx);  // eagerly, on XLA's buffers: nothing to stage
    g->staging = st;
    dropped = d.lru.insert(key, g);
    h = std::move(g);
  } else if (inside) {
    // Re-point the copy nodes at this call's XLA buffers (the staging side never changes).
    auto* g = static_cast<Graph*>(h.get());
    KJIT_CHECK(g->copies.size() == copies.size(), "a staged graph's copies do not match its key");
    for (size_t i = 0; i < copies.size(); ++i) {
      if (copies[i].dst == g->copies[i].dst && copies[i].src == g->copies[i].src) continue;
      cuda::graph_set_copy(ordinal, g->exec, g->copy_nodes[i], copies[i].dst, copies[i].src);
      g->copies[i] = copies[i];
    }
  }
  auto* g = static_cast<Graph*>(h.get());
  if (!inside) copy_all(ordinal, copies, 0, n_in, sh);
  cuda::graph_launch(ordinal, g->exec, sh);
  if (!inside) copy_all(ordinal, copies, n_in, copies.size(), sh);
}

}  // namespace kjit::ffi::detail
