// CUDA graphs for users: capturing work into an instantiated graph, replaying it, and the
// bounded cache of instantiated graphs keyed by the work, its buffers and the device.
#include "kjit/runtime/graph.hpp"

#include <cstdlib>
#include <mutex>

#include "kjit/runtime/internal/cuda_backend.hpp"
#include "kjit/runtime/internal/graph_lru.hpp"
#include "kjit/error.hpp"

namespace kjit {

namespace {
const Device& cuda_device_of(const Stream& stream, const char* what) {
  if (!stream.device().is_cuda())
    throw Error(ErrorKind::User, std::string(what) + " needs a CUDA stream, got one of " +
                                     stream.device().name() +
                                     ": cpu launches run eagerly, so call the work directly");
  return stream.device();
}
}  // namespace

CudaGraph CudaGraph::capture(const Stream& stream, const GraphWork& work) {
  const Device& device = cuda_device_of(stream, "CUDA graph capture");
  int ordinal = device.ordinal();
  // A default stream cannot be captured: use a private one (the graph does not keep it).
  Stream target = stream.handle() ? stream : Stream::create(device);
  cuda::capture_begin(ordinal, target.handle());
  try {
    work(target);
  } catch (...) {
    cuda::capture_abort(ordinal, target.handle());
    throw;
  }
  void* exec = cuda::capture_end(ordinal, target.handle());
  CudaGraph graph;
  graph.device_ = device;
  graph.exec_ = std::shared_ptr<void>(exec, [ordinal](void* e) { cuda::graph_destroy(ordinal, e); });
  return graph;
}

void CudaGraph::replay(const Stream& stream) const {
  if (!exec_) throw Error(ErrorKind::User, "replay of an empty CudaGraph: capture one first");
  if (stream.device() != device_)
    throw Error(ErrorKind::User, "a CUDA graph of " + device_.name() +
                                     " cannot be replayed on a stream of " +
                                     stream.device().name());
  cuda::graph_launch(device_.ordinal(), exec_.get(), stream.handle());
}

struct GraphCache::Impl {
  explicit Impl(size_t capacity) : lru(capacity) {}
  mutable std::mutex mutex;
  cuda::GraphLru lru;
  uint64_t hits = 0, misses = 0;
};

GraphCache::GraphCache(size_t capacity) : impl_(std::make_unique<Impl>(capacity)) {}
GraphCache::~GraphCache() = default;

bool GraphCache::run(const GraphKey& key, const Stream& stream, const GraphWork& work) {
  const Device& device = cuda_device_of(stream, "GraphCache::run");
  cuda::GraphLruKey lru_key{key.function, key.buffers, device.ordinal()};
  std::shared_ptr<void> entry;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    entry = impl_->lru.find(lru_key);
    if (entry) ++impl_->hits;
  }
  bool hit = entry != nullptr;
  if (!hit) {
    // Captured without the lock, so that other threads replay (or capture) meanwhile; should
    // two threads capture the same key, the later insert replaces the earlier graph.
    entry = std::make_shared<CudaGraph>(CudaGraph::capture(stream, work));
    std::vector<std::shared_ptr<void>> dropped;
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      ++impl_->misses;
      dropped = impl_->lru.insert(lru_key, entry);
    }
    // `dropped` is released here, outside the lock: destroying a graph calls the driver.
  }
  static_cast<const CudaGraph*>(entry.get())->replay(stream);
  return hit;
}

void GraphCache::clear() {
  std::vector<std::shared_ptr<void>> dropped;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  dropped = impl_->lru.clear();
}

size_t GraphCache::size() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->lru.size();
}

size_t GraphCache::capacity() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->lru.capacity();
}

void GraphCache::set_capacity(size_t capacity) {
  std::vector<std::shared_ptr<void>> dropped;
  std::lock_guard<std::mutex> lock(impl_->mutex);
  dropped = impl_->lru.set_capacity(capacity);
}

GraphCache::Stats GraphCache::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return Stats{impl_->hits, impl_->misses, impl_->lru.evictions()};
}

GraphCache& graph_cache() {
  // Never destroyed: its graphs would be destroyed after the driver may have shut down.
  static GraphCache* cache = [] {
    size_t capacity = GraphCache::kDefaultCapacity;
    if (const char* env = std::getenv("KJIT_GRAPH_CACHE_SIZE")) {
      char* end = nullptr;
      unsigned long v = std::strtoul(env, &end, 10);
      if (end && *end == '\0' && end != env) capacity = size_t(v);
    }
    return new GraphCache(capacity);
  }();
  return *cache;
}

int graph_captures_in_progress() { return cuda::capturing_count(); }

}  // namespace kjit
