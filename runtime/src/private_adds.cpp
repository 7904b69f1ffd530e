// Privatized accumulation on the cpu: private copies per thread, their cache, and the merge.
#include "kjit/runtime/internal/private_adds.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "kjit/abi.h"
#include "kjit/error.hpp"
#include "kjit/runtime/internal/thread_pool.hpp"
#include "memory.hpp"

namespace kjit::detail {

namespace {
std::atomic<uint64_t> g_privatized{0};
std::atomic<uint64_t> g_plain_adds{0};
}  // namespace

// ---------------------------------------------------------------------------------------------
// Descriptions and the decision

CpuPrivateAdds cpu_private_adds(const compiler::KernelDescription& k, bool adjoint) {
  CpuPrivateAdds out;
  const int n = int(k.params.size());
  out.param_count = 1 + n * (adjoint ? 2 : 1);
  for (const compiler::PrivateAddDescription& d : adjoint ? k.private_adjoint : k.private_forward) {
    const compiler::ParamDescription& p = k.params.at(size_t(d.param % n));
    PrivateTarget t;
    t.arg = 1 + d.param;
    t.components = p.lanes;
    t.adds = d.adds;
    t.owned = d.owned;
    if (p.scalar == "float32") t.kind = MergeKind::F32;
    else if (p.scalar == "float64") t.kind = MergeKind::F64;
    else if (p.scalar == "int32" || p.scalar == "uint32") t.kind = MergeKind::U32;
    else if (p.scalar == "int64" || p.scalar == "uint64") t.kind = MergeKind::U64;
    else KJIT_CHECK(false, "kernel '" + k.name + "': private adds into an array of " + p.scalar);
    KJIT_CHECK(t.components >= 1, "kernel '" + k.name + "': private adds into an array of structs");
    out.targets.push_back(t);
  }
  for (int copy = 0; copy < (adjoint ? 2 : 1); ++copy)
    for (int p = 0; p < n; ++p)
      if (k.params[size_t(p)].ndim > 0) out.array_args.push_back(1 + copy * n + p);
  return out;
}

PlainAdds::PlainAdds(const CpuPrivateAdds* adds, void** params, bool in_order)
    : flagged_(params, adds ? adds->param_count : 0, adds ? adds->targets.size() : 0) {
  if (!adds) return;
  for (const PrivateTarget& t : adds->targets) {
    const auto& a = *static_cast<const kj::array_t<void>*>(params[t.arg]);
    const bool plain = a.data && (in_order || (t.owned && !shares_memory(adds->array_args, params, t.arg)));
    if (!plain) continue;
    flagged_.flag(t.arg, kj::kArrayPrivate);
    if (!in_order) g_plain_adds.fetch_add(1, std::memory_order_relaxed);
  }
}

namespace {

PrivatizeMode mode_from_environment() {
  const char* env = std::getenv("KJIT_PRIVATE_ADDS");
  if (env && env[0] == '0' && !env[1]) return PrivatizeMode::Never;
  if (env && env[0] == '1' && !env[1]) return PrivatizeMode::Always;
  return PrivatizeMode::Auto;
}

std::atomic<PrivatizeMode>& mode_slot() {
  static std::atomic<PrivatizeMode> mode{mode_from_environment()};
  return mode;
}

int scalar_bytes(MergeKind k) { return k == MergeKind::F64 || k == MergeKind::U64 ? 8 : 4; }

}  // namespace

uint64_t privatized_arrays() { return g_privatized.load(std::memory_order_relaxed); }
uint64_t plain_add_arrays() { return g_plain_adds.load(std::memory_order_relaxed); }

PrivatizeMode privatize_mode() { return mode_slot().load(std::memory_order_relaxed); }
void set_privatize_mode(PrivatizeMode mode) { mode_slot().store(mode, std::memory_order_relaxed); }

bool worth_privatizing(int64_t size, int adds, int64_t elements, int64_t element_bytes, unsigned threads) {
  if (elements <= 0 || size <= 0) return false;
  if (double(elements) * double(element_bytes) * double(threads) > double(kPrivateMaxBytes)) return false;
  // bench/private_adds (docs/BENCHMARKS.md): a copy that stays in a core's cache pays from one
  // add per element on (0.4-0.7x the atomic launch's time at N = E, on one thread or two); a
  // larger one costs a stream per thread in the merge, which the adds repay from one per
  // element per thread on (2 threads, 1M elements: 1.1-1.3x at N = E, 0.9x at N = 2E).
  const bool cached = double(elements) * double(element_bytes) <= double(kPrivateCachedBytes);
  return double(size) * double(adds) >= double(elements) * (cached ? 1.0 : double(threads));
}

// ---------------------------------------------------------------------------------------------
// The cache of private copies: every buffer in it is all zero bytes (merges zero what they read).

namespace {

struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
};

constexpr size_t kCacheMaxBytes = size_t(512) << 20;

class BufferCache {
 public:
  /// A zeroed buffer of at least `bytes`.
  Buffer acquire(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->bytes >= bytes && (best == free_.end() || it->bytes < best->bytes)) best = it;
      if (best != free_.end()) {
        Buffer b = *best;
        free_.erase(best);
        held_ -= b.bytes;
        return b;
      }
    }
    Buffer b;
    b.bytes = (bytes + 4095) / 4096 * 4096;
    b.data = allocate_host(b.bytes);
    if (!b.data) throw Error(ErrorKind::User, "out of memory for a launch's private copies (" + std::to_string(b.bytes) + " bytes)");
    std::memset(b.data, 0, b.bytes);
    return b;
  }
  /// Takes back a zeroed buffer (or frees it when the cache is full).
  void release(Buffer b) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (held_ + b.bytes <= kCacheMaxBytes) {
        free_.push_back(b);
        held_ += b.bytes;
        return;
      }
    }
    std::free(b.data);
  }

 private:
  std::mutex mutex_;
  std::vector<Buffer> free_;
  size_t held_ = 0;
};

