// The use/def facts of a function (kjit/ir/def_use.hpp).
#include "kjit/ir/def_use.hpp"

namespace kjit::ir {

DefUse::DefUse(const Function& fn) : def_(fn.values.size(), nullptr), uses_(fn.values.size(), 0) {
  for_each_stmt(fn.body, [&](const Stmt& s) {
    if (s.result != kNoValue) def_.at(s.result) = &s;
    for (ValueId a : s.args)
      if (a != kNoValue) ++uses_.at(a);
    for (const Block& r : s.regions)
      if (r.yield != kNoValue) ++uses_.at(r.yield);
  });
  if (fn.body.yield != kNoValue) ++uses_.at(fn.body.yield);
}

}  // namespace kjit::ir
