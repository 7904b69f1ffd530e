// C++ callables as XLA FFI targets (Warp's jax_callable): registry, call decoding into a
// CallContext, and dispatch to the graph modes (callable_graphs.cpp).
#include "callables.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include <nlohmann/json.hpp>

#include "callable_graphs.hpp"
#include "kernel_info.hpp"
#include "launch_plan.hpp"
#include "slots.hpp"

namespace kjit::ffi {

using detail::CallableAccess;

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
    case GraphMode::KjitStagedEx: return "kjit_staged_ex";
    case GraphMode::KjitStaged: return "kjit_staged";
  }
  return "?";
}

namespace detail {

namespace {

struct CallableDef {
  std::string name;
  std::vector<ParamInfo> params;
  std::vector<int> arrays;
  CallableOptions options;
  GraphCallable graph;  ///< the function, and what the graph modes need
};

/// A callable name's state; never freed once created (trampoline slots point at it).
struct CallableEntry {
  explicit CallableEntry(int max) : graphs(max) {}
  std::string name;
  mutable std::shared_mutex mutex;
  std::shared_ptr<const CallableDef> def;  // null once unregistered
  CallableGraphs graphs;                   // the Kjit* modes' graphs, per CUDA device
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

template <class T>
void append_bytes(std::string& s, const T& v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

/// Decodes a callable's frame into `ctx`, and what the graph modes need of it into `call`.
void decode(const xla::CallFrame* f, const CallableDef& def, Platform platform, CallContext& ctx, CallShape& call) {
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
  call.clear();
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
      call.statics.append(reinterpret_cast<const char*>(bytes), size_t(p.element_bytes));
      args.push_back(scalar_arg(p, bytes));
      continue;
    }
    const xla::Buffer* b;
    const char* role = "array argument";
    ArrayRole r = ArrayRole::Input;
    if (in_i < nin) {
      if (is_io[pi]) {  // write through the result XLA aliased to the input
        check_array(pre, p, arg_buffer(f, in_i), role);
        b = &ret_buffer(f, io_i++);
        r = ArrayRole::InOut;
      } else {
        b = &arg_buffer(f, in_i);
      }
      ++in_i;
    } else {
      b = &ret_buffer(f, n_io + out_i++);
      role = "output";
      r = ArrayRole::Output;
    }
    int br = check_array(pre, p, *b, role);
    Shape shape;
    for (int d = 0; d < br + p.ndim; ++d) shape.push_back(b->dims[d]);
    NdArray view = NdArray::view(b->data, p.type.element(), shape, device);
    call.arrays.push_back({int(pi), r, size_t(view.size()) * view.element_bytes()});
    call.shapes.push_back(char(r));
    append_bytes(call.shapes, int32_t(shape.size()));
    for (int64_t d : shape) append_bytes(call.shapes, d);
    args.push_back(LaunchArg(view));
  }
  if (io_i != n_io) invalid(pre + "the in/out parameters must be input arrays");
  LaunchOptions& o = CallableAccess::options(ctx);
  o.device = device;
  o.stream = stream;
  CallableAccess::platform(ctx) = platform;
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
    thread_local CallShape call;
    decode(frame, *def, platform, ctx, call);
    // The cpu has no graphs: every mode runs the function, as None does.
    if (platform == Platform::Cpu || mode_ == GraphMode::None || mode_ == GraphMode::Xla) {
      def->graph.fn(ctx);
      return;
    }
    // Errors name the callable and the mode (a capture that failed was aborted first).
    auto where = [&] { return "kjit callable '" + def->name + "' (graph mode '" + to_string(mode_) + "'): "; };
    try {
      entry_->graphs.run(mode_, def->graph, ctx, call);
    } catch (const Error& e) {
      fail(code_for(e.kind()), where() + e.what());
    } catch (const HandlerError& e) {
      fail(e.code, where() + e.message);
    }
  }

 private:
  CallableEntry* entry_;
  GraphMode mode_;
};

}  // namespace

GraphMode parse_graph_mode(const std::string& s) {
  for (GraphMode m : {GraphMode::None, GraphMode::Xla, GraphMode::Kjit, GraphMode::KjitStagedEx, GraphMode::KjitStaged})
    if (s == to_string(m)) return m;
  throw Error(ErrorKind::User, "unknown graph mode '" + s + "' (none, xla, kjit, kjit_staged_ex, kjit_staged)");
}

