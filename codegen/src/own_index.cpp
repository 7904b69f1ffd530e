// The own-index analysis (own_index.hpp).
#include "own_index.hpp"

#include <vector>

namespace kjit::codegen {

bool OwnIndex::operator()(const ir::Stmt& access) const {
  if (fn_.is_function || access.args.empty()) return false;
  const ir::Type& a = fn_.type_of(access.args[0]);
  const size_t n = size_t(a.ndim);
  if (n == 0 || access.args.size() <= n) return false;
  std::vector<int64_t> components;  // tid<N>()'s component of each index; -1: the flat tid()
  for (size_t k = 1; k <= n; ++k) {
    if (!def_use_.defined_by(access.args[k], ir::Op::ThreadId)) return false;
    components.push_back(def_use_.def(access.args[k])->imm);
  }
  if (n == 1 && components[0] == -1) return true;
  if (fn_.launch_ndim == 0 || int(n) != fn_.launch_ndim) return false;
  for (size_t k = 0; k < n; ++k)
    if (components[k] != int64_t(k)) return false;
  return true;
}

bool OwnedArrays::operator()(ir::ValueId array) {
  auto it = owned_.find(array);
  if (it != owned_.end()) return it->second;
  // Inside device functions the caller's indices are unknown; an array passed to a device
  // function may be read there anywhere; only a parameter's memory is the launch's to check.
  bool all = !fn_.is_function && own_.def_use().defined_by(array, ir::Op::Param);
  ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::ArrayLoad && s.args[0] == array) all = all && own_(s);
    if (s.op == ir::Op::CallFunc)
      for (ir::ValueId a : s.args) all = all && a != array;
  });
  owned_[array] = all;
  return all;
}

namespace {
/// Whether an element of `t` is whole 4-byte words (16 of them fill whole cache lines).
bool whole_words(const ir::Type& t) {
  return t.shape != ir::Shape::Struct && t.shape != ir::Shape::Void && ir::scalar_bytes(t.scalar) >= 4;
}
}  // namespace

std::set<const ir::Stmt*> block_accesses(const ir::Function& fn, ir::Op op) {
  std::map<ir::ValueId, int> param_of;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param && fn.params[s.param()].type.is_array()) param_of[s.result] = int(s.param());
  });
  const OwnIndex own_index(fn);
  std::map<int, const ir::Stmt*> access;  // by parameter: its one block access, or null
  for (const ir::Stmt& s : fn.body.stmts) {
    auto p = s.op == op ? param_of.find(s.args[0]) : param_of.end();
    if (p == param_of.end()) continue;
    const ir::Type& t = fn.params[size_t(p->second)].type;
    const bool fits = t.ndim == 1 && own_index(s) && whole_words(t.element());
    access.emplace(p->second, fits ? &s : nullptr);  // a second access is a use of the array: dropped below
  }
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::ArrayShape) return;
    for (ir::ValueId a : s.args) {
      auto p = param_of.find(a);
      if (p == param_of.end()) continue;
      auto at = access.find(p->second);
      if (at != access.end() && at->second != &s) at->second = nullptr;
    }
  });
  std::set<const ir::Stmt*> out;
  for (const auto& [param, s] : access)
    if (s) out.insert(s);
  return out;
}

}  // namespace kjit::codegen
