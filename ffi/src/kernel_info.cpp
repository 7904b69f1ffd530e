// Preparing kernels for the FFI (parameters, array uses, adjoint status, signature JSON) and
// finding them by name: a per-thread hash map in front of one locked table.
#include "kernel_info.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "frame.hpp"
#include "kjit/codegen/codegen.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/runtime/launch.hpp"

namespace kjit::ffi::detail {

namespace {

void fill_param(ParamInfo& p, const std::string& name, const ir::Type& type) {
  p.name = name;
  p.type = type;
  p.is_array = type.is_array();
  p.ndim = type.ndim;
  p.scalar = type.scalar;
  ir::Type e = type.element();
  p.dtype = e.shape == ir::Shape::Struct ? xla::kInvalid : dtype_of(type.scalar);
  p.element_bytes = e.shape == ir::Shape::Struct ? 0 : e.element_bytes();
  p.lanes = e.lanes();
  p.differentiable = type.is_differentiable();
  switch (e.shape) {
    case ir::Shape::Vector:
    case ir::Shape::Quat:
    case ir::Shape::Transform:
      p.inner_rank = 1;
      p.inner[0] = e.rows;
      break;
    case ir::Shape::Matrix:
      p.inner_rank = 2;
      p.inner[0] = e.rows;
      p.inner[1] = e.cols;
      break;
    case ir::Shape::Void:
    case ir::Shape::Scalar:
    case ir::Shape::Struct:  // one element of its byte size, described by its layout
      break;
  }
}

/// Whether value type `t` is a struct the FFI passes as its fields: each an array of plain
/// elements, a plain value or (nested, at any depth) such a struct; no array of structs.
bool flattens(const ir::Type& t) {
  if (t.is_array() || t.shape != ir::Shape::Struct) return false;
  for (const ir::StructField& f : ir::struct_info(t.struct_id).fields)
    if (f.type.element().shape == ir::Shape::Struct && !flattens(f.type)) return false;
  return true;
}

/// How many FFI parameters struct type `t` (one that flattens) becomes: its leaves.
int leaves(const ir::Type& t) {
  int n = 0;
  for (const ir::StructField& f : ir::struct_info(t.struct_id).fields) n += flattens(f.type) ? leaves(f.type) : 1;
  return n;
}

/// The FFI's parameters of `def`: one per parameter, a flattened struct's leaves in its place
/// (depth first, in field order), named by their path ("o.inner.points") and placed at their
/// byte offset in the outermost struct.
void add_params(KernelInfo& k, const KernelDef& def) {
  for (const KernelParam& kp : def.params()) {
    PackedParam slot;
    slot.first = int(k.params.size());
    const int kparam = int(k.packed.size());
    std::vector<std::string> path, holders;
    auto add = [&](const std::string& name, const ir::Type& type, int offset) {
      k.params.emplace_back();
      ParamInfo& p = k.params.back();
      fill_param(p, name, type);
      p.kparam = kparam;
      p.field = path.empty() ? -1 : int(k.params.size()) - 1 - slot.first;
      p.offset = offset;
      p.path = path;
      p.holders = holders;
      if (type.is_array()) k.arrays.push_back(int(k.params.size() - 1));
    };
    auto walk = [&](auto&& self, const std::string& name, const ir::Type& type, int offset) -> void {
      if (!flattens(type)) return add(name, type, offset);
      const ir::StructInfo& si = ir::struct_info(type.struct_id);
      for (const ir::StructField& f : si.fields) {
        path.push_back(f.name);
        holders.push_back(si.name);
        self(self, name + "." + f.name, f.type, offset + f.offset);
        path.pop_back();
        holders.pop_back();
      }
    };
    if (flattens(kp.type)) {
      slot.count = leaves(kp.type);
      slot.struct_bytes = ir::struct_info(kp.type.struct_id).size;
      walk(walk, kp.name, kp.type, 0);
    } else {
      add(kp.name, kp.type, 0);
    }
    k.packed.push_back(slot);
  }
}

/// Records how the body uses each array parameter (a struct's array leaves: where the body
/// takes the field straight from the parameter, or from a nested struct field of it).
void analyse_uses(KernelInfo& k, const ir::Function& fn) {
  std::unordered_map<ir::ValueId, int> param_of;
  // A flattened struct (a parameter or a struct field of one): its type and its first leaf.
  std::unordered_map<ir::ValueId, std::pair<ir::Type, int>> struct_of;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op != ir::Op::Param || s.param() >= k.packed.size()) return;
    const PackedParam& pp = k.packed[size_t(s.param())];
    if (pp.struct_bytes) struct_of[s.result] = {k.def->params()[size_t(s.param())].type, pp.first};
    else param_of[s.result] = pp.first;
  });
  // Extracts follow the values they read (statements in order), so nested fields resolve
  // in one pass.
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op != ir::Op::Extract || s.args.empty()) return;
    auto it = struct_of.find(s.args[0]);
    if (it == struct_of.end()) return;
    const std::vector<ir::StructField>& fields = ir::struct_info(it->second.first.struct_id).fields;
    int leaf = it->second.second;
    for (size_t f = 0; f < size_t(s.field()) && f < fields.size(); ++f)
      leaf += flattens(fields[f].type) ? leaves(fields[f].type) : 1;
    if (flattens(s.type)) struct_of[s.result] = {s.type, leaf};
    else if (s.type.is_array()) param_of[s.result] = leaf;
  });
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op != ir::Op::ArrayLoad && s.op != ir::Op::ArrayStore && s.op != ir::Op::ArrayAtomic) return;
    if (s.args.empty()) return;
    auto it = param_of.find(s.args[0]);
    if (it == param_of.end() || it->second < 0 || size_t(it->second) >= k.params.size()) return;
    ArrayUse& u = k.params[size_t(it->second)].use;
    if (s.op == ir::Op::ArrayLoad) u.loads = true;
    if (s.op == ir::Op::ArrayStore) u.stores = true;
    if (s.op == ir::Op::ArrayAtomic) {
      ir::AtomicOp op = s.atomic_op();
      (op == ir::AtomicOp::Add || op == ir::AtomicOp::Sub ? u.accumulates : u.other_atomics) = true;
    }
  });
}

