// Device functions: the recursion guard, building function IR, and emitting calls.
#include <algorithm>

#include "kjit/dsl/functions.hpp"
#include "kjit/ir/dead_code.hpp"
#include "kjit/ir/verifier.hpp"

namespace kjit::dsl::detail {

namespace {
struct InProgress {
  const void* func;
  std::string name;
  std::string signature;
};
thread_local std::vector<InProgress> t_in_progress;
}  // namespace

void FuncTracing::enter(const void* func, const std::string& name, const std::string& signature, Loc loc) {
  for (const InProgress& p : t_in_progress) {
    if (p.func == func && p.signature == signature) {
      std::string chain;
      for (const InProgress& q : t_in_progress) chain += q.name + " -> ";
      Tracer::get(loc).fail(loc, "device function '" + name + "' calls itself (" + chain + name +
                                     "); recursion is not supported on GPUs here: write the "
                                     "recursion as a loop (For / While with a Var)");
    }
  }
  t_in_progress.push_back({func, name, signature});
}

void FuncTracing::leave() { t_in_progress.pop_back(); }

std::shared_ptr<ir::Function> FuncTracing::make(const std::string& name, const std::vector<ir::Type>& types, Loc loc) {
  auto fn = std::make_shared<ir::Function>();
  fn->name = name;
  fn->is_function = true;
  fn->loc = ir::SourceLoc{loc.file, loc.line};
  for (size_t k = 0; k < types.size(); ++k) fn->params.push_back(ir::Param{"a" + std::to_string(k), types[k]});
  return fn;
}

ir::ValueId FuncTracing::param(size_t k, Loc loc) {
  auto& t = Tracer::get(loc);
  return t.emit(ir::Op::Param, t.function().params.at(k).type, {}, int64_t(k), loc);
}

void FuncTracing::set_result(ir::ValueId v) {
  auto* t = Tracer::current();
  KJIT_CHECK(t, "no function is being traced");
  t->function().body.yield = v;
}

void FuncTracing::finish(ir::Function& fn) {
  ir::eliminate_dead_code(fn);
  ir::verify(fn);
}

ir::ValueId FuncTracing::call(const std::shared_ptr<const ir::Function>& fn, std::vector<ir::ValueId> args, Loc loc) {
  auto& t = Tracer::get(loc);
  auto& callees = t.function().callees;
  auto it = std::find(callees.begin(), callees.end(), fn);
  int64_t index = it - callees.begin();
  if (it == callees.end()) callees.push_back(fn);
  for (size_t k = 0; k < args.size() && k < fn->params.size(); ++k)
    if (t.function().type_of(args[k]) != fn->params[k].type)
      t.fail(loc, "device function '" + fn->name + "': argument " + std::to_string(k + 1) + " is a " +
                      dsl_type_name(t.function().type_of(args[k])) + ", its parameter a " +
                      dsl_type_name(fn->params[k].type));
  return t.emit(ir::Op::CallFunc, fn->result_type(), std::move(args), index, loc);
}

std::string FuncTracing::signature(const std::vector<ir::Type>& types) {
  std::string s;
  for (const ir::Type& t : types) s += t.str() + ",";
  return s;
}

}  // namespace kjit::dsl::detail
