// A module's generated text: header, the prelude it needs, and every kernel's body function
// and entry points, forward and (when enabled) adjoint.
#include <set>

#include "adjoint_emitter.hpp"
#include "adjoint_lanes.hpp"
#include "adjoint_obstacles.hpp"
#include "checkpoint_loops.hpp"
#include "builtin_codegen.hpp"
#include "entry_points.hpp"
#include "forward_emitter.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/serializer.hpp"
#include "kjit/ir/structs.hpp"
#include "generation_errors.hpp"
#include "lane_emitter.hpp"
#include "module_plan.hpp"
#include "prelude_requirements.hpp"
#include "private_adds.hpp"
#include "text_escape.hpp"

namespace kjit::codegen {

std::string CodegenOptions::fingerprint() const {
  return "adjoint=" + std::to_string(enable_adjoint) + ";lines=" + std::to_string(line_directives) +
         ";checkpoints=" + std::to_string(loop_checkpoints) + ";bounds=" + std::to_string(bounds_check) +
         ";span=" + std::to_string(adjoint_span) + (lane_functions ? "" : ";lanes=0") +
         (reverse_transform ? ";reverse_ir=1" : "");
}

namespace {
/// A struct's layout as the FFI shim reads it: name, size, alignment, and each field's name,
/// type, offset (bytes) and, for nested structs, its own layout.
nlohmann::json describe_struct(uint16_t id) {
  const ir::StructInfo& info = ir::struct_info(id);
  nlohmann::json fields = nlohmann::json::array();
  for (const ir::StructField& f : info.fields) {
    nlohmann::json j{{"name", f.name}, {"type", f.type.str()}, {"offset", f.offset},
                     {"scalar", ir::scalar_name(f.type.scalar)}, {"lanes", f.type.lanes()},
                     {"differentiable", f.differentiable()}};
    if (f.type.shape == ir::Shape::Struct) {
      j["scalar"] = nullptr;
      j["struct"] = describe_struct(f.type.struct_id);
    }
    fields.push_back(j);
  }
  return {{"name", info.name}, {"size", info.size}, {"align", info.align}, {"fields", fields}};
}

/// Whether `fn` (or a device function it calls) contains a device-side check.
bool has_checks(const ir::Function& fn) {
  bool any = false;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::Call && builtin_codegen(s.builtin()).takes_site) any = true;  // they report
    if (s.op == ir::Op::CallFunc && has_checks(*fn.callees.at(s.callee()))) any = true;
  });
  return any;
}

/// Bounds-checked mode: from here on, every element access, component access and integer
/// division the emitters write (forward, replay and adjoint, kernels and device functions)
/// calls its checked twin in the prelude's bounds chunk. One switch at the preprocessor
/// covers every emitter, and __LINE__ follows the #line directives, so each report carries
/// the user's line; dim and kj_index are in scope in every generated function.
void emit_bounds_macros(SourceWriter& w) {
  w.line("// bounds-checked mode (ModuleOptions::bounds_check)");
  for (const char* f : {"elem", "extract", "insert", "adj_extract", "adj_insert", "quot", "rem"})
    w.line(std::string("#define ") + f + "(...) " + f + "_checked(dim, kj_index, __LINE__, __VA_ARGS__)");
}
}  // namespace

