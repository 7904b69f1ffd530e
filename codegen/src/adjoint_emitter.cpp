// Adjoint code generation: forward replay, then the reverse sweep, with checkpointed replay
// of dynamic loops.
#include "adjoint_emitter.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "checkpoint_loops.hpp"
#include "expr_emitter.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/type.hpp"
#include "reverse_rules.hpp"
#include "sweep_spans.hpp"

namespace kjit::codegen {

// ---------------------------------------------------------------------------------------------
namespace {

class AdjointEmitter {
 public:
  AdjointEmitter(SourceWriter& w, const LoweredFunction& fn, const CodegenOptions& o, int first_loop,
                 const FunctionNames* functions)
      : w_(w), fn_(fn.jumps_lowered), spans_(fn.sweep_spans), n_(fn_), ex_(n_, functions),
        rules_(fn_, n_, ex_),
        work_(rules_, [this](const AdjTarget& t) { return t.var ? var_differentiable(t.id) : differentiable(ir::ValueId(t.id)); }),
        o_(o), loops_(fn.adjoint_loops.numbered_from(first_loop)) {
    check_loop_checkpoints(o.loop_checkpoints);
  }

  /// Writes the body (the caller opened its function), or with `open_body` first the
  /// functions of a long body's spans, then the body function's opening and the body.
  void run(const std::string& span_prefix, const std::function<void()>& open_body) {
    analyze(fn_.body);
    const std::vector<SweepSpan>& spans = spans_;
    if (spans.size() > 1) {
      for (const SweepSpan& span : spans) span_locals_.insert(span.locals.begin(), span.locals.end());
    }
    if (open_body) {
      if (spans.size() > 1) emit_span_functions(spans, span_prefix);
      open_body();
    }
    declare();
    w_.line("// forward replay (no stores, atomics or prints: the forward launch did those)", 1);
    if (spans.size() == 1) replay(fn_.body, 1);
    else
      for (size_t j = 0; j < spans.size(); ++j) replay_span(spans[j], j);
    w_.line("// reverse sweep", 1);
    // A thread whose loop ran past its checkpoint bound contributes no gradient at all (the
    // launch reports the error): a partial sweep would hand out wrong numbers.
    const int in = loops_.list.empty() ? 1 : 2;
    if (in == 2) w_.line("if (!kj_overflow) {", 1);
    if (fn_.is_function && fn_.body.yield != ir::kNoValue && differentiable(fn_.body.yield)) {
      declare_adjoint(fn_.body.yield, in);
      w_.line(adj(fn_.body.yield) + " += " + kAdjointOfResult + ";", in);
    }
    reverse_spans(spans, in);
    if (in == 2) w_.line("}", 1);
    // Hand the value parameters' adjoints back: a device function's to its caller, a
    // kernel's to its entry point, which sums them over the launch (entry_points.hpp).
    for (const auto& [value, index] : rules_.param_of()) {
      if (!differentiable(value)) continue;
      const ir::Type sum = ir::adjoint_sum_type(fn_.type_of(value));
      const bool widen = !fn_.is_function && sum != fn_.type_of(value);
      w_.line(n_.adj_param(index) + " += " + (widen ? "kj::cast<" + sum.cpp() + ">(" + adj(value) + ")" : adj(value)) + ";", 1);
    }
  }

 private:
  // ----- analysis --------------------------------------------------------------------------
  void analyze(const ir::Block& b) {
    for (const ir::Stmt& s : b.stmts) {
      if (s.result != ir::kNoValue) {
        defined_.insert(s.result);
        def_block_[s.result] = &b;
      }
      for (const ir::Block& r : s.regions) {
        block_args_.insert(r.args.begin(), r.args.end());
        analyze(r);
      }
    }
  }

