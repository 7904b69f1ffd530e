// Kernel definitions, the module registry, and the parsing of names out of KJIT_KERNEL.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "kjit/dsl/tracer.hpp"
#include "kjit/ir/dead_code.hpp"
#include "kjit/ir/verifier.hpp"
#include "kjit/kernel.hpp"

namespace kjit {

bool ModuleOptions::operator==(const ModuleOptions& o) const {
  return enable_adjoint == o.enable_adjoint && tangent_adjoint == o.tangent_adjoint && fast_math == o.fast_math &&
         line_info == o.line_info && debug == o.debug && max_registers == o.max_registers &&
         opt_level == o.opt_level && fast_compile == o.fast_compile && cxx_standard == o.cxx_standard &&
         block_dim == o.block_dim && loop_checkpoints == o.loop_checkpoints && bounds_check == o.bounds_check &&
         adjoint_span == o.adjoint_span && cpu_lanes == o.cpu_lanes;
}

// ---------------------------------------------------------------------------------------------
struct KernelDef::Trace {
  detail::KernelBody body;
  std::once_flag once;
  std::unique_ptr<ir::Function> fn;
  ~Trace() {
    if (body.destroy) body.destroy(body.body);
  }
};

KernelDef::KernelDef(std::string name, std::string module, std::vector<KernelParam> params,
                     ir::SourceLoc loc, detail::KernelBody body)
    : name_(std::move(name)), module_(std::move(module)), params_(std::move(params)), loc_(loc),
      trace_(new Trace{body, {}, nullptr}) {
  Registry::get().add(this);
}

namespace {
std::vector<KernelParam> params_of(const ir::Function& fn) {
  std::vector<KernelParam> out;
  for (const ir::Param& p : fn.params) out.push_back(KernelParam{p.name, p.type});
  return out;
}
}  // namespace

KernelDef::KernelDef(std::unique_ptr<ir::Function> fn, std::string module)
    : name_(fn->name), module_(std::move(module)), params_(params_of(*fn)), loc_(fn->loc),
      trace_(new Trace{detail::KernelBody{nullptr, nullptr, nullptr}, {}, std::move(fn)}) {
  Registry::get().add(this);
}

KernelDef::~KernelDef() {
  Registry::get().remove(this);
  if (void* state = runtime_state.load(std::memory_order_acquire))
    if (auto free_state = runtime_state_deleter.load(std::memory_order_acquire)) free_state(state);
  delete trace_;
}

void KernelDef::set_block_dim(int threads) const {
  if (threads < 0 || threads > 1024)
    throw Error(ErrorKind::User, "kernel '" + name_ + "': block_dim " + std::to_string(threads) +
                                     " is not a CUDA block size: use 1 to 1024 threads (a multiple "
                                     "of 32 runs best), or 0 for the module's block_dim");
  block_dim_.store(threads, std::memory_order_relaxed);
}

const ir::Function& KernelDef::ir() const {
  if (!trace_->body.trace) return *trace_->fn;  // given, not traced
  std::call_once(trace_->once, [this] {
    auto fn = std::make_unique<ir::Function>();
    fn->name = name_;
    fn->loc = loc_;
    for (const KernelParam& p : params_) fn->params.push_back(ir::Param{p.name, p.type});
    {
      dsl::detail::Tracer tracer(*fn, name_);
      // The parameters' values, then the body on handles to them.
      const dsl::Loc loc{fn->loc.file, fn->loc.line};
      std::vector<ir::ValueId> ids;
      for (size_t k = 0; k < fn->params.size(); ++k)
        ids.push_back(tracer.emit(ir::Op::Param, fn->params[k].type, {}, int64_t(k), loc));
      trace_->body.trace(trace_->body.body, ids.data());
    }
    ir::eliminate_dead_code(*fn);
    ir::verify(*fn);
    trace_->fn = std::move(fn);
  });
  return *trace_->fn;
}

// ---------------------------------------------------------------------------------------------
struct ModuleDef::State {
  mutable std::mutex mutex;
  std::vector<const KernelDef*> kernels;
  ModuleOptions options;
};

ModuleDef::ModuleDef(std::string name) : name_(std::move(name)), state_(new State) {}

ModuleDef::~ModuleDef() { delete state_; }

std::vector<const KernelDef*> ModuleDef::kernels() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->kernels;
}

