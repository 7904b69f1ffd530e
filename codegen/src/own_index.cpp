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

}  // namespace kjit::codegen