  bool differentiable(ir::ValueId v) const { return rules_.differentiable(v); }
  bool var_differentiable(int64_t var) const { return rules_.var_differentiable(var); }
  const std::string& v(ir::ValueId id) const { return n_.value(id); }
  std::string adj(ir::ValueId id) const { return n_.adj_value(id); }
  std::string type(ir::ValueId id) const { return fn_.type_of(id).cpp(); }
  std::string var_type(int64_t var) const { return fn_.vars.at(size_t(var)).type.cpp(); }
  // ----- declarations ----------------------------------------------------------------------
  /// Values at the top; the adjoints of parameters (handed back after the sweep) and of block
  /// arguments too. Every other adjoint is declared where the sweep first reaches it
  /// (declare_adjoint): an adjoint zeroed at the top and first touched thousands of
  /// statements later is live through every block in between, and that made NVVM's time grow
  /// with the square of the kernel (docs/BENCHMARKS.md, compile time against kernel size).
  void declare() {
    for (ir::ValueId id = 0; id < fn_.values.size(); ++id) {
      bool is_param = rules_.param_of().count(id) != 0;
      bool defined = defined_.count(id) != 0 || is_block_arg(id);
      if (!defined || span_locals_.count(id)) continue;
      if (!is_param) w_.line(type(id) + " " + v(id) + ";", 1);
      if ((is_param || is_block_arg(id)) && differentiable(id)) declare_adjoint(id, 1);
    }
    for (size_t var = 0; var < fn_.vars.size(); ++var) {
      w_.line(var_type(int64_t(var)) + " " + n_.var(int64_t(var)) + " = {};", 1);
      if (var_differentiable(int64_t(var)))
        w_.line(var_type(int64_t(var)) + " " + n_.adj_var(int64_t(var)) + " = {};", 1);
    }
    if (!loops_.list.empty()) {
      w_.line("bool kj_overflow = false;", 1);
    }
    for (const AdjointLoop& L : loops_.list) {
      emit_loop_declarations(w_, L, n_, o_.loop_checkpoints, 1);
      for (int64_t var : L.readonly) w_.line(var_type(var) + " " + L.ro(n_, var) + ";", 1);
    }
  }

  bool is_block_arg(ir::ValueId id) const { return block_args_.count(id) != 0; }

  /// Declares the adjoint of `id`, zero, unless it already is; on the line of `loc` when known
  /// (the statement whose reverse needs it: no #line directive in between).
  void declare_adjoint(ir::ValueId id, int indent, const ir::SourceLoc& loc = ir::SourceLoc()) {
    if (!differentiable(id) || !adj_declared_.insert(id).second) return;
    w_.user_line(type(id) + " " + adj(id) + " = {};", indent, loc);
  }

  /// For each statement of `b`, the values defined in `b` whose adjoints the sweep first
  /// touches when it reverses that statement (reverse_rules.hpp).
  std::vector<std::vector<ir::ValueId>> first_touches(const ir::Block& b) const {
    return codegen::first_touches(b, [&](ir::ValueId id) {
      auto d = def_block_.find(id);
      return d != def_block_.end() && d->second == &b && rules_.param_of().count(id) == 0;
    });
  }

  // ----- forward replay --------------------------------------------------------------------
  void replay(const ir::Block& b, int indent) { replay(b, 0, b.stmts.size(), indent); }

