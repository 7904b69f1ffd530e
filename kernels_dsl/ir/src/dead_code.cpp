// Dead code elimination over structured regions.
#include "kjit/ir/dead_code.hpp"

namespace kjit::ir {

namespace {
void count_uses(const Block& b, std::vector<int>& uses) {
  for (const Stmt& s : b.stmts) {
    for (ValueId a : s.args) ++uses[a];
    for (const Block& r : s.regions) count_uses(r, uses);
  }
  if (b.yield != kNoValue) ++uses[b.yield];
}

bool sweep(Block& b, std::vector<int>& uses) {
  bool changed = false;
  for (size_t i = b.stmts.size(); i-- > 0;) {
    Stmt& s = b.stmts[i];
    for (Block& r : s.regions) changed |= sweep(r, uses);
    if (is_effect_free(s) && s.result != kNoValue && uses[s.result] == 0 && s.op != Op::Param) {
      for (ValueId a : s.args) --uses[a];
      b.stmts.erase(b.stmts.begin() + long(i));
      changed = true;
    }
  }
  return changed;
}
}  // namespace

void eliminate_dead_code(Function& fn) {
  std::vector<int> uses(fn.values.size(), 0);
  count_uses(fn.body, uses);
  while (sweep(fn.body, uses)) {
  }
}

}  // namespace kjit::ir
