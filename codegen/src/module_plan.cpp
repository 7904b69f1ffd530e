// Module planning: device functions, user structs and loop status codes; and the emission
// of the structs and functions.
#include "module_plan.hpp"

#include <functional>
#include <set>

#include "adjoint_emitter.hpp"
#include "adjoint_obstacles.hpp"
#include "expr_emitter.hpp"
#include "forward_emitter.hpp"
#include "generation_errors.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/serializer.hpp"
#include "kjit/ir/structs.hpp"
#include "text_escape.hpp"

namespace kjit::codegen {

namespace {

/// Adds the functions `fn` calls (through its body, adjoint and replay) after their callees.
void collect_functions(const ir::Function& fn, ModulePlan& plan, std::map<std::string, std::string>& by_identity,
                       std::set<const ir::Function*>& seen) {
  std::vector<const ir::Function*> parts{&fn};
  if (fn.custom_adjoint) parts.push_back(fn.custom_adjoint.get());
  if (fn.custom_replay) parts.push_back(fn.custom_replay.get());
  for (const ir::Function* part : parts) {
    for (const auto& callee : part->callees) {
      if (!seen.insert(callee.get()).second) continue;
      collect_functions(*callee, plan, by_identity, seen);
      std::string id = ir::serialize(*callee);
      auto it = by_identity.find(id);
      if (it != by_identity.end()) {
        plan.names[callee.get()] = it->second;
        continue;
      }
      std::string name = "kjf_" + std::to_string(plan.functions.size());
      by_identity.emplace(id, name);
      plan.names[callee.get()] = name;
      plan.functions.push_back(callee.get());
    }
  }
}

void collect_structs(const ir::Type& t, std::vector<uint16_t>& out) {
  if (t.shape != ir::Shape::Struct) return;
  const ir::StructInfo& info = ir::struct_info(t.struct_id);
  if (!info.prelude_chunk.empty()) return;
  for (uint16_t id : out)
    if (id == t.struct_id) return;
  for (const ir::StructField& f : info.fields) collect_structs(f.type, out);
  out.push_back(t.struct_id);
}

void collect_structs(const ir::Function& fn, std::vector<uint16_t>& out) {
  for (const ir::Param& p : fn.params) collect_structs(p.type.element(), out);
  for (const ir::Type& t : fn.values) collect_structs(t.element(), out);
  for (const ir::LocalVar& v : fn.vars) collect_structs(v.type, out);
}

/// The functions `fn` reaches, transitively (by plan name, each once).
void reachable(const ir::Function& fn, const ModulePlan& plan, std::vector<const ir::Function*>& out,
               std::set<std::string>& seen) {
  for (const auto& c : fn.callees) {
    const std::string& name = plan.names.at(c.get());
    if (!seen.insert(name).second) continue;
    reachable(*c, plan, out, seen);
    if (c->custom_adjoint) reachable(*c->custom_adjoint, plan, out, seen);
    if (c->custom_replay) reachable(*c->custom_replay, plan, out, seen);
    out.push_back(c.get());
  }
}

bool by_reference(const ir::Type& t) { return !t.is_scalar(); }

std::string param_decl(const ir::Type& t, const std::string& name) {
  return by_reference(t) ? "const " + t.cpp() + "& " + name : t.cpp() + " " + name;
}

}  // namespace

ModulePlan plan_module(const std::vector<const ir::Function*>& kernels, const CodegenOptions& options) {
  ModulePlan plan;
  plan.lowered = lower_module(kernels, options);
  plan.function_adjoints = function_adjoints(kernels, options);
  std::map<std::string, std::string> by_identity;
  std::set<const ir::Function*> seen;
  for (const ir::Function* k : kernels) {
    collect_functions(*k, plan, by_identity, seen);
    collect_structs(*k, plan.structs);
  }
  auto note_gradients = [&](const ir::Function& fn) {
    ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
      if (s.op == ir::Op::GradFunc) plan.gradients.insert(plan.names.at(fn.callees.at(s.callee()).get()));
    });
  };
  for (const ir::Function* k : kernels) note_gradients(*k);
  for (const ir::Function* f : plan.functions) {
    note_gradients(*f);
    if (f->custom_adjoint) note_gradients(*f->custom_adjoint);  // Warp allows wp.grad in a func_grad
    if (f->custom_replay) note_gradients(*f->custom_replay);
    collect_structs(*f, plan.structs);
    if (f->custom_adjoint) collect_structs(*f->custom_adjoint, plan.structs);
    if (f->custom_replay) collect_structs(*f->custom_replay, plan.structs);
  }
  // Loop status codes: every kernel's own loops in order, then the functions' loops.
  int next = 0;
  std::vector<bool> with_adjoint;
  for (const ir::Function* k : kernels) {
    generating("kernel '" + k->name + "'", k->loc, nullptr, [&] {
      const LoweredFunction& lowered = plan.lowered.of(*k);
      plan.obstacles.push_back(lowered.adjoint_obstacle);
      with_adjoint.push_back(options.enable_adjoint && lowered.adjoint_obstacle.empty());
      std::vector<PlannedLoop> loops;
      if (with_adjoint.back())
        for (const AdjointLoop& l : lowered.adjoint_loops.list) loops.push_back({++next, l.stmt->loc});
      plan.kernel_loops.push_back(loops);
    });
  }
  std::map<const ir::Function*, std::vector<PlannedLoop>> function_loops;
  for (const ir::Function* f : plan.functions) {
    plan.function_first_loop[f] = next;
    if (!plan.function_adjoints || !function_reversed(*f)) continue;
    generating("device function '" + f->name + "'", f->loc, nullptr, [&] {
      for (const AdjointLoop& l : plan.lowered.of(*f).adjoint_loops.list) function_loops[f].push_back({++next, l.stmt->loc});
    });
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!with_adjoint[i]) continue;
    std::vector<const ir::Function*> reached;
    std::set<std::string> names;
    reachable(*kernels[i], plan, reached, names);
    for (const ir::Function* f : reached) {
      const ir::Function* canonical = nullptr;
      for (const ir::Function* g : plan.functions)
        if (plan.names.at(g) == plan.names.at(f)) canonical = g;
      for (const PlannedLoop& l : function_loops[canonical]) plan.kernel_loops[i].push_back(l);
    }
  }
  return plan;
}