nlohmann::json describe_kernel(const ir::Function& fn, bool with_adjoint) {
  nlohmann::json params = nlohmann::json::array();
  for (const ir::Param& p : fn.params) {
    nlohmann::json j;
    j["name"] = p.name;
    j["type"] = p.type.str();
    j["ndim"] = p.type.ndim;
    j["element"] = p.type.element().str();
    j["scalar"] = ir::scalar_name(p.type.scalar);
    j["lanes"] = p.type.element().lanes();
    j["differentiable"] = p.type.is_differentiable();
    if (p.type.shape == ir::Shape::Struct) {
      j["scalar"] = nullptr;  // the layout below says what the element holds
      j["struct"] = describe_struct(p.type.struct_id);
    }
    params.push_back(j);
  }
  nlohmann::json k;
  k["name"] = fn.name;
  k["params"] = params;
  k["launch_ndim"] = fn.launch_ndim;
  k["forward"] = entry_name(fn.name, EntryKind::Forward);
  k["adjoint"] = with_adjoint ? nlohmann::json(entry_name(fn.name, EntryKind::Adjoint)) : nlohmann::json();
  k["checks"] = has_checks(fn);  // device-side checks report through the status word
  // Dynamic shared memory each entry point is launched with (the runtime passes it to
  // cuLaunchKernel); the static part is the cubin's, in meta.json's resources. The DSL's
  // kernels use none yet.
  nlohmann::json shared = {{"forward", 0}};
  if (with_adjoint) shared["adjoint"] = 0;
  k["dynamic_shared_bytes"] = shared;
  // The arrays each cpu entry point only adds into (the runtime may privatize them).
  auto adds = [&](EntryKind kind) {
    nlohmann::json list = nlohmann::json::array();
    for (const PrivateAdd& a : private_adds(fn, kind))
      list.push_back({{"param", a.param}, {"adds", a.adds}, {"owned", a.owned}});
    return list;
  };
  nlohmann::json private_targets = {{"forward", adds(EntryKind::Forward)}};
  if (with_adjoint) private_targets["adjoint"] = adds(EntryKind::Adjoint);
  k["private_adds"] = private_targets;
  if (with_adjoint) k["own_adds"] = own_adds(fn);
  return k;
}

std::vector<std::string> entry_points(const std::vector<const ir::Function*>& kernels,
                                      const CodegenOptions& options) {
  std::vector<std::string> out;
  for (const ir::Function* fn : kernels) {
    out.push_back(entry_name(fn->name, EntryKind::Forward));
    if (options.enable_adjoint && adjoint_obstacle(*fn).empty())
      out.push_back(entry_name(fn->name, EntryKind::Adjoint));
  }
  return out;
}

namespace {
nlohmann::json describe_planned(const std::vector<const ir::Function*>& kernels, const CodegenOptions& options,
                                const ModulePlan& plan) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string& obstacle = plan.obstacles[i];
    bool with_adjoint = options.enable_adjoint && obstacle.empty();
    nlohmann::json loops = nlohmann::json::array();
    for (const PlannedLoop& l : plan.kernel_loops[i]) loops.push_back({{"status", l.status}, {"loc", l.loc.str()}});
    nlohmann::json k = describe_kernel(*kernels[i], with_adjoint);
    if (!obstacle.empty()) k["adjoint_error"] = obstacle;
    k["loops"] = loops;
    out.push_back(k);
  }
  return out;
}
}  // namespace

nlohmann::json describe_module(const std::vector<const ir::Function*>& kernels,
                               const CodegenOptions& options) {
  return describe_planned(kernels, options, plan_module(kernels, options));
}

