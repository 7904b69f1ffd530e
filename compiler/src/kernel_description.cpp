// Parsing and validating meta.json's kernel descriptions; comparing them with codegen's.
#include "kjit/compiler/kernel_description.hpp"

#include <cstdint>
#include <map>
#include <set>

namespace kjit::compiler {

namespace {

/// Reads the fields of one JSON object, recording the first problem; never throws.
class Fields {
 public:
  Fields(const nlohmann::json& j, std::string what, std::string* problem)
      : j_(j), what_(std::move(what)), problem_(problem) {}

  const nlohmann::json* get(const char* name) {
    auto it = j_.find(name);
    if (it == j_.end()) {
      fail(std::string("lacks '") + name + "'");
      return nullptr;
    }
    return &*it;
  }
  std::string string(const char* name, bool allow_empty = false) {
    const nlohmann::json* v = get(name);
    if (!v) return "";
    if (!v->is_string() || (!allow_empty && v->get_ref<const std::string&>().empty())) {
      fail(std::string("has a '") + name + "' that is not a non-empty string");
      return "";
    }
    return v->get<std::string>();
  }
  int64_t integer(const char* name, int64_t lo, int64_t hi) { return integer_of(get(name), name, lo, hi); }
  int64_t integer_of(const nlohmann::json* v, const char* name, int64_t lo, int64_t hi) {
    if (!v) return 0;
    if (!v->is_number_integer() || v->get<int64_t>() < lo || v->get<int64_t>() > hi) {
      fail(std::string("has a '") + name + "' that is not an integer from " + std::to_string(lo) + " to " +
           std::to_string(hi));
      return 0;
    }
    return v->get<int64_t>();
  }
  bool boolean(const char* name) {
    const nlohmann::json* v = get(name);
    if (!v) return false;
    if (!v->is_boolean()) {
      fail(std::string("has a '") + name + "' that is not true or false");
      return false;
    }
    return v->get<bool>();
  }
  void fail(const std::string& why) {
    if (problem_->empty()) *problem_ = what_ + " " + why;
  }
  bool ok() const { return problem_->empty(); }