  /// Replays statements [begin, end) of `b`.
  void replay(const ir::Block& b, size_t begin, size_t end, int indent) {
    for (size_t i = begin; i < end; ++i) {
      const ir::Stmt& s = b.stmts[i];
      if (s.op == ir::Op::Param) continue;
      if (s.op == ir::Op::CallFunc) {  // through the function's replay: no side effects twice
        if (!s.type.is_void()) w_.user_line(v(s.result) + " = " + ex_.call_function(s, true) + ";", indent, s.loc);
        continue;
      }
      if (s.op == ir::Op::Call && s.type.is_void()) continue;  // side effects: done forward
      if (ExprEmitter::is_expression(s)) {
        w_.user_line(v(s.result) + " = " + ex_.expr(s) + ";", indent, s.loc);
        continue;
      }
      switch (s.op) {
        case ir::Op::StoreVar:
          w_.user_line(n_.var(s.var()) + " = " + v(s.args[0]) + ";", indent, s.loc);
          break;
        case ir::Op::If:
          w_.user_line("if (" + v(s.args[0]) + ") {", indent, s.loc);
          replay(s.regions[0], indent + 1);
          if (!s.regions[1].stmts.empty()) {
            w_.user_line("} else {", indent, s.loc);
            replay(s.regions[1], indent + 1);
          }
          w_.user_line("}", indent, s.loc);
          break;
        case ir::Op::For:
        case ir::Op::While:
          replay_loop(s, indent);
          break;
        case ir::Op::DeclVar:
        case ir::Op::ArrayStore:   // effects belong to the forward launch
        case ir::Op::ArrayAtomic:
        case ir::Op::Print:
          break;
        case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:  // lowered to flags
        case ir::Op::Const: case ir::Op::ThreadId: case ir::Op::LaunchDim: case ir::Op::Cast:
        case ir::Op::Construct: case ir::Op::Extract: case ir::Op::Insert: case ir::Op::LoadVar:
        case ir::Op::ArrayLoad: case ir::Op::ArrayShape: case ir::Op::Param: case ir::Op::Call:
        case ir::Op::CallFunc: case ir::Op::TangentCall:  // handled above
        case ir::Op::GradFunc:  // refused by adjoint_obstacle (function_has_adjoint for functions)
        case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
        case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
          KJIT_CHECK(false, std::string("adjoint replay reached ") + ir::op_name(s.op));
          break;
      }
    }
  }

  std::string for_condition(const ir::Stmt& s) const {
    return codegen::for_condition(v(s.regions[0].args.at(0)), v(s.args[1]), v(s.args[2]));
  }

  /// Runs the loop forward, keeping at most C checkpoints of its changing state: one every
  /// `stride` iterations, the stride doubling (and every other checkpoint dropped) when they
  /// run out. Past C*C iterations the bound is exceeded: the loop reports it and the thread's
  /// whole reverse sweep is skipped; the runtime turns the report into an error.
  void replay_loop(const ir::Stmt& s, int indent) {
    const AdjointLoop& L = loops_.of(s);
    const ir::SourceLoc& loc = s.loc;
    w_.user_line(loop_start(L), indent, loc);
    for (int64_t var : L.readonly) w_.user_line(L.ro(n_, var) + " = " + n_.var(var) + ";", indent, loc);
    if (s.op == ir::Op::For) {
      const std::string i = v(s.regions[0].args.at(0));
      w_.user_line("KJ_NO_UNROLL", indent, loc);
      w_.user_line("for (" + i + " = " + v(s.args[0]) + "; " + for_condition(s) + "; " + i + " += " +
                       v(s.args[2]) + ") {", indent, loc);
    } else {
      w_.user_line("KJ_NO_UNROLL", indent, loc);
      w_.user_line("for (;;) {", indent, loc);
      replay(s.regions[0], indent + 1);
      w_.user_line("if (!" + v(s.regions[0].yield) + ") break;", indent + 1, loc);
    }
    const int in = indent + 1;
    emit_checkpoint_step(w_, L, n_, o_.loop_checkpoints, live_, loop_overflow(L, "kj_overflow"), in, loc);
    replay(s.regions[s.op == ir::Op::For ? 0 : 1], in);
    w_.user_line("++" + L.name("n") + ";", in, loc);
    w_.user_line("}", indent, loc);
  }

  // ----- reverse sweep ---------------------------------------------------------------------
  void reverse(const ir::Block& b, int indent) { reverse(b, first_touches(b), 0, b.stmts.size(), indent); }

  /// Reverses statements [begin, end) of `b`, last first; `touches` is first_touches(b).
  void reverse(const ir::Block& b, const std::vector<std::vector<ir::ValueId>>& touches, size_t begin,
               size_t end, int indent) {
    for (size_t i = end; i-- > begin;) {
      for (ir::ValueId id : touches[i]) declare_adjoint(id, indent, b.stmts[i].loc);
      reverse_stmt(b.stmts[i], indent);
    }
  }