GeneratedModule generate_module(const std::string& module_name,
                                const std::vector<const ir::Function*>& kernels,
                                const CodegenOptions& options) {
  GeneratedModule out;
  const ModulePlan plan = plan_module(kernels, options);
  // Device functions' adjoints (also those grad(f) runs without kernel adjoints) need the
  // adjoint rules' chunks and wrappers.
  PreludeUse planned = prelude_requirements(kernels, plan.lowered, plan.function_adjoints);
  if (options.bounds_check) planned.need("bounds");
  SourceWriter w("kjit_module_" + module_name + ".cu", options.line_directives);
  w.line("// kjit module '" + comment_text(module_name) + "': generated by kjit codegen " +
         std::to_string(kCodegenVersion) + " for NVRTC and the host compiler. Do not edit.");
  if (outline_trig(kernels)) w.line("#define KJ_OUTLINE_TRIG 1  // many float sin/cos/tan calls (prelude math chunk)");
  w.raw(prelude_text(planned));
  std::set<std::string> available = prelude_closure(planned);
  // Before the bounds-checked mode's macros: the wrappers call the rules as the prelude has them.
  if (plan.function_adjoints) w.raw(rule_wrappers(available));

  std::set<std::string> entries;
  emit_structs(w, plan, available.count("atomic") != 0);
  if (options.bounds_check) emit_bounds_macros(w);
  emit_functions(w, plan, options);
  for (size_t kernel_index = 0; kernel_index < kernels.size(); ++kernel_index) {
    const ir::Function* fn = kernels[kernel_index];
    generating("kernel '" + fn->name + "'", fn->loc, &w, [&] {
      Names names(*fn);
      ExprEmitter ex(names, &plan.names);
      w.line("");
      w.line("// kernel " + comment_text(fn->name) + " (" + comment_text(fn->loc.short_str()) + ")");
      const std::string fwd = entry_name(fn->name, EntryKind::Forward);
      if (!entries.insert(fwd).second)
        throw Error(ErrorKind::User, "module '" + module_name + "': kernels '" + fn->name +
                                         "' and another kernel share the entry name " + fwd);
      auto params = entry_params(*fn, names, EntryKind::Forward);
      open_body_function(w, fwd + "_body", params);
      emit_forward_block(w, ex, names, fn->body, 1);
      w.line("}");
      std::string lanes;
      LaneFunction lane_fn{"KJ_LANES", false};
      if (wants_forward_lane_function(*fn, options)) {
        lanes = fwd + "_lanes";
        w.line("#if !KJ_CUDA");
        lane_fn = emit_lane_function(w, plan.lowered.of(*fn), lanes, params, &plan.names);
        w.line("#endif");
      }
      emit_entry_points(w, fwd, fwd + "_body", params, lanes, "", lane_fn.block, lane_fn.fence);
      out.entry_points.push_back(fwd);

      bool with_adjoint = options.enable_adjoint && plan.obstacles[kernel_index].empty();
      if (with_adjoint) {
        const std::string adj = entry_name(fn->name, EntryKind::Adjoint);
        auto adj_params = entry_params(*fn, names, EntryKind::Adjoint);
        const std::vector<PlannedLoop>& planned_loops = plan.kernel_loops[kernel_index];
        const int first = planned_loops.empty() ? 0 : planned_loops.front().status - 1;
        const LoweredFunction& lowered = plan.lowered.of(*fn);
        if (lowered.adjoint_ir) {  // built by the reverse transform: printed as any kernel is
          open_body_function(w, adj + "_body", adj_params);
          emit_adjoint_ir(w, *lowered.adjoint_ir, fn->params.size(), &plan.names, {options.loop_checkpoints, first});
        } else {
          emit_adjoint_kernel_body(w, lowered, options, first, &plan.names, adj + "_span",
                                   [&] { open_body_function(w, adj + "_body", adj_params); });
        }
        w.line("}");
        std::string adj_lanes, adj_threads, block;
        if (wants_lane_function(*fn, options))
          block = emit_adjoint_lane_function(w, plan.lowered.of(*fn), adj + "_lanes", adj + "_threads", adj + "_body", adj_params,
                                             options, first, &plan.names);
        if (!block.empty()) {
          adj_lanes = adj + "_lanes";
          adj_threads = adj + "_threads";
        }
        emit_entry_points(w, adj, adj + "_body", adj_params, adj_lanes, adj_threads, block.empty() ? "KJ_LANES" : block);
        out.entry_points.push_back(adj);
      }
    });
  }
  out.kernels = describe_planned(kernels, options, plan);

  out.text = w.text();
  out.source_map = std::move(w.source_map());
  return out;
}

std::string module_identity(const std::string& module_name,
                            const std::vector<const ir::Function*>& kernels,
                            const CodegenOptions& options) {
  std::string id = "kjit-codegen/" + std::to_string(kCodegenVersion) + "\ncodegen-sources " +
                   std::string(codegen_sources_hash()) + "\nprelude " + prelude_hash() +
                   "\noptions " + options.fingerprint() + "\nmodule " + module_name + "\n";
  for (const ir::Function* fn : kernels) id += ir::serialize(*fn) + "\n";
  return id;
}

}  // namespace kjit::codegen