void emit_structs(SourceWriter& w, const ModulePlan& plan, bool with_atomics) {
  for (uint16_t id : plan.structs) {
    const ir::StructInfo& info = ir::struct_info(id);
    const std::string name = info.cpp_name.substr(info.cpp_name.rfind("::") + 2);
    w.line("");
    w.line("// struct " + info.name);
    w.line("namespace kj {");
    w.line("struct " + name + " {");
    for (const ir::StructField& f : info.fields) w.line(f.type.cpp() + " " + f.name + ";", 1);
    w.line("};");
    const std::string message = "\"kjit: struct " + info.name + " is laid out differently from the host's\"";
    w.line("static_assert(sizeof(" + name + ") == " + std::to_string(info.size) + " && alignof(" + name + ") == " +
           std::to_string(info.align) + ", " + message + ");");
    std::string offsets;  // NVRTC has no offsetof; the host compiler checks each field
    for (const ir::StructField& f : info.fields)
      offsets += (offsets.empty() ? "" : " && ") + std::string("__builtin_offsetof(") + name + ", " + f.name + ") == " + std::to_string(f.offset);
    if (!offsets.empty()) {
      w.line("#if !KJ_CUDA");
      w.line("static_assert(" + offsets + ", " + message + ");");
      w.line("#endif");
    }
    for (const ir::StructField& f : info.fields)
      w.line("KJ_FUNC " + name + " " + name + "__set_" + f.name + "(" + name + " s, const " + f.type.cpp() +
             "& x) { s." + f.name + " = x; return s; }");
    std::string add = "KJ_FUNC " + name + "& operator+=(" + name + "& a, const " + name + "& b) {";
    for (const ir::StructField& f : info.fields)
      if (f.differentiable()) add += " a." + f.name + " += b." + f.name + ";";
    w.line(add + " return a; }");
    if (with_atomics) {
      std::string atomic = "KJ_FUNC " + name + " atomic_add(" + name + "* p, const " + name + "& v) { " + name + " old = *p;";
      for (const ir::StructField& f : info.fields)
        if (f.differentiable()) atomic += " atomic_add(&p->" + f.name + ", v." + f.name + ");";
      w.line(atomic + " return old; }");
    }
    w.line("}  // namespace kj");
  }
}