  // ----- spans of a long body -------------------------------------------------------------
  /// The sweep of a long body, span by span (sweep_spans.hpp), last first: each span runs
  /// forward again from its checkpoint right before its reverse, so that a value lives from
  /// its definition to its adjoint rule within one span. Replayed once and swept back, every
  /// value of the body would be live through the whole sweep, and GCC's register allocation
  /// and SSA updates grew with the square of the kernel (docs/BENCHMARKS.md, compile time
  /// against kernel size). A span's own values are declared in its blocks, not at the top:
  /// GCC's front end saves every local name in scope at each call of a function template, so
  /// thousands of them in scope made parsing quadratic too. The price: a long kernel's
  /// adjoint runs its forward pass twice.
  void reverse_spans(const std::vector<SweepSpan>& spans, int indent) {
    if (spans.size() == 1) return reverse(fn_.body, indent);
    const std::vector<std::vector<ir::ValueId>> touches = first_touches(fn_.body);
    for (size_t j = spans.size(); j-- > 0;) {
      const SweepSpan& span = spans[j];
      // The adjoints of its inputs leave the span's block: each is declared before the block
      // of the last span (in program order) that uses it, the first such block of the sweep.
      for (ir::ValueId id : span.inputs) declare_adjoint(id, indent);
      if (!span_calls_.empty()) {
        w_.line(span_calls_.at(j) + ";  // span " + std::to_string(j) + " again, from its checkpoint, and back", indent);
        continue;
      }
      w_.line("{  // span " + std::to_string(j) + " again, from its checkpoint, and back", indent);
      sweep_span(span, j, touches, indent + 1);
      w_.line("}", indent);
    }
  }

  /// Span `j` run forward again from its checkpoint, and back.
  void sweep_span(const SweepSpan& span, size_t j, const std::vector<std::vector<ir::ValueId>>& touches,
                  int indent) {
    declare_span_locals(span, indent, true);
    for (int64_t var : span.vars_read) w_.line(n_.var(var) + " = kj::opaque(" + checkpoint_name(j, var) + ");", indent);
    for (ir::ValueId id : span.inputs) w_.line(v(id) + " = kj::opaque(" + v(id) + ");", indent);
    replay(fn_.body, span.begin, span.end, indent);
    reverse(fn_.body, touches, span.begin, span.end, indent);
  }

  // ----- spans out of line ------------------------------------------------------------------
  /// How a name of the body's top level enters a span function: by value, by reference
  /// copied into a local and back (what the sweep updates), or by reference as it is (arrays:
  /// kernel arrays through a template parameter, a loop's checkpoint slots as arrays).
  enum class Pass { Value, InOut, KernelArray, SlotArray };
  struct TopName {
    std::string type;  ///< C++ type (a slot array's element type with its extent: "float[8]")
    Pass pass;
  };