std::string callable_signature(const std::string& name) {
  CallableEntry* e = find_entry(name);
  std::shared_ptr<const CallableDef> def = e ? current(*e) : nullptr;
  if (!def) throw Error(ErrorKind::User, "no C++ callable named '" + name + "' is registered (kjit::ffi::register_callable)");
  nlohmann::json j;
  j["name"] = def->name;
  j["graph_mode"] = to_string(def->options.graph_mode);
  j["graph_cache_max"] = e->graphs.max();  // the bound now: set_graph_cache_max changes it
  // jax_callable preloads these when JAX traces a call, in every graph mode: XLA may capture an
  // XLA-mode call into a command buffer, and no module loads during a capture.
  j["preload_kernels"] = def->options.preload_kernels;
  j["launch_ndim"] = 0;
  j["has_adjoint"] = false;
  nlohmann::json params = nlohmann::json::array();
  for (const ParamInfo& p : def->params) {
    nlohmann::json q = param_json(p);
    if (p.is_struct()) q["struct"] = {{"name", p.element_str()}};  // no layout: callables take no structs
    q["supported"] = !p.is_struct() && (p.is_array || p.lanes == 1);
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

namespace {
/// The names in `list` (unset: every array parameter) as one flag per parameter; a User error
/// for a name that is not an array parameter.
std::vector<bool> stage_flags(const CallableDef& def, const std::optional<std::vector<std::string>>& list,
                              const char* option) {
  std::vector<bool> flags(def.params.size(), false);
  for (size_t i = 0; i < def.params.size(); ++i) flags[i] = !list && def.params[i].is_array;
  if (!list) return flags;
  for (const std::string& n : *list) {
    size_t i = 0;
    while (i < def.params.size() && def.params[i].name != n) ++i;
    if (i == def.params.size() || !def.params[i].is_array)
      throw Error(ErrorKind::User, "register_callable('" + def.name + "'): CallableOptions::" + option +
                                       " names '" + n + "', which is not an array parameter of the callable");
    flags[i] = true;
  }
  return flags;
}
}  // namespace

void register_callable(const std::string& name, std::vector<KernelParam> params, CallableFn fn,
                       const CallableOptions& options) {
  if (!fn) throw Error(ErrorKind::User, "register_callable('" + name + "'): no function");
  if (options.graph_cache_max < 0)
    throw Error(ErrorKind::User, "register_callable('" + name + "'): graph_cache_max must be >= 0 (0 = unbounded)");
  auto def = std::make_shared<CallableDef>();
  def->name = name;
  for (const KernelParam& kp : params) {
    def->params.push_back(param_info(kp));
    if (kp.type.is_array()) def->arrays.push_back(int(def->params.size() - 1));
  }
  if (def->params.size() > size_t(kMaxParams))
    throw Error(ErrorKind::User, "register_callable('" + name + "'): at most " + std::to_string(kMaxParams) + " parameters");
  def->options = options;
  def->graph.name = name;
  def->graph.fn = std::move(fn);
  def->graph.preload_kernels = options.preload_kernels;
  def->graph.stage_in = stage_flags(*def, options.stage_in, "stage_in");
  def->graph.stage_out = stage_flags(*def, options.stage_out, "stage_out");
  // Graphs of an earlier registration must never be replayed for this one, not even those a
  // call still running captures after the caches below are cleared: the generation keys them.
  static std::atomic<uint64_t> generations{0};
  def->graph.generation = ++generations;
  Table& t = table();
  CallableEntry* e;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto& p = t.entries[name];
    if (!p) {
      p = std::make_unique<CallableEntry>(options.graph_cache_max);
      p->name = name;
    }
    e = p.get();
  }
  std::unique_lock<std::shared_mutex> lock(e->mutex);
  e->def = std::move(def);
  e->graphs.clear();  // graphs captured from the old function are stale
  e->graphs.set_max(options.graph_cache_max);
}

bool unregister_callable(const std::string& name) {
  CallableEntry* e = find_entry(name);
  if (!e) return false;
  std::unique_lock<std::shared_mutex> lock(e->mutex);
  bool had = e->def != nullptr;
  e->def.reset();
  e->graphs.clear();
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
    if (name.empty() || n == name) f(*e);
}
}  // namespace

size_t graph_cache_size(const std::string& callable) {
  size_t n = 0;
  for_entries(callable, [&](CallableEntry& e) { n += e.graphs.size(); });
  return n;
}

void clear_graph_cache(const std::string& callable) {
  for_entries(callable, [](CallableEntry& e) { e.graphs.clear(); });
}

void set_graph_cache_max(const std::string& callable, int max) {
  if (max < 0) throw Error(ErrorKind::User, "graph_cache_max must be >= 0 (0 = unbounded), got " + std::to_string(max));
  for_entries(callable, [&](CallableEntry& e) { e.graphs.set_max(max); });
}

xla::Handler* callable_handler(const std::string& name, GraphMode mode, Platform platform) {
  CallableEntry* e = find_entry(name);
  if (!e || !current(*e)) return nullptr;
  return slot_handler(std::string("callable\n") + name + "\n" + to_string(mode), platform,
                      [&] { return new CallableTarget(e, mode); });
}

}  // namespace kjit::ffi