std::unique_ptr<KernelInfo> prepare(const KernelDef& def) {
  auto k = std::make_unique<KernelInfo>();
  k->def = &def;
  k->name = def.name();
  add_params(*k, def);
  const ir::Function& fn = def.ir();  // traces once; a tracing error is a User error
  k->launch_ndim = fn.launch_ndim;
  analyse_uses(*k, fn);
  // Extent facts index the kernel's parameters: reindex them as params (a flattened struct's
  // fields are not checked, as a C++ launch does not check them).
  const ir::ExtentFacts facts = ir::extent_facts(def.ir());
  k->extents.accessed.assign(k->params.size(), false);
  for (size_t i = 0; i < k->packed.size(); ++i)
    if (!k->packed[i].struct_bytes && i < facts.accessed.size())
      k->extents.accessed[size_t(k->packed[i].first)] = facts.accessed[i];
  for (ir::ExtentFact f : facts.unguarded) {
    if (k->packed[size_t(f.param)].struct_bytes) continue;
    f.param = k->packed[size_t(f.param)].first;
    k->extents.unguarded.push_back(f);
  }

  const ModuleDef& module = Registry::get().module(def.module());
  ModuleOptions mo = module.options();
  k->block_dim = mo.block_dim;
  codegen::CodegenOptions cg;
  cg.enable_adjoint = mo.enable_adjoint;
  cg.loop_checkpoints = mo.loop_checkpoints;
  nlohmann::json d = codegen::describe_module({&fn}, cg).at(0);
  k->has_adjoint = !d["adjoint"].is_null();
  if (!k->has_adjoint)
    k->adjoint_error = d.contains("adjoint_error") ? d["adjoint_error"].get<std::string>()
                                                   : "kernel '" + k->name + "' has no adjoint: module '" +
                                                         def.module() + "' is built with enable_adjoint = false";

  nlohmann::json j;
  j["name"] = k->name;
  j["module"] = def.module();
  j["launch_ndim"] = k->launch_ndim;
  j["has_adjoint"] = k->has_adjoint;
  j["adjoint_error"] = k->adjoint_error;
  j["block_dim"] = k->block_dim;
  nlohmann::json params = nlohmann::json::array();
  for (size_t i = 0; i < k->params.size(); ++i) {
    const ParamInfo& p = k->params[i];
    nlohmann::json q = param_json(p);
    const nlohmann::json& described = d.at("params").at(size_t(p.kparam));
    // A struct's layout as codegen lays it out (name, size, align, fields with offsets).
    if (p.is_struct()) q["struct"] = described.at("struct");
    // A flattened struct's leaf: the parameter and struct it belongs to, its path below the
    // parameter ("field": "inner.points"; "path": the same as a list) and the struct holding
    // each step of that path ("structs", the outermost first).
    if (p.field >= 0) {
      std::string field;
      for (const std::string& step : p.path) field += (field.empty() ? "" : ".") + step;
      q["field_of"] = {{"param", def.params()[size_t(p.kparam)].name},
                       {"index", p.kparam},
                       {"field", field},
                       {"path", p.path},
                       {"struct", described.at("struct").at("name")},
                       {"structs", p.holders}};
    }
    q["loads"] = p.use.loads;
    q["stores"] = p.use.stores;
    q["accumulates"] = p.use.accumulates;
    q["other_atomics"] = p.use.other_atomics;
    params.push_back(q);
  }
  j["params"] = params;
  k->json = j.dump();
  return k;
}

