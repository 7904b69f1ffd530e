// C++ callables as XLA FFI targets (Warp's jax_callable): registry, call decoding into a
// CallContext, and the graph modes.
#include "callables.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include <nlohmann/json.hpp>

#include "graph_cache.hpp"
#include "kernel_info.hpp"
#include "launch_plan.hpp"
#include "slots.hpp"

namespace kjit::ffi {

/// Fills a CallContext's private parts (friend of CallContext).
struct CallableAccess {
  static std::vector<std::string>& names(CallContext& c) { return c.names_; }
  static std::vector<LaunchArg>& args(CallContext& c) { return c.args_; }
  static LaunchOptions& options(CallContext& c) { return c.options_; }
  static Platform& platform(CallContext& c) { return c.platform_; }
};

const LaunchArg& CallContext::arg(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return args_[i];
  throw Error(ErrorKind::User, "callable has no argument named '" + std::string(name) + "'");
}

const NdArray& CallContext::array(std::string_view name) const {
  const LaunchArg& a = arg(name);
  if (!a.is_array()) throw Error(ErrorKind::User, "callable argument '" + std::string(name) + "' is not an array");
  return a.array();
}

const char* to_string(GraphMode mode) {
  switch (mode) {
    case GraphMode::None: return "none";
    case GraphMode::Xla: return "xla";
    case GraphMode::Kjit: return "kjit";
    case GraphMode::KjitStaged: return "kjit_staged";
    case GraphMode::KjitStagedEx: return "kjit_staged_ex";
  }
  return "?";
}

namespace detail {

namespace {

struct CallableDef {
  std::string name;
  std::vector<ParamInfo> params;
  std::vector<int> arrays;
  CallableFn fn;
  CallableOptions options;
};

/// A callable name's state; never freed once created (trampoline slots point at it).
struct CallableEntry {
  std::string name;
  mutable std::shared_mutex mutex;
  std::shared_ptr<const CallableDef> def;  // null once unregistered
  std::mutex graphs_mutex;
  std::map<int, std::unique_ptr<GraphCache>> graphs;  // per CUDA ordinal
  int graph_cache_max = 32;
};

struct Table {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<CallableEntry>> entries;
};

Table& table() {
  static Table* t = new Table;
  return *t;
}

CallableEntry* find_entry(const std::string& name) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(name);
  return it == t.entries.end() ? nullptr : it->second.get();
}

std::shared_ptr<const CallableDef> current(const CallableEntry& e) {
  std::shared_lock<std::shared_mutex> lock(e.mutex);
  return e.def;
}

/// A static scalar as a LaunchArg of its own type.
LaunchArg scalar_arg(const ParamInfo& p, const unsigned char* b) {
  auto get = [&](auto v) { std::memcpy(&v, b, sizeof v); return LaunchArg(v); };
  switch (p.scalar) {
    case ir::Scalar::Bool: return get(bool{});
    case ir::Scalar::I8: return get(int8_t{});
    case ir::Scalar::U8: return get(uint8_t{});
    case ir::Scalar::I16: return get(int16_t{});
    case ir::Scalar::U16: return get(uint16_t{});
    case ir::Scalar::I32: return get(int32_t{});
    case ir::Scalar::U32: return get(uint32_t{});
    case ir::Scalar::I64: return get(int64_t{});
    case ir::Scalar::U64: return get(uint64_t{});
    case ir::Scalar::F16: return get(half{});
    case ir::Scalar::BF16: return get(bfloat16{});
    case ir::Scalar::F32: return get(float{});
    case ir::Scalar::F64: return get(double{});
  }
  return LaunchArg();
}

/// Decodes a callable's frame into `ctx`; returns the graph key (addresses, static bytes).
GraphKey decode(const xla::CallFrame* f, const CallableDef& def, Platform platform, CallContext& ctx) {
  const Where pre{"kjit callable '", &def.name};
  int64_t io[kMaxParams];
  int n_io = 0;
  bool is_io[kMaxParams] = {};
  if (AttrRef a = find_attr(f->attrs, kAttrInOut)) {
    n_io = attr_int_array(a, kAttrInOut, io, kMaxParams);
    for (int i = 0; i < n_io; ++i) {
      if (io[i] < 0 || io[i] >= int64_t(def.params.size()) || !def.params[size_t(io[i])].is_array ||
          (i && io[i] <= io[i - 1]))
        invalid(pre + "attribute 'kjit_in_out' must list array parameters in increasing order");
      is_io[io[i]] = true;
    }
  }
  const int A = int(def.arrays.size());
  const int64_t nin = f->args.size, nrets = f->rets.size;
  const int64_t n_pure = nrets - n_io;
  if (nrets < 1 || n_pure < 0 || nin + n_pure != A)
    invalid(pre + "the callable has " + std::to_string(A) + " array parameters; the call passes " +
            std::to_string(nin) + " input buffers and " + std::to_string(nrets) + " results (" +
            std::to_string(n_io) + " in/out), which does not add up");

  Device device = Device::cpu();
  Stream stream;
  if (platform == Platform::Cuda) {
    int ordinal = device_ordinal_of(f);
    device = Device::cuda(ordinal < 0 ? 0 : ordinal);
    stream = Stream::wrap(device, stream_of(f));
  }
  GraphKey key;
  auto& names = CallableAccess::names(ctx);
  auto& args = CallableAccess::args(ctx);
  names.clear();
  args.clear();
  int in_i = 0, out_i = 0, io_i = 0;
  for (size_t pi = 0; pi < def.params.size(); ++pi) {
    const ParamInfo& p = def.params[pi];
    names.push_back(p.name);
    if (!p.is_array) {
      if (p.lanes != 1)
        invalid(pre + "static argument '" + p.name + "' is a " + p.type.str() + "; callables take scalar static values");
      alignas(16) unsigned char bytes[16] = {};
      read_static(pre, f->attrs, p, bytes);
      uint64_t bits = 0;
      std::memcpy(&bits, bytes, size_t(p.element_bytes));
      key.push_back(bits);
      args.push_back(scalar_arg(p, bytes));
      continue;
    }
    const xla::Buffer* b;
    const char* role = "array argument";
    if (in_i < nin) {
      if (is_io[pi]) {  // write through the result XLA aliased to the input
        check_array(pre, p, arg_buffer(f, in_i), role);
        b = &ret_buffer(f, io_i++);
      } else {
        b = &arg_buffer(f, in_i);
      }
      ++in_i;
    } else {
      b = &ret_buffer(f, n_io + out_i++);
      role = "output";
    }
    int br = check_array(pre, p, *b, role);
    Shape shape;
    for (int d = 0; d < br + p.ndim; ++d) shape.push_back(b->dims[d]);
    key.push_back(reinterpret_cast<uint64_t>(b->data));
    for (int64_t d : shape) key.push_back(uint64_t(d));
    args.push_back(LaunchArg(NdArray::view(b->data, p.type.element(), shape, device)));
  }
  if (io_i != n_io) invalid(pre + "the in/out parameters must be input arrays");
  LaunchOptions& o = CallableAccess::options(ctx);
  o.device = device;
  o.stream = stream;
  CallableAccess::platform(ctx) = platform;
  return key;
}

class CallableTarget final : public SlotTarget {
 public:
  CallableTarget(CallableEntry* entry, GraphMode mode) : entry_(entry), mode_(mode) {}
  uint32_t traits(Platform platform) const override {
    return platform == Platform::Cuda && mode_ == GraphMode::Xla ? uint32_t(xla::kCommandBufferCompatible) : 0u;
  }
  std::string what() const override { return "callable '" + entry_->name + "'"; }
  void execute(xla::CallFrame* frame, Platform platform) override {
    std::shared_ptr<const CallableDef> def = current(*entry_);
    if (!def) fail(xla::kNotFound, "kjit: callable '" + entry_->name + "' is no longer registered");
    thread_local CallContext ctx;
    decode(frame, *def, platform, ctx);
    if (platform == Platform::Cpu || mode_ == GraphMode::None || mode_ == GraphMode::Xla) {
      def->fn(ctx);
      return;
    }
    // kjit's own CUDA graphs need the runtime's capture API (kjit/runtime/graph.hpp).
    fail(xla::kUnimplemented, "kjit callable '" + entry_->name + "': graph mode '" + to_string(mode_) +
                                  "' needs kjit's CUDA graph runtime, which this build does not have yet; "
                                  "use graph mode 'xla' or 'none'");
  }