ModuleOptions ModuleDef::options() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->options;
}

void ModuleDef::set_options(const ModuleOptions& options) {
  if (options.loop_checkpoints < 2 || options.loop_checkpoints % 2 != 0)
    throw Error(ErrorKind::User, "module '" + name_ + "': ModuleOptions::loop_checkpoints must be an even number "
                                 ">= 2 (the adjoint halves its checkpoints when they run out), got " +
                                     std::to_string(options.loop_checkpoints));
  if (options.adjoint_span < 0)
    throw Error(ErrorKind::User, "module '" + name_ + "': ModuleOptions::adjoint_span must be >= 0 (0: never "
                                 "split the adjoint's sweep), got " + std::to_string(options.adjoint_span));
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (options == state_->options) return;
  state_->options = options;
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

struct Registry::State {
  mutable std::mutex mutex;
  std::map<std::string, std::unique_ptr<ModuleDef>, std::less<>> modules;
  // Several definitions of one name arise when one header is compiled into two binaries of
  // the process; the first one registered serves, the others wait in line.
  std::unordered_map<std::string, std::vector<const KernelDef*>> kernels;
};

Registry& Registry::get() {
  static Registry* r = new Registry;  // never destroyed: libraries unregister at exit
  return *r;
}

Registry::State& Registry::state() const {
  static State* s = new State;
  return *s;
}

ModuleDef& Registry::module(const std::string& name) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto& slot = s.modules[name];
  if (!slot) slot = std::make_unique<ModuleDef>(name);
  return *slot;
}

const ModuleDef* Registry::find_module(std::string_view name) const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.modules.find(name);
  return it == s.modules.end() ? nullptr : it->second.get();
}

const KernelDef* Registry::find_kernel(std::string_view name) const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.kernels.find(std::string(name));
  return it == s.kernels.end() || it->second.empty() ? nullptr : it->second.front();
}

std::vector<const ModuleDef*> Registry::modules() const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<const ModuleDef*> out;
  for (auto& [name, m] : s.modules)
    if (!m->kernels().empty()) out.push_back(m.get());
  return out;
}

std::vector<const KernelDef*> Registry::kernels() const {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<const KernelDef*> out;
  for (auto& [name, defs] : s.kernels)
    if (!defs.empty()) out.push_back(defs.front());
  std::sort(out.begin(), out.end(),
            [](const KernelDef* a, const KernelDef* b) { return a->name() < b->name(); });
  return out;
}

void Registry::add(const KernelDef* k) {
  ModuleDef& m = module(k->module());
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto& defs = s.kernels[k->name()];
  defs.push_back(k);
  if (defs.size() > 1) return;  // an alias of a kernel already in its module
  std::lock_guard<std::mutex> mlock(m.state_->mutex);
  auto pos = std::lower_bound(
      m.state_->kernels.begin(), m.state_->kernels.end(), k,
      [](const KernelDef* a, const KernelDef* b) { return a->name() < b->name(); });
  m.state_->kernels.insert(pos, k);
  m.generation_.fetch_add(1, std::memory_order_acq_rel);
}

void Registry::remove(const KernelDef* k) {
  State& s = state();
  ModuleDef* m = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto mit = s.modules.find(k->module());
    if (mit != s.modules.end()) m = mit->second.get();
    auto it = s.kernels.find(k->name());
    if (it == s.kernels.end()) return;
    auto& defs = it->second;
    bool was_first = !defs.empty() && defs.front() == k;
    defs.erase(std::remove(defs.begin(), defs.end(), k), defs.end());
    if (!m) return;
    std::lock_guard<std::mutex> mlock(m->state_->mutex);
    auto& ks = m->state_->kernels;
    if (was_first) {
      std::replace(ks.begin(), ks.end(), k, defs.empty() ? nullptr : defs.front());
      ks.erase(std::remove(ks.begin(), ks.end(), nullptr), ks.end());
      m->generation_.fetch_add(1, std::memory_order_acq_rel);
    }
  }
}