  /// Every name the body declares at its top level or takes as a parameter, as the span
  /// functions may need it (the same names declare(), reverse_spans and the signature write).
  std::map<std::string, TopName> top_names(const std::vector<SweepSpan>& spans) const {
    std::map<std::string, TopName> top;
    top["dim"] = {"const kj::launch_bounds_t&", Pass::Value};
    top["kj_index"] = {"kj_int64", Pass::Value};
    for (const auto& [value, index] : rules_.param_of()) {
      const ir::Type& t = fn_.type_of(value);
      top[v(value)] = {t.cpp(), t.is_array() ? Pass::KernelArray : Pass::Value};
      if (t.is_array()) top[n_.adj_param(index)] = {"", Pass::KernelArray};
      else top[n_.adj_param(index)] = {ir::adjoint_sum_type(t).cpp(), Pass::InOut};
      if (differentiable(value)) top[adj(value)] = {type(value), Pass::InOut};
    }
    for (ir::ValueId id = 0; id < fn_.values.size(); ++id) {
      const bool defined = defined_.count(id) != 0 || is_block_arg(id);
      if (!defined || span_locals_.count(id) || rules_.param_of().count(id)) continue;
      top[v(id)] = {type(id), Pass::Value};
      if (is_block_arg(id) && differentiable(id)) top[adj(id)] = {type(id), Pass::InOut};
    }
    for (const SweepSpan& span : spans)
      for (ir::ValueId id : span.inputs)
        if (differentiable(id)) top[adj(id)] = {type(id), Pass::InOut};
    for (size_t var = 0; var < fn_.vars.size(); ++var) {
      top[n_.var(int64_t(var))] = {var_type(int64_t(var)), Pass::InOut};
      if (var_differentiable(int64_t(var))) top[n_.adj_var(int64_t(var))] = {var_type(int64_t(var)), Pass::InOut};
    }
    if (!loops_.list.empty()) top["kj_overflow"] = {"bool", Pass::InOut};
    const std::string C = "[" + std::to_string(o_.loop_checkpoints) + "]";
    for (const AdjointLoop& L : loops_.list) {
      for (const char* what : {"n", "stride", "count"}) top[L.name(what)] = {"kj_int32", Pass::InOut};
      top[L.name("ovf")] = {"bool", Pass::InOut};
      for (int64_t var : L.state) {
        top[L.ckpt(n_, var)] = {var_type(var) + C, Pass::SlotArray};
        top[L.seg(n_, var)] = {var_type(var) + C, Pass::SlotArray};
      }
      for (int64_t var : L.readonly) top[L.ro(n_, var)] = {var_type(var), Pass::InOut};
    }
    for (size_t j = 0; j < spans.size(); ++j)
      for (int64_t var : spans[j].vars_read) top[checkpoint_name(j, var)] = {var_type(var), Pass::Value};
    return top;
  }

  /// Each span's sweep as a function of its own, written before the body function: what it
  /// uses of the body's top level (span_names) it takes as parameters (top_names). Its values
  /// and adjoints are its own locals, so the function compiles like a short kernel; the body
  /// keeps the checkpoints and calls them last first.
  void emit_span_functions(const std::vector<SweepSpan>& spans, const std::string& prefix) {
    const std::map<std::string, TopName> top = top_names(spans);
    std::set<ir::ValueId> top_adjoints;  // declared by the body: parameters in here
    for (ir::ValueId id = 0; id < fn_.values.size(); ++id)
      if (top.count(adj(id)) && top.at(adj(id)).pass == Pass::InOut) top_adjoints.insert(id);
    const std::vector<std::vector<ir::ValueId>> touches = first_touches(fn_.body);
    span_calls_.assign(spans.size(), "");
    for (size_t j = 0; j < spans.size(); ++j) {
      const std::string name = prefix + std::to_string(j);
      std::string params, args, in, out, templates;
      int arrays = 0;
      for (const std::string& id : span_names(spans[j], j)) {
        auto t = top.find(id);
        if (t == top.end()) continue;
        const TopName& n = t->second;
        std::string param;
        switch (n.pass) {
          case Pass::Value: param = n.type + " " + id; break;
          case Pass::InOut:
            param = n.type + "& kj_r_" + id;
            in += n.type + " " + id + " = kj_r_" + id + "; ";
            out += "kj_r_" + id + " = " + id + "; ";
            break;
          case Pass::KernelArray: {
            const std::string a = "KJ_A" + std::to_string(arrays++);
            templates += (templates.empty() ? "class " : ", class ") + a;
            param = "const " + a + "& " + id;
            break;
          }
          case Pass::SlotArray: {
            const size_t bracket = n.type.find('[');
            param = n.type.substr(0, bracket) + " (&" + id + ")" + n.type.substr(bracket);
            break;
          }
        }
        params += (params.empty() ? "" : ", ") + param;
        args += (args.empty() ? "" : ", ") + id;
      }
      w_.line("");
      w_.line((templates.empty() ? "" : "template <" + templates + "> ") + "KJ_SPAN_FUNC void " + name + "(" + params +
              ") {  // span " + std::to_string(j) + " again, from its checkpoint, and back");
      w_.line(in, 1);
      adj_declared_ = top_adjoints;
      sweep_span(spans[j], j, touches, 1);
      w_.line(out, 1);
      w_.line("}");
      span_calls_[j] = name + "(" + args + ")";
    }
    adj_declared_.clear();
  }