 private:
  CallableEntry* entry_;
  GraphMode mode_;
};

}  // namespace

GraphMode parse_graph_mode(const std::string& s) {
  for (GraphMode m : {GraphMode::None, GraphMode::Xla, GraphMode::Kjit, GraphMode::KjitStaged, GraphMode::KjitStagedEx})
    if (s == to_string(m)) return m;
  throw Error(ErrorKind::User, "unknown graph mode '" + s + "' (none, xla, kjit, kjit_staged, kjit_staged_ex)");
}

std::string callable_signature(const std::string& name) {
  CallableEntry* e = find_entry(name);
  std::shared_ptr<const CallableDef> def = e ? current(*e) : nullptr;
  if (!def) throw Error(ErrorKind::User, "no C++ callable named '" + name + "' is registered (kjit::ffi::register_callable)");
  nlohmann::json j;
  j["name"] = def->name;
  j["graph_mode"] = to_string(def->options.graph_mode);
  j["graph_cache_max"] = def->options.graph_cache_max;
  j["launch_ndim"] = 0;
  j["has_adjoint"] = false;
  nlohmann::json params = nlohmann::json::array();
  for (const ParamInfo& p : def->params) {
    nlohmann::json q;
    q["name"] = p.name;
    q["kind"] = p.is_array ? "array" : "value";
    q["type"] = p.type.str();
    q["ndim"] = p.ndim;
    q["dtype"] = dtype_name(p.dtype);
    q["inner"] = nlohmann::json::array();
    for (int i = 0; i < p.inner_rank; ++i) q["inner"].push_back(p.inner[i]);
    q["differentiable"] = p.differentiable;
    q["supported"] = p.type.element().shape != ir::Shape::Struct && (p.is_array || p.lanes == 1);
    params.push_back(q);
  }
  j["params"] = params;
  return j.dump();
}

std::vector<std::string> callable_names() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::vector<std::string> out;
  for (auto& [name, e] : t.entries)
    if (current(*e)) out.push_back(name);
  return out;
}

}  // namespace detail

