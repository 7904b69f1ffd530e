// Which parameters a kernel reads and writes as arrays.
#include "array_uses.hpp"

#include <map>

namespace kjit::detail {

void array_uses(const ir::Function& fn, std::set<size_t>& read, std::set<size_t>& written) {
  std::map<ir::ValueId, size_t> param_of;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param) param_of[s.result] = s.param();
    auto note = [&](ir::ValueId array, std::set<size_t>& into) {
      auto p = param_of.find(array);
      if (p != param_of.end()) into.insert(p->second);
    };
    if (s.op == ir::Op::ArrayLoad) note(s.args[0], read);
    if (s.op == ir::Op::ArrayStore || s.op == ir::Op::ArrayAtomic) note(s.args[0], written);
    if (s.op == ir::Op::CallFunc) {
      std::set<size_t> r, w;
      array_uses(*fn.callees.at(s.callee()), r, w);
      for (size_t k : r) note(s.args.at(k), read);
      for (size_t k : w) note(s.args.at(k), written);
    }
  });
}

bool has_atomics(const ir::Function& fn) {
  bool found = false;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::ArrayAtomic) found = true;
    if (s.op == ir::Op::CallFunc && !found) found = has_atomics(*fn.callees.at(s.callee()));
  });
  return found;
}

}  // namespace kjit::detail
