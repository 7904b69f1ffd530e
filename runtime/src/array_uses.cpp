// Which parameters a kernel reads and writes as arrays.
#include "array_uses.hpp"

#include <map>

namespace kjit::detail {

void array_origins(const ir::Function& fn, std::set<ArrayOrigin>& read, std::set<ArrayOrigin>& written) {
  std::map<ir::ValueId, ArrayOrigin> origin;  // parameters and the fields extracted from them
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Param) origin[s.result] = {s.param(), {}};
    if (s.op == ir::Op::Extract && fn.type_of(s.args[0]).is_struct()) {
      auto o = origin.find(s.args[0]);
      if (o != origin.end()) {
        ArrayOrigin field = o->second;
        field.path.push_back(s.field());
        origin[s.result] = std::move(field);
      }
    }
    // `array`'s origin, with `deeper` (a callee's path from its parameter) appended.
    auto note = [&](ir::ValueId array, std::set<ArrayOrigin>& into, const std::vector<int64_t>& deeper) {
      auto o = origin.find(array);
      if (o == origin.end()) return;
      ArrayOrigin at = o->second;
      at.path.insert(at.path.end(), deeper.begin(), deeper.end());
      into.insert(std::move(at));
    };
    if (s.op == ir::Op::ArrayLoad) note(s.args[0], read, {});
    if (s.op == ir::Op::ArrayStore || s.op == ir::Op::ArrayAtomic) note(s.args[0], written, {});
    if (s.op == ir::Op::CallFunc) {
      std::set<ArrayOrigin> r, w;
      array_origins(*fn.callees.at(s.callee()), r, w);
      for (const ArrayOrigin& k : r) note(s.args.at(k.param), read, k.path);
      for (const ArrayOrigin& k : w) note(s.args.at(k.param), written, k.path);
    }
  });
}

ArrayUses array_uses_of(const ir::Function& fn) {
  ArrayUses uses;
  std::set<ArrayOrigin> read, written;
  array_origins(fn, read, written);
  for (const ArrayOrigin& o : read) {
    if (o.path.empty()) uses.read.insert(o.param);
    else uses.field_read.push_back(o);
  }
  for (const ArrayOrigin& o : written) {
    if (o.path.empty()) uses.written.insert(o.param);
    else uses.field_written.push_back(o);
  }
  return uses;
}

void array_uses(const ir::Function& fn, std::set<size_t>& read, std::set<size_t>& written) {
  const ArrayUses uses = array_uses_of(fn);
  read.insert(uses.read.begin(), uses.read.end());
  written.insert(uses.written.begin(), uses.written.end());
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