  /// The names of the body's top level that span `j`'s function may use (those of top_names
  /// it then takes as parameters): what its replay reads and writes (values, variables, its
  /// loops' counters and slots, its checkpoint) and what its sweep's rules add to or read
  /// (adjoints of values and variables, adjoint arrays), from the IR, as replay and
  /// reverse_stmt write them.
  std::set<std::string> span_names(const SweepSpan& span, size_t j) {
    std::set<std::string> out{"dim", "kj_index"};  // bounds-checked mode's macros use both
    for (int64_t var : span.vars_read) out.insert(checkpoint_name(j, var));
    for (ir::ValueId id : span.inputs) out.insert(v(id));  // made opaque (sweep_span)
    auto replayed = [&](const ir::Stmt& s) {  // one statement, its regions' arguments and yields
      for (const ir::Block& r : s.regions) {
        for (ir::ValueId a : r.args) out.insert(v(a));
        if (r.yield != ir::kNoValue) out.insert(v(r.yield));
      }
      if (s.op == ir::Op::Param || s.op == ir::Op::ArrayStore || s.op == ir::Op::ArrayAtomic || s.op == ir::Op::Print ||
          (s.op == ir::Op::Call && s.type.is_void()))
        return;  // not replayed: the forward launch had their effects
      if (s.result != ir::kNoValue) out.insert(v(s.result));
      for (ir::ValueId a : s.args) out.insert(v(a));
      if (s.op == ir::Op::LoadVar || s.op == ir::Op::StoreVar) out.insert(n_.var(s.var()));
      if (s.op == ir::Op::For || s.op == ir::Op::While) {
        const AdjointLoop& L = loops_.of(s);
        out.insert("kj_overflow");
        for (const char* what : {"n", "stride", "count", "ovf"}) out.insert(L.name(what));
        for (int64_t var : L.state) out.insert({L.ckpt(n_, var), n_.var(var)});
        for (int64_t var : L.readonly) out.insert({L.ro(n_, var), n_.var(var)});
      }
    };
    std::function<void(const ir::Stmt&)> reversed = [&](const ir::Stmt& s) {
      if (ir::op_info(s.op).adjoint == ir::OpAdjoint::Regions) {
        if (!work_.has_work(s)) return;
        if (s.op == ir::Op::For || s.op == ir::Op::While)
          for (int64_t var : loops_.of(s).state) out.insert(loops_.of(s).seg(n_, var));
        for (const ir::Block& r : s.regions)
          for (const ir::Stmt& t : r.stmts) reversed(t);
        return;
      }
      const ReverseRule r = rules_.rule(s);
      if (r.empty()) return;
      for (const RuleStep& st : r.steps)
        for (const AdjTarget& t : st.outs) out.insert(adj_name(n_, t));
      for (const AdjTarget& t : r.reads) out.insert(adj_name(n_, t));
      // A store's or an atomic add's rule reads the adjoint array at the indices; the others
      // read their operands too (atomic min/max compare the element with the value).
      const bool indices_only = s.op == ir::Op::ArrayStore ||
                                (s.op == ir::Op::ArrayAtomic && (s.atomic_op() == ir::AtomicOp::Add ||
                                                                 s.atomic_op() == ir::AtomicOp::Sub));
      for (size_t i = 0; i < s.args.size(); ++i) {
        const ir::ValueId a = s.args[i];
        const bool adj_array = fn_.type_of(a).is_array() && rules_.has_adj_array(a);
        if (adj_array) out.insert(rules_.adj_array(a));
        const bool field_array = adj_array && !rules_.param_of().count(a);  // its adjoint array: grad_view(v)
        if (field_array || !indices_only || (i > 0 && i + 1 < s.args.size())) out.insert(v(a));
      }
    };
    for (size_t i = span.begin; i < span.end; ++i) {
      for_each_within(fn_.body.stmts[i], replayed);
      reversed(fn_.body.stmts[i]);
    }
    return out;
  }

