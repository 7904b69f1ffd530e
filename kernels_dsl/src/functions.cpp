// Device functions: the shared state of a Func, the recursion guard, building function IR
// (body, user adjoint, user replay, user tangent) once per argument signature, and emitting
// calls.
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kjit/dsl/functions.hpp"
#include "kjit/dsl/tracer.hpp"
#include "kjit/ir/dead_code.hpp"
#include "kjit/ir/lower_jumps.hpp"
#include "kjit/ir/structs.hpp"
#include "kjit/ir/verifier.hpp"

namespace kjit::dsl::detail {

struct FuncState {
  std::atomic<int> refs{1};
  std::string name;
  std::recursive_mutex mutex;
  std::map<std::string, std::shared_ptr<const ir::Function>> by_signature;
};

FuncState* func_state_new(const char* name) {
  auto* s = new FuncState;
  s->name = name ? name : "";
  return s;
}

void func_state_retain(FuncState* s) { s->refs.fetch_add(1, std::memory_order_relaxed); }

void func_state_release(FuncState* s) {
  if (s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete s;
}

const char* func_state_name(const FuncState* s) { return s->name.c_str(); }

namespace {
struct InProgress {
  const void* func;
  std::string name;
  std::string signature;
};
thread_local std::vector<InProgress> t_in_progress;

/// Throws a User error when (func, signature) is already being traced on this thread.
void enter(const void* func, const std::string& name, const std::string& signature, Loc loc) {
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

/// A new device-function IR with parameters a0.. of `types`.
std::shared_ptr<ir::Function> make(const std::string& name, const std::vector<ir::Type>& types, Loc loc) {
  auto fn = std::make_shared<ir::Function>();
  fn->name = name;
  fn->is_function = true;
  fn->loc = source_loc(loc);
  for (size_t k = 0; k < types.size(); ++k) fn->params.push_back(ir::Param{"a" + std::to_string(k), types[k]});
  return fn;
}

/// Each Return of `b` (nested blocks included) agrees with what `fn` returns at its end.
void check_returns(const ir::Function& fn, const ir::Block& b) {
  const ir::Type result = fn.result_type();
  ir::for_each_stmt(b, [&](const ir::Stmt& s) {
    if (s.op != ir::Op::Return) return;
    std::string problem;
    if (result.is_void() && !s.args.empty())
      problem = "Return(value) gives a " + dsl_type_name(fn.type_of(s.args[0])) + ", but the body returns nothing at its end";
    else if (!result.is_void() && s.args.empty())
      problem = "Return() without a value; the function returns a " + dsl_type_name(result) + ": write Return(value)";
    else if (!result.is_void() && fn.type_of(s.args[0]) != result)
      problem = "Return(value) gives a " + dsl_type_name(fn.type_of(s.args[0])) + "; the function returns a " +
                dsl_type_name(result) + " (the body's value at its end)";
    if (!problem.empty())
      throw Error(ErrorKind::User, "device function '" + fn.name + "' at " + s.loc.str() + ": " + problem);
  });
}

/// Dead-code elimination and verification of a traced function. One that returns early has
/// its jumps lowered here, so that every pass and printer after the tracer sees a function
/// that returns at its end.
void finish(std::shared_ptr<ir::Function>& fn) {
  bool returns = false;
  ir::for_each_stmt(fn->body, [&](const ir::Stmt& s) { returns |= s.op == ir::Op::Return; });
  if (returns) {
    check_returns(*fn, fn->body);
    ir::verify(*fn);
    auto lowered = std::make_shared<ir::Function>(ir::lower_jumps(*fn));
    fn = lowered;
  }
  ir::eliminate_dead_code(*fn);
  ir::verify(*fn);
}

/// "float32,vec3f,": the key of an argument signature.
std::string signature(const std::vector<ir::Type>& types) {
  std::string s;
  for (const ir::Type& t : types) s += t.str() + ",";
  return s;
}

/// Traces `part` of a function into a new IR with parameters `types`.
std::shared_ptr<ir::Function> trace_part(const std::string& name, const std::vector<ir::Type>& types,
                                         FuncTrace trace, const void* func, FuncPart part,
                                         int64_t* out_vars, Loc def_loc) {
  auto fn = make(name, types, def_loc);
  {
    Tracer tracer(*fn, name);
    trace(func, part, out_vars);
  }
  finish(fn);
  return fn;
}

/// Traces the body of a new signature, with the user's adjoint, replay and tangent when it
/// has them.
std::shared_ptr<const ir::Function> trace_function(const std::string& name, const std::vector<ir::Type>& types,
                                                   const ir::Type& result, FuncParts parts, FuncTrace trace,
                                                   const void* func, Loc def_loc) {
  auto fn = trace_part(name, types, trace, func, FuncPart::Body, nullptr, def_loc);
  if (parts.grad) {
    // The adjoint's parameters: a0.., adj_ret, then the adjoint array of each array parameter.
    std::vector<ir::Type> gtypes = types;
    if (!result.is_void()) gtypes.push_back(result);
    for (const ir::Type& t : types)
      if (t.is_array()) gtypes.push_back(t);
    auto g = make(name + "__grad", gtypes, def_loc);
    size_t next = types.size();
    if (!result.is_void()) g->params[next++].name = "adj_ret";
    for (size_t k = 0; k < types.size(); ++k)
      if (types[k].is_array()) g->params[next++].name = "adj_a" + std::to_string(k);
    std::vector<int64_t> out_vars(types.size(), -1);
    {
      Tracer tracer(*g, name);
      trace(func, FuncPart::Grad, out_vars.data());
    }
    fn->out_vars = out_vars;
    finish(g);
    fn->custom_adjoint = g;
  }
  if (parts.replay) fn->custom_replay = trace_part(name, types, trace, func, FuncPart::Replay, nullptr, def_loc);
  if (parts.jvp) {
    // The tangent's parameters: a0.., then d_a0.., one tangent per parameter.
    std::vector<ir::Type> jtypes = types;
    jtypes.insert(jtypes.end(), types.begin(), types.end());
    auto j = make(name + "__jvp", jtypes, def_loc);
    for (size_t k = 0; k < types.size(); ++k) j->params[types.size() + k].name = "d_a" + std::to_string(k);
    {
      Tracer tracer(*j, name);
      trace(func, FuncPart::Jvp, nullptr);
    }
    finish(j);
    if (j->result_type() != result)
      Tracer::get(def_loc).fail(def_loc, "device function '" + name + "': its .jvp returns " +
                                             (j->result_type().is_void() ? std::string("nothing") : "a " + dsl_type_name(j->result_type())) +
                                             "; the tangent of its " + (result.is_void() ? std::string("(no) value") : dsl_type_name(result)) +
                                             " is " + (result.is_void() ? std::string("nothing") : "a " + dsl_type_name(result)));
    fn->custom_tangent = j;
  }
  finish(fn);
  return fn;
}

/// Emits a call of `fn` in the function being traced now (`op`: CallFunc, or GradFunc for its
/// gradient, of type `type`); returns its result (kNoValue for void).
ir::ValueId emit_call(const std::shared_ptr<const ir::Function>& fn, std::vector<ir::ValueId> args, Loc loc,
                      ir::Op op, const ir::Type& type) {
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
  return t.emit(op, type, std::move(args), index, loc);
}

/// The traced function of `state` for argument types `types`, traced now for a new signature.
std::shared_ptr<const ir::Function> function_for(FuncState* state, const ir::Type* types, size_t count,
                                                 const ir::Type& result, FuncParts parts, FuncTrace trace,
                                                 const void* func, Loc def_loc, Loc loc) {
  const std::vector<ir::Type> type_list(types, types + count);
  const std::string sig = signature(type_list);
  std::shared_ptr<const ir::Function> fn;
  {
    enter(state, state->name, sig, loc);
    struct Leave {
      ~Leave() { t_in_progress.pop_back(); }
    } leave;
    std::lock_guard<std::recursive_mutex> lock(state->mutex);
    auto found = state->by_signature.find(sig);
    if (found != state->by_signature.end()) {
      fn = found->second;
    } else {
      fn = trace_function(state->name, type_list, result, parts, trace, func, def_loc);
      state->by_signature[sig] = fn;
    }
  }
  return fn;
}
}  // namespace

ir::ValueId func_call(FuncState* state, const ir::Type* types, const ir::ValueId* args, size_t count,
                      const ir::Type& result, FuncParts parts, FuncTrace trace, const void* func, Loc def_loc,
                      Loc loc) {
  auto fn = function_for(state, types, count, result, parts, trace, func, def_loc, loc);
  return emit_call(fn, std::vector<ir::ValueId>(args, args + count), loc, ir::Op::CallFunc, fn->result_type());
}

ir::ValueId func_grad_call(FuncState* state, const ir::Type* types, const ir::ValueId* args, size_t count,
                           const ir::Type& result, FuncParts parts, FuncTrace trace, const void* func, Loc def_loc,
                           Loc loc) {
  auto fn = function_for(state, types, count, result, parts, trace, func, def_loc, loc);
  const ir::Type r = fn->result_type();
  const std::string what = "grad(" + fn->name + "): ";
  if (!r.is_scalar() || !r.is_float())
    Tracer::get(loc).fail(loc, what + "device function '" + fn->name + "' returns " +
                                   (r.is_void() ? std::string("nothing") : "a " + dsl_type_name(r)) +
                                   "; grad(f) is the gradient of a function that returns one float (Float, Double); "
                                   "for a vector result take grad of each component's function");
  if (ir::takes_gradient(*fn))
    Tracer::get(loc).fail(loc, what + "device function '" + fn->name +
                                   "' itself calls grad(...): second derivatives are not supported");
  return emit_call(fn, std::vector<ir::ValueId>(args, args + count), loc, ir::Op::GradFunc, ir::gradient_type(*fn));
}

ir::Type results_type(const ir::Type* types, size_t count) { return ir::results_struct(types, count); }

ir::ValueId func_param(size_t k, Loc loc) {
  auto& t = Tracer::get(loc);
  return t.emit(ir::Op::Param, t.function().params.at(k).type, {}, int64_t(k), loc);
}

void func_return(ir::ValueId v, Loc loc) {
  auto& t = Tracer::get(loc);
  if (!t.function().is_function)
    t.fail(loc, "Return(value) in a kernel: a kernel returns nothing (write the value to an array; "
                "Return() ends the thread)");
  t.emit(ir::Op::Return, ir::Type::void_type(), {v}, 0, loc);
}

void func_set_result(ir::ValueId v) {
  auto* t = Tracer::current();
  KJIT_CHECK(t, "no function is being traced");
  t->function().body.yield = v;
}

}  // namespace kjit::dsl::detail