 private:
  const nlohmann::json& j_;
  std::string what_;
  std::string* problem_;
};

ParamDescription parse_param(const nlohmann::json& j, const std::string& what, std::string* problem) {
  ParamDescription p;
  if (!j.is_object()) {
    *problem = what + " is not an object";
    return p;
  }
  Fields f(j, what, problem);
  p.name = f.string("name");
  p.type = f.string("type");
  p.element = f.string("element");
  p.ndim = int(f.integer("ndim", 0, 4));
  p.lanes = int(f.integer("lanes", 0, 1 << 16));  // 0 for structs
  p.differentiable = f.boolean("differentiable");
  const nlohmann::json* scalar = f.get("scalar");
  auto layout = j.find("struct");
  if (scalar && scalar->is_null()) {  // a struct: its layout says what the element holds
    if (layout == j.end() || !layout->is_object()) f.fail("has no scalar kind and no struct layout");
    else p.layout = *layout;
  } else if (scalar) {
    p.scalar = f.string("scalar");
    if (layout != j.end()) f.fail("has both a scalar kind and a struct layout");
  }
  return p;
}

/// Reads `private_adds` ({"forward": [{"param", "adds"}...], "adjoint": [...]}) into `k`,
/// whose params are parsed: each entry names a distinct array parameter of its entry point.
void parse_private_adds(const nlohmann::json& j, KernelDescription& k, Fields& f) {
  if (!j.is_object()) return f.fail("has a 'private_adds' that is not an object");
  for (const char* entry : {"forward", "adjoint"}) {
    auto list = j.find(entry);
    if (list == j.end()) continue;
    const bool adjoint = entry[0] == 'a';
    if (adjoint && k.adjoint.empty()) return f.fail("has private adds for an adjoint it does not have");
    const std::string what = std::string("private_adds.") + entry;
    if (!list->is_array()) return f.fail("has a '" + what + "' that is not an array");
    const int64_t params = int64_t(k.params.size()) * (adjoint ? 2 : 1);
    std::set<int64_t> seen;
    for (const nlohmann::json& a : *list) {
      if (!a.is_object()) return f.fail("has a '" + what + "' entry that is not an object");
      auto param = a.find("param"), adds = a.find("adds");
      if (param == a.end() || adds == a.end()) return f.fail("has a '" + what + "' entry without 'param' and 'adds'");
      PrivateAddDescription d;
      d.param = int(f.integer_of(&*param, "param", 0, params - 1));
      d.adds = int(f.integer_of(&*adds, "adds", 1, INT32_MAX));
      if (auto owned = a.find("owned"); owned != a.end()) {
        if (!owned->is_boolean()) return f.fail("has a '" + what + "' entry whose 'owned' is not a boolean");
        d.owned = owned->get<bool>();
      }
      if (!f.ok()) return;
      if (k.params[size_t(d.param % int64_t(k.params.size()))].ndim == 0)
        return f.fail("has a '" + what + "' entry for parameter " + std::to_string(d.param) + ", which is not an array");
      if (!seen.insert(d.param).second)
        return f.fail("names parameter " + std::to_string(d.param) + " twice in '" + what + "'");
      (adjoint ? k.private_adjoint : k.private_forward).push_back(d);
    }
  }
}

/// Reads `own_adds` ([adjoint parameter, ...]) into `k`: distinct adjoint array parameters.
void parse_own_adds(const nlohmann::json& j, KernelDescription& k, Fields& f) {
  if (k.adjoint.empty()) return f.fail("has own adds for an adjoint it does not have");
  if (!j.is_array()) return f.fail("has an 'own_adds' that is not an array");
  const int64_t n = int64_t(k.params.size());
  std::set<int64_t> seen;
  for (const nlohmann::json& p : j) {
    const int64_t param = f.integer_of(&p, "own_adds", n, 2 * n - 1);
    if (!f.ok()) return;
    if (k.params[size_t(param - n)].ndim == 0)
      return f.fail("has an 'own_adds' entry for parameter " + std::to_string(param) + ", which is not an array");
    if (!seen.insert(param).second) return f.fail("names parameter " + std::to_string(param) + " twice in 'own_adds'");
    k.own_adds.push_back(int(param));
  }
}

}  // namespace

std::string parse_kernel_descriptions(const nlohmann::json& kernels, std::vector<KernelDescription>* out) {
  out->clear();
  if (!kernels.is_array()) return "'kernels' is not an array";
  std::string problem;
  std::set<std::string> names, entries;
  // A status code names one loop of the module: kernels that reach the same device function
  // all list its loops under the same codes, so a code may recur across kernels only with the
  // same location, and never twice in one kernel.
  std::map<int64_t, std::string> loop_at_status;
  for (size_t i = 0; i < kernels.size() && problem.empty(); ++i) {
    const nlohmann::json& j = kernels[i];
    std::string what = "kernel " + std::to_string(i + 1);
    if (!j.is_object()) return what + " is not an object";
    if (auto n = j.find("name"); n != j.end() && n->is_string()) what = "kernel '" + n->get<std::string>() + "'";
    Fields f(j, what, &problem);
    KernelDescription k;
    k.name = f.string("name");
    k.launch_ndim = int(f.integer("launch_ndim", 0, 4));
    k.forward = f.string("forward");
    if (const nlohmann::json* adj = f.get("adjoint"); adj && !adj->is_null()) k.adjoint = f.string("adjoint");
    if (j.contains("adjoint_error")) k.adjoint_error = f.string("adjoint_error");
    if (!k.adjoint.empty() && !k.adjoint_error.empty()) f.fail("has an adjoint and a reason it has none");
    k.checks = f.boolean("checks");
    if (const nlohmann::json* shared = f.get("dynamic_shared_bytes")) {
      if (!shared->is_object()) {
        f.fail("has a 'dynamic_shared_bytes' that is not an object");
      } else {
        auto fwd = shared->find("forward");
        k.dynamic_shared_forward =
            unsigned(f.integer_of(fwd == shared->end() ? nullptr : &*fwd, "dynamic_shared_bytes.forward", 0, UINT32_MAX));
        if (fwd == shared->end()) f.fail("lacks 'dynamic_shared_bytes.forward'");
        if (auto adj = shared->find("adjoint"); adj != shared->end())
          k.dynamic_shared_adjoint = unsigned(f.integer_of(&*adj, "dynamic_shared_bytes.adjoint", 0, UINT32_MAX));
      }
    }
    if (const nlohmann::json* params = f.get("params")) {
      if (!params->is_array()) f.fail("has a 'params' that is not an array");
      for (size_t p = 0; f.ok() && params->is_array() && p < params->size(); ++p)
        k.params.push_back(parse_param((*params)[p], what + " parameter " + std::to_string(p + 1), &problem));
    }
    if (const nlohmann::json* loops = f.get("loops")) {
      if (!loops->is_array()) f.fail("has a 'loops' that is not an array");
      std::set<int64_t> kernel_statuses;
      for (size_t l = 0; f.ok() && loops->is_array() && l < loops->size(); ++l) {
        const nlohmann::json& lj = (*loops)[l];
        if (!lj.is_object()) {
          f.fail("has a loop that is not an object");
          break;
        }
        Fields lf(lj, what + " loop " + std::to_string(l + 1), &problem);
        LoopDescription d;
        d.status = int(lf.integer("status", 1, INT32_MAX));
        d.loc = lf.string("loc", true);
        if (lf.ok() && !kernel_statuses.insert(d.status).second)
          lf.fail("repeats status code " + std::to_string(d.status));
        if (lf.ok()) {
          auto [at, fresh] = loop_at_status.emplace(d.status, d.loc);
          if (!fresh && at->second != d.loc)
            lf.fail("has status code " + std::to_string(d.status) + ", which another kernel gives the loop at " +
                    at->second);
        }
        k.loops.push_back(std::move(d));
      }
    }
    if (auto adds = j.find("private_adds"); f.ok() && adds != j.end()) parse_private_adds(*adds, k, f);
    if (auto own = j.find("own_adds"); f.ok() && own != j.end()) parse_own_adds(*own, k, f);
    if (!problem.empty()) break;
    if (!names.insert(k.name).second) return what + " is described twice";
    if (!entries.insert(k.forward).second || (!k.adjoint.empty() && !entries.insert(k.adjoint).second))
      return what + " names an entry point another entry point has";
    out->push_back(std::move(k));
  }
  if (!problem.empty()) out->clear();
  return problem;
}

std::vector<std::string> described_entry_points(const std::vector<KernelDescription>& kernels) {
  std::vector<std::string> out;
  for (const KernelDescription& k : kernels) {
    out.push_back(k.forward);
    if (!k.adjoint.empty()) out.push_back(k.adjoint);
  }
  return out;
}

std::string compare_kernel_descriptions(const nlohmann::json& stored, const nlohmann::json& expected) {
  if (!stored.is_array() || !expected.is_array()) return "'kernels' is not an array";
  if (stored.size() != expected.size())
    return "describes " + std::to_string(stored.size()) + " kernels where the module has " +
           std::to_string(expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const nlohmann::json& e = expected[i];
    const nlohmann::json& s = stored[i];
    const std::string who = "kernel '" + e.value("name", std::string("?")) + "'";
    if (!s.is_object()) return "describes " + who + " as something other than an object";
    for (const char* field : {"name", "params", "launch_ndim", "forward", "adjoint", "checks", "private_adds", "own_adds"}) {
      auto se = s.find(field);
      auto ee = e.find(field);
      if (ee == e.end()) continue;
      if (se == s.end() || *se != *ee)
        return "describes " + who + "'s '" + field + "' otherwise than its code generator does";
    }
  }
  return "";
}

}  // namespace kjit::compiler
