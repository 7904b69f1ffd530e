// The adjoint's dynamic loops (adjoint_loops.hpp).
#include "adjoint_loops.hpp"

#include <set>

#include "expr_emitter.hpp"

namespace kjit::codegen {

std::string AdjointLoop::ckpt(const Names& n, int64_t var) const {
  return "kj_ckpt" + std::to_string(id) + "_" + n.var(var);
}
std::string AdjointLoop::seg(const Names& n, int64_t var) const {
  return "kj_seg" + std::to_string(id) + "_" + n.var(var);
}
std::string AdjointLoop::ro(const Names& n, int64_t var) const {
  return "kj_ro" + std::to_string(id) + "_" + n.var(var);
}

AdjointLoops::AdjointLoops(const ir::Function& lowered) {
  ir::for_each_stmt(lowered.body, [&](const ir::Stmt& loop) {
    if (loop.op != ir::Op::For && loop.op != ir::Op::While) return;
    std::set<int64_t> declared, stored, loaded;
    AdjointLoop info;
    info.id = int(list.size());
    info.stmt = &loop;
    for (const ir::Block& r : loop.regions) {
      ir::for_each_stmt(r, [&](const ir::Stmt& s) {
        if (s.op == ir::Op::DeclVar) declared.insert(s.var());
        if (s.op == ir::Op::StoreVar) stored.insert(s.var());
        if (s.op == ir::Op::LoadVar) loaded.insert(s.var());
        if (s.result == ir::kNoValue) return;
        const ir::Type& t = lowered.type_of(s.result);
        if (!t.is_array() && t.is_differentiable()) info.body_values.push_back(s.result);
      });
    }
    for (int64_t v : stored)
      if (!declared.count(v)) info.state.push_back(v);
    for (int64_t v : loaded)
      if (!declared.count(v) && !stored.count(v)) info.readonly.push_back(v);
    index[&loop] = list.size();
    list.push_back(info);
  });
}

std::string assign_state(const std::string& dst, const std::string& src) { return dst + " = " + src + ";"; }

AdjointLoops AdjointLoops::numbered_from(int first) const {
  AdjointLoops out = *this;
  for (AdjointLoop& l : out.list) l.id += first;
  return out;
}

}  // namespace kjit::codegen