using namespace detail;

void register_callable(const std::string& name, std::vector<KernelParam> params, CallableFn fn,
                       const CallableOptions& options) {
  if (!fn) throw Error(ErrorKind::User, "register_callable('" + name + "'): no function");
  auto def = std::make_shared<CallableDef>();
  def->name = name;
  for (const KernelParam& kp : params) {
    def->params.push_back(param_info(kp));
    if (kp.type.is_array()) def->arrays.push_back(int(def->params.size() - 1));
  }
  if (def->params.size() > size_t(kMaxParams))
    throw Error(ErrorKind::User, "register_callable('" + name + "'): at most " + std::to_string(kMaxParams) + " parameters");
  def->fn = std::move(fn);
  def->options = options;
  Table& t = table();
  CallableEntry* e;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto& p = t.entries[name];
    if (!p) {
      p = std::make_unique<CallableEntry>();
      p->name = name;
    }
    e = p.get();
  }
  std::unique_lock<std::shared_mutex> lock(e->mutex);
  e->def = std::move(def);
  std::lock_guard<std::mutex> g(e->graphs_mutex);
  e->graph_cache_max = options.graph_cache_max;
  for (auto& [ordinal, cache] : e->graphs) {
    cache->clear();  // graphs captured from the old function are stale
    cache->set_max(options.graph_cache_max);
  }
}

bool unregister_callable(const std::string& name) {
  CallableEntry* e = find_entry(name);
  if (!e) return false;
  std::unique_lock<std::shared_mutex> lock(e->mutex);
  bool had = e->def != nullptr;
  e->def.reset();
  std::lock_guard<std::mutex> g(e->graphs_mutex);
  for (auto& [ordinal, cache] : e->graphs) cache->clear();
  return had;
}

namespace {
template <class F>
void for_entries(const std::string& name, F&& f) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (!name.empty() && !t.entries.count(name))
    throw Error(ErrorKind::User, "no C++ callable named '" + name + "' is registered");
  for (auto& [n, e] : t.entries)
    if (name.empty() || n == name) {
      std::lock_guard<std::mutex> g(e->graphs_mutex);
      f(*e);
    }
}
}  // namespace

size_t graph_cache_size(const std::string& callable) {
  size_t n = 0;
  for_entries(callable, [&](CallableEntry& e) {
    for (auto& [o, c] : e.graphs) n += c->size();
  });
  return n;
}

void clear_graph_cache(const std::string& callable) {
  for_entries(callable, [](CallableEntry& e) {
    for (auto& [o, c] : e.graphs) c->clear();
  });
}

void set_graph_cache_max(const std::string& callable, int max) {
  if (max < 0) throw Error(ErrorKind::User, "graph_cache_max must be >= 0 (0 = unbounded), got " + std::to_string(max));
  for_entries(callable, [&](CallableEntry& e) {
    e.graph_cache_max = max;
    for (auto& [o, c] : e.graphs) c->set_max(max);
  });
}

xla::Handler* callable_handler(const std::string& name, GraphMode mode, Platform platform) {
  CallableEntry* e = find_entry(name);
  if (!e || !current(*e)) return nullptr;
  return slot_handler(std::string("callable\n") + name + "\n" + to_string(mode), platform,
                      [&] { return new CallableTarget(e, mode); });
}

}  // namespace kjit::ffi