BufferCache& cache() {
  static BufferCache* c = new BufferCache;  // never destroyed: launches may run during teardown
  return *c;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// One launch

namespace {
/// Gives `a` the strides of a dense row-major array of its shape: the private copies' layout,
/// and what the merge's dense path asks of the user's array.
void set_row_major_strides(kj::array_t<void>& a, int64_t element_bytes) {
  int64_t stride = element_bytes;
  for (int d = a.ndim - 1; d >= 0; --d) {
    a.strides[d] = stride;
    stride *= a.shape[d];
  }
}
}  // namespace

struct PrivateLaunch::Chosen {
  PrivateTarget target;
  kj::array_t<void> array;  ///< the launch's own descriptor of the array
  int64_t elements = 0;
  int64_t element_bytes = 0;
};

struct PrivateLaunch::Slot {
  std::vector<void*> params;
  std::vector<kj::array_t<void>> arrays;  ///< one per chosen target, data in `buffers`
  std::vector<Buffer> buffers;
  bool used = false;  ///< set by the slot's thread when it runs part of the launch
};

PrivateLaunch::PrivateLaunch(const CpuPrivateAdds& adds, void** params, int64_t size, unsigned threads)
    : params_(params), param_count_(adds.param_count) {
  const PrivatizeMode mode = privatize_mode();
  if (mode == PrivatizeMode::Never) return;
  for (const PrivateTarget& t : adds.targets) {
    const auto& a = *static_cast<const kj::array_t<void>*>(params[t.arg]);
    if (!a.data || a.ndim < 1) continue;  // an absent adjoint: nothing adds into it
    if (a.flags & kj::kArrayPrivate) continue;  // added into plainly in place (PlainAdds)
    Chosen c{t, a, 1, int64_t(scalar_bytes(t.kind)) * t.components};
    for (int d = 0; d < a.ndim; ++d) c.elements *= a.shape[d];
    if (c.elements == 0) continue;
    if (mode == PrivatizeMode::Auto && !worth_privatizing(size, t.adds, c.elements, c.element_bytes, threads))
      continue;
    chosen_.push_back(c);
  }
  if (chosen_.empty()) return;
  g_privatized.fetch_add(chosen_.size(), std::memory_order_relaxed);
  // Every copy is taken here, on the launching thread (an allocation failure throws here, not
  // on a worker): one per pool slot for a pooled launch, the caller's alone for an inline one.
  slots_.resize(ThreadPool::global().size());
  const unsigned own = ThreadPool::current_slot();
  for (unsigned k = 0; k < slots_.size(); ++k) {
    if (threads == 1 && k != own) continue;
    auto s = std::make_unique<Slot>();
    s->params.assign(params_, params_ + param_count_);
    s->arrays.resize(chosen_.size());  // not resized again: params point into it
    for (size_t i = 0; i < chosen_.size(); ++i) {
      const Chosen& c = chosen_[i];
      s->buffers.push_back(cache().acquire(size_t(c.elements * c.element_bytes)));
      kj::array_t<void>& a = s->arrays[i];
      a = c.array;
      a.data = s->buffers.back().data;
      a.flags = kj::kArrayPrivate;
      set_row_major_strides(a, c.element_bytes);  // dense, whatever the array's own strides
      s->params[size_t(c.target.arg)] = &a;
    }
    slots_[k] = std::move(s);
  }
}

PrivateLaunch::~PrivateLaunch() {
  // merge() hands the copies back; copies of a launch that ended without it may hold sums,
  // which must not return to the cache.
  for (auto& s : slots_)
    if (s)
      for (Buffer& b : s->buffers) std::free(b.data);
}

void** PrivateLaunch::params_for_this_thread() {
  const unsigned k = ThreadPool::current_slot();
  KJIT_CHECK(k < slots_.size() && slots_[k], "a private launch ran on a thread without a slot");
  slots_[k]->used = true;
  return slots_[k]->params.data();
}

// ---------------------------------------------------------------------------------------------
// The merge

namespace {

/// Adds `v` to *p atomically: a fetch-add for integers, a compare-exchange loop on the bits
/// for floats (no other launch's add into the element is lost).
template <class S, class Bits>
void atomic_add_to(S* p, S v) {
  if constexpr (std::is_integral_v<S>) {
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  } else {
    Bits* bits = reinterpret_cast<Bits*>(p);
    Bits old = __atomic_load_n(bits, __ATOMIC_RELAXED), next;
    do {
      S sum;
      std::memcpy(&sum, &old, sizeof sum);
      sum += v;
      std::memcpy(&next, &sum, sizeof next);
    } while (!__atomic_compare_exchange_n(bits, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  }
}

struct MergeJob {
  const kj::array_t<void>* array;  ///< the launch's array
  int64_t element_bytes;
  int components;
  MergeKind kind;
  std::vector<char*> copies;  ///< each participating thread's copy (dense)
  bool dense;                 ///< the array is dense row-major: element e at e * element_bytes
};

/// The address of element `e` (flat row-major index) of a strided array.
char* strided_element(const kj::array_t<void>& a, int64_t e) {
  int64_t offset = 0;
  for (int d = a.ndim - 1; d >= 0; --d) {
    offset += (e % a.shape[d]) * a.strides[d];
    e /= a.shape[d];
  }
  return static_cast<char*>(a.data) + offset;
}

/// Whether adding the sum `v` is needed: not for +0, which changes nothing (but a -0 to +0: an
/// element no thread added to keeps its bits, and a private copy cannot carry a -0 sum either).
template <class S>
inline bool adds_something(S v) {
  // The bits, not memcmp: GCC calls the library's memcmp for it, most of a merge's time.
  std::conditional_t<sizeof(S) == 8, uint64_t, uint32_t> bits;
  static_assert(sizeof bits == sizeof(S), "4- or 8-byte sums");
  std::memcpy(&bits, &v, sizeof bits);
  return bits != 0;
}

/// Adds `v` into *p atomically where adds_something(v).
template <class S, class Bits>
inline void add_nonzero(S* p, S v) {
  if (adds_something(v)) atomic_add_to<S, Bits>(p, v);
}

#if defined(__x86_64__)
/// Whether this cpu has a 16-byte compare-and-swap (cmpxchg16b: every x86-64-v2 cpu).
bool has_cas16() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B) != 0;
  }();
  return has;
}

/// Adds the 16 / sizeof(S) floating sums `v` into the 16-byte aligned `p` with one 16-byte
/// compare-and-swap, not one per scalar: the merge's atomics are most of its time. Each
/// element gets the same single addition as add_nonzero gives it (adds_something), so the
/// result is the same to the bit, and an add of another launch into any of the elements at
/// the same time is never lost.
template <class S>
void add_nonzero_16(S* p, const S* v) {
  constexpr int K = 16 / sizeof(S);
  bool any = false;
  bool add[K];
  for (int i = 0; i < K; ++i) {
    add[i] = adds_something(v[i]);
    any = any || add[i];
  }
  if (!any) return;
  auto* halves = reinterpret_cast<uint64_t*>(p);
  // Two relaxed 8-byte loads may see two moments: then the compare-and-swap fails and says
  // what the 16 bytes hold.
  uint64_t lo = __atomic_load_n(&halves[0], __ATOMIC_RELAXED), hi = __atomic_load_n(&halves[1], __ATOMIC_RELAXED);
  for (;;) {
    S lanes[K];
    uint64_t bits[2] = {lo, hi};
    std::memcpy(lanes, bits, 16);
    for (int i = 0; i < K; ++i)
      if (add[i]) lanes[i] += v[i];
    std::memcpy(bits, lanes, 16);
    bool swapped;
    asm volatile("lock cmpxchg16b %1"
                 : "=@ccz"(swapped), "+m"(*reinterpret_cast<volatile unsigned __int128*>(p)), "+a"(lo), "+d"(hi)
                 : "b"(bits[0]), "c"(bits[1])
                 : "memory");
    if (swapped) return;
  }
}
#endif

/// Adds the `n` sums into the dense `out`: 16 bytes at a time where that is one atomic.
template <class S, class Bits>
void add_sums_dense(S* out, const S* sum, int64_t n) {
  int64_t j = 0;
#if defined(__x86_64__)
  if constexpr (std::is_floating_point_v<S>) {
    if (has_cas16()) {
      constexpr int64_t K = 16 / sizeof(S);
      for (; j < n && reinterpret_cast<uintptr_t>(out + j) % 16 != 0; ++j) add_nonzero<S, Bits>(out + j, sum[j]);
      for (; j + K <= n; j += K) add_nonzero_16(out + j, sum + j);
    }
  }
#endif
  for (; j < n; ++j) add_nonzero<S, Bits>(out + j, sum[j]);
}

/// Sums the copies over elements [begin, end), zeroes them, and adds each sum into the array.
template <class S, class Bits>
void merge_range(const MergeJob& job, int64_t begin, int64_t end) {
  constexpr int64_t kBlock = 256;  // scalars summed per pass over the copies
  S sum[kBlock];
  const int C = job.components;
  const int64_t block_elements = std::max<int64_t>(1, kBlock / C);
  for (int64_t e0 = begin; e0 < end; e0 += block_elements) {
    const int64_t e1 = std::min(end, e0 + block_elements);
    const int64_t n = (e1 - e0) * C;
    std::fill(sum, sum + n, S(0));
    for (char* copy : job.copies) {
      S* c = reinterpret_cast<S*>(copy) + e0 * C;
      for (int64_t j = 0; j < n; ++j) {
        sum[j] += c[j];
        c[j] = S(0);
      }
    }
    if (job.dense) {  // the block's scalars are contiguous in the array too
      add_sums_dense<S, Bits>(reinterpret_cast<S*>(static_cast<char*>(job.array->data) + e0 * job.element_bytes), sum, n);
      continue;
    }
    for (int64_t e = e0; e < e1; ++e) {
      S* out = reinterpret_cast<S*>(strided_element(*job.array, e));
      for (int k = 0; k < C; ++k) add_nonzero<S, Bits>(out + k, sum[(e - e0) * C + k]);
    }
  }
}

void merge_chunk(void* context, int64_t begin, int64_t end) {
  const MergeJob& job = *static_cast<const MergeJob*>(context);
  switch (job.kind) {
    case MergeKind::F32: return merge_range<float, uint32_t>(job, begin, end);
    case MergeKind::F64: return merge_range<double, uint64_t>(job, begin, end);
    case MergeKind::U32: return merge_range<uint32_t, uint32_t>(job, begin, end);
    case MergeKind::U64: return merge_range<uint64_t, uint64_t>(job, begin, end);
  }
}

/// Merges of fewer scalars (over all copies) than this run on the calling thread.
constexpr int64_t kPooledMergeMin = int64_t(1) << 17;

bool is_dense(const kj::array_t<void>& a, int64_t element_bytes) {
  kj::array_t<void> dense = a;
  set_row_major_strides(dense, element_bytes);
  return std::equal(a.strides, a.strides + a.ndim, dense.strides);
}

}  // namespace

void PrivateLaunch::merge() {
  ThreadPool& pool = ThreadPool::global();
  for (size_t i = 0; i < chosen_.size(); ++i) {
    const Chosen& c = chosen_[i];
    MergeJob job{&c.array, c.element_bytes, c.target.components, c.target.kind, {}, is_dense(c.array, c.element_bytes)};
    for (auto& s : slots_)
      if (s && s->used) job.copies.push_back(static_cast<char*>(s->buffers[i].data));
    if (job.copies.empty()) continue;
    const int64_t scalars = c.elements * c.target.components * int64_t(job.copies.size());
    if (scalars >= kPooledMergeMin && pool.size() > 1) {
      // Chunks of ~16K scalars per pass: each element is merged by one thread.
      const int64_t grain = std::max<int64_t>(64, (int64_t(1) << 14) / (c.target.components * int64_t(job.copies.size())));
      pool.parallel_for(c.elements, grain, &merge_chunk, &job);
    } else {
      merge_chunk(&job, 0, c.elements);
    }
  }
  for (auto& s : slots_) {
    if (!s) continue;
    for (Buffer& b : s->buffers) cache().release(b);
    s->buffers.clear();
  }
}

}  // namespace kjit::detail