namespace {
/// Emits device function `f`: its forward body, its replay and (when it has one) its adjoint.
void emit_function(SourceWriter& w, const ModulePlan& plan, const CodegenOptions& options, bool with_adjoint,
                   const ir::Function* f) {
  const std::string& name = plan.names.at(f);
  const ir::Type result = f->result_type();
  const std::string R = result.is_void() ? "void" : result.cpp();
  auto open = [&](const std::string& ret, const std::string& fname, const ir::Function& g) {
    Names n(g);
    std::string sig = "static KJ_FUNC_BIG " + ret + " " + fname + "(const kj::launch_bounds_t& dim, kj_int64 kj_index";
    for (size_t i = 0; i < g.params.size(); ++i) sig += ", " + param_decl(g.params[i].type, n.param(i));
    return sig;
  };
  auto body = [&](const ir::Function& g, ForwardMode mode) {
    Names n(g);
    ExprEmitter ex(n, &plan.names);
    emit_forward_block(w, ex, n, g.body, 1, mode);
    if (g.body.yield != ir::kNoValue) w.line("return " + n.value(g.body.yield) + ";", 1);
  };
  w.line("");
  w.line("// device function " + comment_text(f->name) + " (" + comment_text(f->loc.short_str()) + ")");
  w.line(open(R, name, *f) + ") {");
  body(*f, ForwardMode::Run);
  w.line("}");
  const ir::Function& replay = f->custom_replay ? *f->custom_replay : *f;
  w.line(open(R, name + "_replay", *f) + ") {");
  if (f->custom_replay) {  // the user's replay names its parameters itself
    Names fn_names(*f), rn(replay);
    for (size_t i = 0; i < f->params.size(); ++i)
      if (rn.param(i) != fn_names.param(i)) w.line(param_decl(f->params[i].type, rn.param(i)) + " = " + fn_names.param(i) + ";", 1);
  }
  body(replay, ForwardMode::Replay);
  w.line("}");
  if (!with_adjoint || !function_has_adjoint(*f)) return;
  Names n(*f);
  std::string sig = open("void", "adj_" + name, *f);
  if (!result.is_void()) sig += ", const " + R + "& ret";
  for (size_t i = 0; i < f->params.size(); ++i) {
    const ir::Type& t = f->params[i].type;
    if (!t.is_differentiable()) continue;
    sig += t.is_array() ? ", const " + t.cpp() + "& " + n.adj_param(i) : ", " + t.cpp() + "& " + n.adj_param(i);
  }
  if (!result.is_void() && result.is_differentiable()) sig += ", const " + R + "& " + kAdjointOfResult;
  w.line(sig + ") {");
  if (f->custom_adjoint) {
    // The user adjoint's parameters (see trace_grad in kjit/dsl/functions.hpp): the
    // function's own, then adj_ret when it returns a value, then one adjoint array per array
    // parameter. Bind each to what this adjoint function received.
    const ir::Function& g = *f->custom_adjoint;
    Names gn(g);
    size_t next = f->params.size();
    if (!result.is_void()) {
      const std::string bound = result.is_differentiable() ? std::string(kAdjointOfResult) : R + "{}";
      w.line("const " + R + " " + gn.param(next++) + " = " + bound + ";", 1);
    }
    for (size_t i = 0; i < f->params.size(); ++i) {
      const ir::Type& t = f->params[i].type;
      if (!t.is_array()) continue;
      KJIT_CHECK(next < g.params.size(), "the user adjoint of " + f->name + " lacks an adjoint array");
      const std::string bound = t.is_differentiable() ? n.adj_param(i) : t.cpp() + "{}";
      w.line("const " + t.cpp() + " " + gn.param(next++) + " = " + bound + ";", 1);
    }
    ExprEmitter ex(gn, &plan.names);
    emit_forward_block(w, ex, gn, g.body, 1, ForwardMode::UserAdjoint);
    for (size_t i = 0; i < f->params.size() && i < f->out_vars.size(); ++i)
      if (f->out_vars[i] >= 0 && f->params[i].type.is_differentiable() && !f->params[i].type.is_array())
        w.line(n.adj_param(i) + " += " + gn.var(f->out_vars[i]) + ";", 1);
  } else if (const LoweredFunction& lowered = plan.lowered.of(*f); lowered.adjoint_ir) {  // the reverse transform's
    emit_adjoint_ir(w, *lowered.adjoint_ir, f->params.size(), &plan.names,
                    {options.loop_checkpoints, plan.function_first_loop.at(f)});
  } else {
    emit_adjoint_body(w, lowered, options, plan.function_first_loop.at(f), &plan.names);
  }
  w.line("}");
}
}  // namespace

namespace {
/// Emits `grad_<name>` of device function `f` (grad(f) in forward code): its adjoint run from
/// zeroed argument adjoints with adj_ret = 1. The result passed for `ret` is a zero: an
/// adjoint replays its own forward values and never reads it.
void emit_gradient(SourceWriter& w, const ModulePlan& plan, const ir::Function& f) {
  const std::string& name = plan.names.at(&f);
  const ir::Type result = f.result_type(), gradient = ir::gradient_type(f);
  Names n(f);
  std::string sig = "static KJ_FUNC_BIG " + gradient.cpp() + " grad_" + name + "(const kj::launch_bounds_t& dim, kj_int64 kj_index";
  std::string call = "adj_" + name + "(dim, kj_index", parts;
  for (size_t i = 0; i < f.params.size(); ++i) {
    sig += ", " + param_decl(f.params[i].type, n.param(i));
    call += ", " + n.param(i);
  }
  call += ", " + result.cpp() + "{}";
  w.line("");
  w.line("// the gradient of device function " + comment_text(f.name) + " (grad(f) in forward code)");
  w.line(sig + ") {");
  for (size_t i = 0; i < f.params.size(); ++i) {
    const std::string g = "kj_grad_" + std::to_string(i);
    w.line(f.params[i].type.cpp() + " " + g + "{};", 1);
    if (f.params[i].type.is_differentiable()) call += ", " + g;
    parts += (i ? ", " : "") + g;
  }
  if (function_has_adjoint(f)) w.line(call + ", " + result.cpp() + "(1));", 1);
  w.line("return " + (f.params.size() == 1 ? parts : gradient.cpp() + "{" + parts + "}") + ";", 1);
  w.line("}");
}
}  // namespace

void emit_functions(SourceWriter& w, const ModulePlan& plan, const CodegenOptions& options) {
  for (const ir::Function* f : plan.functions)
    generating("device function '" + f->name + "'", f->loc, &w, [&] {
      emit_function(w, plan, options, plan.function_adjoints, f);
      if (plan.gradients.count(plan.names.at(f))) emit_gradient(w, plan, *f);
    });
}

}  // namespace kjit::codegen