  /// Span `j`'s first replay, which sets the values and variables later spans read: copies of
  /// the variables it reads (its checkpoint), then its statements in a block of their own.
  void replay_span(const SweepSpan& span, size_t j) {
    for (int64_t var : span.vars_read)
      w_.line("const " + var_type(var) + " " + checkpoint_name(j, var) + " = " + n_.var(var) + ";", 1);
    w_.line("{  // span " + std::to_string(j), 1);
    declare_span_locals(span, 2, false);
    replay(fn_.body, span.begin, span.end, 2);
    w_.line("}", 1);
  }

  /// The values only `span` uses, and with `adjoints` those of its block arguments.
  void declare_span_locals(const SweepSpan& span, int indent, bool adjoints) {
    for (ir::ValueId id : span.locals) {
      w_.line(type(id) + " " + v(id) + ";", indent);
      if (adjoints && is_block_arg(id)) declare_adjoint(id, indent);
    }
  }

  std::string checkpoint_name(size_t span, int64_t var) const {
    return "kj_span" + std::to_string(span) + "_" + n_.var(var);
  }

  void reverse_stmt(const ir::Stmt& s, int indent) {
    switch (s.op) {
      case ir::Op::If: {
        bool then_code = work_.has_work(s.regions[0]), else_code = work_.has_work(s.regions[1]);
        if (!then_code && !else_code) break;
        w_.user_line("if (" + v(s.args[0]) + ") {", indent, s.loc);
        reverse(s.regions[0], indent + 1);
        if (else_code) {
          w_.user_line("} else {", indent, s.loc);
          reverse(s.regions[1], indent + 1);
        }
        w_.user_line("}", indent, s.loc);
        break;
      }
      case ir::Op::For:
      case ir::Op::While:
        if (work_.has_work(s)) reverse_loop(s, indent);
        break;
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
      case ir::Op::Call: case ir::Op::Cast: case ir::Op::Construct: case ir::Op::Extract:
      case ir::Op::Insert: case ir::Op::DeclVar: case ir::Op::LoadVar: case ir::Op::StoreVar:
      case ir::Op::ArrayLoad: case ir::Op::ArrayStore: case ir::Op::ArrayAtomic: case ir::Op::ArrayShape:
      case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return: case ir::Op::Print:
      case ir::Op::CallFunc:
        write_scalar_rule(w_, rules_.rule(s), n_, indent, s.loc);
        break;
      case ir::Op::TangentCall: case ir::Op::GradFunc:
      case ir::Op::AccumVar: case ir::Op::CallAdjoint: case ir::Op::StrongZero: case ir::Op::AdjArrayAdd:
      case ir::Op::AdjArrayRead: case ir::Op::AccumParam: case ir::Op::Checkpoint: case ir::Op::ReverseSegments: case ir::Op::GradView:
        adjoint_cannot_reverse(fn_, s);
    }
  }

  /// Reverses a loop segment by segment (last first): restore the segment's checkpoint, run it
  /// forward recording every iteration's start state, then for each iteration from last to
  /// first restore its state, replay it and reverse it.
  void reverse_loop(const ir::Stmt& s, int indent) {
    const AdjointLoop& L = loops_.of(s);
    const ir::SourceLoc& loc = s.loc;
    const bool is_for = s.op == ir::Op::For;
    const ir::Block& body = s.regions[is_for ? 0 : 1];
    auto induction = [&](int in) {
      if (!is_for) return;
      const std::string i = v(s.regions[0].args.at(0));
      w_.user_line(i + " = " + v(s.args[0]) + " + " + L.name("k") + " * " + v(s.args[2]) + ";", in, loc);
    };
    // No overflow test here: a loop past its bound set kj_overflow in the forward replay, and
    // the whole reverse sweep is skipped.
    for (int64_t var : L.readonly) w_.user_line(n_.var(var) + " = " + L.ro(n_, var) + ";", indent, loc);
    emit_reverse_segments(
        w_, L, n_, live_, indent, loc,
        [&](int in) {
          induction(in);
          replay(body, in);
        },
        [&](int in) {
          induction(in);
          replay(body, in);
          reverse(body, in);  // declares the body's adjoints: zero in every iteration
        });
  }