// ---------------------------------------------------------------------------------------------
namespace detail {

std::string kernel_name_from_signature(const char* pretty) {
  std::string s(pretty);
  const std::string tag = "_kjit_tag::where";
  size_t end = s.find(tag);
  KJIT_CHECK(end != std::string::npos, "unexpected kernel tag signature: " + s);
  // The qualified name ends at the tag and starts after the return type, "const char* ".
  size_t start = s.rfind("char* ", end);
  start = start == std::string::npos ? 0 : start + 6;
  std::string name = s.substr(start, end - start);
  for (const char* anon : {"(anonymous namespace)", "{anonymous}"}) {
    size_t p;
    while ((p = name.find(anon)) != std::string::npos)
      name.replace(p, std::strlen(anon), "(anonymous)");
  }
  return name;
}

std::vector<std::string> parameter_names(const char* text, size_t expected) {
  std::string s(text);
  // Strip the outer parentheses of "(Array<Float> x, Float a)".
  size_t open = s.find('('), close = s.rfind(')');
  if (open != std::string::npos && close != std::string::npos && close > open)
    s = s.substr(open + 1, close - open - 1);
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (cur.find_first_not_of(" \t\n") != std::string::npos) parts.push_back(cur);
  std::vector<std::string> names;
  for (const std::string& p : parts) {
    size_t e = p.find_last_not_of(" \t\n");
    size_t b = e;
    while (b != std::string::npos && b > 0 && (std::isalnum((unsigned char)p[b - 1]) || p[b - 1] == '_'))
      --b;
    names.push_back(e == std::string::npos ? std::string() : p.substr(b, e - b + 1));
  }
  KJIT_CHECK(names.size() == expected,
             "could not read " + std::to_string(expected) + " parameter names from " + text);
  return names;
}

std::string default_module_name(const char* file) {
  std::string f(file ? file : "kernels");
  size_t slash = f.find_last_of("/\\");
  if (slash != std::string::npos) f = f.substr(slash + 1);
  size_t dot = f.find('.');
  if (dot != std::string::npos) f = f.substr(0, dot);
  return f.empty() ? "kernels" : f;
}

namespace {
std::vector<KernelParam> kernel_params(const std::vector<std::string>& names, const ir::Type* types) {
  std::vector<KernelParam> params;
  for (size_t k = 0; k < names.size(); ++k) params.push_back({names[k], types[k]});
  return params;
}
}  // namespace

const KernelDef* define_kernel(const char* pretty, const char* params_text, const char* module,
                               const char* file, int line, const ir::Type* types, size_t count,
                               KernelBody body) {
  struct Guard {  // frees the body when what follows throws
    KernelBody* body;
    ~Guard() {
      if (body) body->destroy(body->body);
    }
  } guard{&body};
  std::string name = kernel_name_from_signature(pretty);
  std::string mod = module ? module : default_module_name(file);
  std::vector<KernelParam> params = kernel_params(parameter_names(params_text, count), types);
  guard.body = nullptr;
  return new KernelDef(std::move(name), std::move(mod), std::move(params), ir::SourceLoc{file, line}, body);
}

const KernelDef* define_named_kernel(std::string name, std::string module, std::vector<std::string> names,
                                     const ir::Type* types, dsl::Loc loc, KernelBody body) {
  std::vector<KernelParam> params = kernel_params(names, types);
  return new KernelDef(std::move(name), std::move(module), std::move(params), ir::SourceLoc{loc.file, loc.line}, body);
}

void destroy_kernel(const KernelDef* def) { delete def; }

void set_kernel_block_dim(const KernelDef* def, int threads) { def->set_block_dim(threads); }

}  // namespace detail
}  // namespace kjit
