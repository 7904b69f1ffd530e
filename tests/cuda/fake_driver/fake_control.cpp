// The fake CUDA driver's state, configuration (from the environment) and the control API that
// tests use to read what kjit did.
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "fake_state.hpp"

namespace kjit::fake_cuda {

namespace {

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void configure(State& s) {
  s.devices.clear();
  std::stringstream list(env("KJIT_FAKE_CUDA_DEVICES", "8.0,9.0"));
  std::string cc;
  while (std::getline(list, cc, ',')) {
    if (cc.empty()) continue;
    FakeDevice d;
    d.major = std::atoi(cc.c_str());
    auto dot = cc.find('.');
    d.minor = dot == std::string::npos ? 0 : std::atoi(cc.c_str() + dot + 1);
    d.name = "Fake CUDA Device " + std::to_string(s.devices.size()) + " (sm_" +
             std::to_string(d.major * 10 + d.minor) + ")";
    s.devices.push_back(d);
  }
  s.driver_version = std::atoi(env("KJIT_FAKE_CUDA_DRIVER_VERSION", "13000").c_str());
  s.init_result = CUresult(std::atoi(env("KJIT_FAKE_CUDA_INIT_RESULT", "0").c_str()));
  s.no_proc_address = env("KJIT_FAKE_CUDA_NO_PROC_ADDRESS", "0") == "1";
  s.contexts.clear();
  for (size_t i = 0; i < s.devices.size(); ++i)
    s.contexts.push_back(std::make_unique<Context>(Context{int(i), 0}));
}

}  // namespace

State& state() {
  static State* s = [] {
    auto* st = new State();  // never destroyed: kjit's static destructors may still call in
    configure(*st);
    return st;
  }();
  return *s;
}

const char* exported_name(const char* function) {
  struct Row { const char* function; const char* exported; };
  static const Row kRows[] = {
#define KJIT_CUDA_SYMBOL(name, version, exported, parameters) {#name, #exported},
#include "cuda/driver_symbols.def"
#undef KJIT_CUDA_SYMBOL
      {"cuGetProcAddress", "cuGetProcAddress_v2"},
  };
  for (const Row& r : kRows)
    if (std::strcmp(r.function, function) == 0) return r.exported;
  return function;
}

State& enter(std::unique_lock<std::recursive_mutex>& lock, const char* function) {
  State& s = state();
  lock = std::unique_lock<std::recursive_mutex>(s.mutex);
  Context* c = current_context();
  s.calls.push_back({exported_name(function), c ? c->device : -1});
  return s;
}

CUresult take_injected_failure(State& s, const char* name) {
  if (s.injected.empty()) return CUDA_SUCCESS;
  auto it = s.injected.find(name);
  if (it == s.injected.end()) return CUDA_SUCCESS;
  CUresult r = it->second;
  s.injected.erase(it);
  return r;
}

bool this_thread_captures(State& s) {
  for (Stream* st : s.streams)
    if (st->capturing && st->capture_thread == std::this_thread::get_id()) return true;
  return false;
}

Stream* stream_of(State& s, CUstream handle, bool* valid) {
  uintptr_t h = reinterpret_cast<uintptr_t>(handle);
  // 0: legacy default stream, 1: CU_STREAM_LEGACY, 2: CU_STREAM_PER_THREAD.
  if (h <= 2) {
    *valid = true;
    return nullptr;
  }
  auto* st = reinterpret_cast<Stream*>(handle);
  *valid = s.streams.count(st) > 0;
  return *valid ? st : nullptr;
}

bool is_device_range(State& s, uintptr_t ptr, size_t bytes) {
  auto it = s.allocations.upper_bound(ptr);
  if (it != s.allocations.begin()) {
    --it;
    if (ptr >= it->first && ptr + bytes <= it->first + it->second.second) return true;
  }
  for (auto& m : s.modules)
    for (auto& [name, storage] : m->globals) {
      auto base = reinterpret_cast<uintptr_t>(storage.data());
      if (ptr >= base && ptr + bytes <= base + storage.size()) return true;
    }
  return false;
}

void add_node(Stream* st, GraphNode node) { st->graph->nodes.push_back(std::move(node)); }

void record_copy(State& s, const GraphNode& node, int device, uintptr_t stream, LaunchOrigin origin) {
  CopyRecord r;
  r.device = device;
  r.dst = node.dst;
  r.src = node.memset_value >= 0 ? 0 : node.src;
  r.bytes = node.bytes;
  r.memset = node.memset_value >= 0;
  r.stream = stream;
  r.origin = origin;
  s.copies.push_back(r);
}

// --- control API -----------------------------------------------------------------------------

void reset() {
  State& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  configure(s);
  s.initialised = false;
  s.allocations.clear();  // leaked on purpose: stale pointers stay readable
  s.streams.clear();
  s.events.clear();
  s.modules.clear();
  s.graphs.clear();
  s.graph_execs.clear();
  s.max_threads.clear();
  s.launch_hook = nullptr;
  clear_records();
}

void clear_records() {
  State& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  s.calls.clear();
  s.launches.clear();
  s.copies.clear();
  s.module_loads.clear();
  s.proc_requests.clear();
  s.destroyed_execs.clear();
  s.injected.clear();
}

void fail_next_call(const std::string& name, int result) {
  State& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  s.injected[name] = CUresult(result);
}

void set_launch_hook(std::function<void(const LaunchRecord&)> hook) {
  State& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  s.launch_hook = std::move(hook);
}

void limit_max_threads(const std::string& name, int threads) {
  State& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  s.max_threads[name] = threads;
  for (auto& m : s.modules)
    if (auto it = m->functions.find(name); it != m->functions.end() && it->second)
      it->second->info.max_threads = threads;
}

#define FAKE_READ(expr)                                   \
  State& s = state();                                    \
  std::lock_guard<std::recursive_mutex> lock(s.mutex);   \
  return expr

std::vector<CallRecord> calls() { FAKE_READ(s.calls); }
std::vector<LaunchRecord> launches() { FAKE_READ(s.launches); }
std::vector<CopyRecord> copies() { FAKE_READ(s.copies); }
std::vector<ModuleRecord> module_loads() { FAKE_READ(s.module_loads); }
std::vector<ProcRequest> proc_requests() { FAKE_READ(s.proc_requests); }
std::vector<uintptr_t> destroyed_graph_execs() { FAKE_READ(s.destroyed_execs); }
int live_graph_execs() { FAKE_READ(int(s.graph_execs.size())); }

int context_refcount(int device) {
  FAKE_READ(device >= 0 && device < int(s.contexts.size()) ? s.contexts[size_t(device)]->refcount
                                                           : 0);
}

size_t allocated_bytes(int device) {
  State& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  size_t total = 0;
  for (auto& [ptr, a] : s.allocations)
    if (a.first == device) total += a.second;
  return total;
}

namespace {
std::vector<unsigned char>* find_global(State& s, int device, const std::string& name) {
  for (auto it = s.modules.rbegin(); it != s.modules.rend(); ++it)
    if ((*it)->device == device && (*it)->globals.count(name)) return &(*it)->globals[name];
  return nullptr;
}
}  // namespace

bool read_global(int device, const std::string& name, void* out, size_t bytes) {
  State& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  auto* g = find_global(s, device, name);
  if (!g || g->size() < bytes) return false;
  std::memcpy(out, g->data(), bytes);
  return true;
}

bool write_global(int device, const std::string& name, const void* in, size_t bytes) {
  State& s = state();
  std::lock_guard<std::recursive_mutex> lock(s.mutex);
  auto* g = find_global(s, device, name);
  if (!g || g->size() < bytes) return false;
  std::memcpy(g->data(), in, bytes);
  return true;
}

}  // namespace kjit::fake_cuda