  SourceWriter& w_;
  const ir::Function& fn_;  // jumps lowered
  const std::vector<SweepSpan>& spans_;
  Names n_;
  ExprEmitter ex_;
  ReverseRules rules_;
  ReverseWork work_;  ///< every differentiable adjoint is tracked
  const CodegenOptions& o_;
  AdjointLoops loops_;
  const LiveName live_ = [this](int64_t var) { return n_.var(var); };
  std::set<ir::ValueId> defined_;
  std::map<ir::ValueId, const ir::Block*> def_block_;  ///< the block each value is defined in
  std::set<ir::ValueId> adj_declared_;
  std::set<ir::ValueId> block_args_;
  std::set<ir::ValueId> span_locals_;  ///< values declared in their span's blocks (reverse_spans)
  std::vector<std::string> span_calls_;  ///< per span, the call of its function (out of line)
};

}  // namespace

std::string strong_zero(const std::string& adj_ret, const std::vector<std::string>& accumulators, const std::string& call) {
  const StrongZeroText t = strong_zero_parts(adj_ret, accumulators);
  return t.open + call + t.close;
}

StrongZeroText strong_zero_parts(const std::string& adj_ret, const std::vector<std::string>& accumulators) {
  std::string saves, keeps;
  std::set<std::string> seen;  // a rule may take one adjoint twice (x * x)
  for (const std::string& name : accumulators) {
    if (!seen.insert(name).second) continue;
    const std::string saved = "kj_s" + std::to_string(seen.size() - 1);
    saves += "KJ_SZ_SAVE(" + saved + ", " + name + ") ";
    keeps += " KJ_SZ_KEEP(" + name + ", " + saved + ")";
  }
  return {"KJ_SZ_IF(" + adj_ret + ") { KJ_SZ_NZ(" + adj_ret + ") " + saves, keeps + " }"};
}

void emit_adjoint_kernel_body(SourceWriter& w, const LoweredFunction& lowered,
                              const CodegenOptions& options, int first_loop, const FunctionNames* functions,
                              const std::string& span_prefix, const std::function<void()>& open_body) {
  AdjointEmitter(w, lowered, options, first_loop, functions).run(span_prefix, open_body);
}

void emit_adjoint_body(SourceWriter& w, const LoweredFunction& lowered,
                       const CodegenOptions& options, int first_loop, const FunctionNames* functions) {
  emit_adjoint_kernel_body(w, lowered, options, first_loop, functions, "", nullptr);
}

void adjoint_cannot_reverse(const ir::Function& fn, const ir::Stmt& s) {
  std::string what = std::string("the reverse transform's ") + ir::op_name(s.op);
  if (s.op == ir::Op::TangentCall) what = std::string("the tangent of ") + ir::builtin_info(s.builtin()).name;
  if (s.op == ir::Op::GradFunc) what = "grad(" + fn.callees.at(s.callee())->name + ")";
  KJIT_CHECK(false, "the adjoint reached " + what);
  __builtin_unreachable();  // KJIT_CHECK(false, ...) throws
}

bool function_has_adjoint(const ir::Function& f) {
  if (ir::takes_gradient(f)) return false;  // no second derivatives (adjoint_obstacle)
  for (const ir::Param& p : f.params)
    if (p.type.is_differentiable()) return true;
  return false;
}

}  // namespace kjit::codegen