/// Every kernel prepared so far, by name. Entries are never removed: per-thread caches and
/// in-flight handlers hold pointers to them.
struct Table {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<KernelInfo>, std::less<>> kernels;
};

Table& table() {
  static Table* t = new Table;  // never destroyed: handlers may run during exit
  return *t;
}

const KernelInfo& lookup_slow(std::string_view name) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.kernels.find(name);
  if (it != t.kernels.end()) return *it->second;
  // "<kernel>.tangent" names the kernel's tangent kernel (forward mode), made on first use;
  // kjit.jax launches it, and its adjoint (second order), like any kernel.
  const KernelDef* def = find_kernel_or_tangent(name);
  if (!def) {
    std::string known;
    for (const KernelDef* k : Registry::get().kernels()) known += (known.empty() ? "" : ", ") + k->name();
    fail(xla::kNotFound, "kjit: no kernel named '" + std::string(name) + "' is registered in this process (" +
                             (known.empty() ? std::string("no kernel library is loaded; call kjit.jax.load()")
                                            : "known kernels: " + known) +
                             ")");
  }
  auto info = prepare(*def);
  const KernelInfo& ref = *info;
  t.kernels.emplace(def->name(), std::move(info));
  return ref;
}

}  // namespace

ParamInfo param_info(const KernelParam& kp) {
  ParamInfo p;
  fill_param(p, kp.name, kp.type);
  return p;
}

nlohmann::json param_json(const ParamInfo& p) {
  nlohmann::json q;
  q["name"] = p.name;
  q["kind"] = p.is_array ? "array" : "value";
  q["type"] = p.type.str();
  q["ndim"] = p.ndim;
  q["dtype"] = p.is_struct() ? nlohmann::json() : nlohmann::json(dtype_name(p.dtype));
  q["inner"] = nlohmann::json::array();
  for (int i = 0; i < p.inner_rank; ++i) q["inner"].push_back(p.inner[i]);
  q["differentiable"] = p.differentiable;
  q["supported"] = !p.is_struct();
  return q;
}

std::string ParamInfo::inner_str() const {
  if (inner_rank == 0) return "()";
  if (inner_rank == 1) return "(" + std::to_string(inner[0]) + ",)";
  return "(" + std::to_string(inner[0]) + ", " + std::to_string(inner[1]) + ")";
}

std::string KernelInfo::names(const std::vector<int>& indices) const {
  std::string s;
  for (int i : indices) s += (s.empty() ? "" : ", ") + params[size_t(i)].name;
  return s;
}

const KernelInfo& kernel_info(std::string_view name) {
  // Keys view the name owned by the (never freed) KernelInfo, so a hit allocates nothing.
  thread_local std::unordered_map<std::string_view, const KernelInfo*> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return *it->second;
  const KernelInfo& k = lookup_slow(name);
  cache.emplace(std::string_view(k.name), &k);
  return k;
}

std::string all_kernels_json() {
  nlohmann::json out = nlohmann::json::array();
  for (const KernelDef* k : Registry::get().kernels()) out.push_back(nlohmann::json::parse(kernel_info(k->name()).json));
  return out.dump();
}

}  // namespace kjit::ffi::detail
