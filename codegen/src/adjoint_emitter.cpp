// Adjoint code generation: forward replay, then the reverse sweep, with checkpointed replay
// of dynamic loops.
#include "adjoint_emitter.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "builtin_codegen.hpp"
#include "expr_emitter.hpp"
#include "kjit/error.hpp"
#include "lower_jumps.hpp"

namespace kjit::codegen {

// ---------------------------------------------------------------------------------------------
namespace {

const std::string kZero = "{}";

/// A dynamic loop of the adjoint: its id, and the outer variables it changes (checkpointed
/// every iteration block) and only reads (saved once at entry). The adjoints of the values
/// defined inside it restart every iteration: they are declared inside the iteration.
struct LoopInfo {
  int id = 0;
  std::vector<int64_t> state;
  std::vector<int64_t> readonly;
};

class AdjointEmitter {
 public:
  AdjointEmitter(SourceWriter& w, const ir::Function& fn, PreludeUse& used,
                 const CodegenOptions& o, int first_loop, std::vector<ir::SourceLoc>& loops,
                 const FunctionNames* functions)
      : w_(w), fn_(fn), n_(fn), ex_(n_, used, functions), used_(used), o_(o), next_loop_(first_loop),
        loop_locs_(loops) {
    KJIT_CHECK(o.loop_checkpoints >= 2 && o.loop_checkpoints % 2 == 0,
               "loop_checkpoints must be an even number >= 2");
  }

  int run() {
    analyze(fn_.body);
    declare();
    w_.line("// forward replay (no stores, atomics or prints: the forward launch did those)", 1);
    replay(fn_.body, 1);
    w_.line("// reverse sweep", 1);
    // A thread whose loop ran past its checkpoint bound contributes no gradient at all (the
    // launch reports the error): a partial sweep would hand out wrong numbers.
    const int in = loop_list_.empty() ? 1 : 2;
    if (in == 2) w_.line("if (!kj_overflow) {", 1);
    if (fn_.is_function && fn_.body.yield != ir::kNoValue && differentiable(fn_.body.yield)) {
      declare_adjoint(fn_.body.yield, in);
      w_.line(adj(fn_.body.yield) + " += kj_adj_ret;", in);
    }
    reverse(fn_.body, in);
    if (in == 2) w_.line("}", 1);
    if (fn_.is_function) {  // hand the parameters' adjoints back to the caller
      for (const auto& [value, index] : param_of_)
        if (differentiable(value)) w_.line(n_.adj_param(index) + " += " + adj(value) + ";", 1);
    }
    return int(loop_list_.size());
  }

 private:
  // ----- analysis --------------------------------------------------------------------------
  void analyze(const ir::Block& b) {
    for (const ir::Stmt& s : b.stmts) {
      if (s.result != ir::kNoValue) {
        def_[s.result] = &s;
        def_block_[s.result] = &b;
      }
      if (s.op == ir::Op::Param) param_of_[s.result] = size_t(s.imm);
      if (s.op == ir::Op::For || s.op == ir::Op::While) analyze_loop(s);
      for (const ir::Block& r : s.regions) {
        block_args_.insert(r.args.begin(), r.args.end());
        analyze(r);
      }
    }
  }

  void analyze_loop(const ir::Stmt& loop) {
    std::set<int64_t> declared, stored, loaded;
    LoopInfo info;
    info.id = next_loop_++;
    for (const ir::Block& r : loop.regions) {
      ir::for_each_stmt(r, [&](const ir::Stmt& s) {
        if (s.op == ir::Op::DeclVar) declared.insert(s.imm);
        if (s.op == ir::Op::StoreVar) stored.insert(s.imm);
        if (s.op == ir::Op::LoadVar) loaded.insert(s.imm);
      });
    }
    for (int64_t v : stored)
      if (!declared.count(v)) info.state.push_back(v);
    for (int64_t v : loaded)
      if (!declared.count(v) && !stored.count(v)) info.readonly.push_back(v);
    loop_locs_.push_back(loop.loc);
    loop_index_[&loop] = loop_list_.size();
    loop_list_.push_back(info);
  }

  bool differentiable(ir::ValueId v) const {
    const ir::Type& t = fn_.type_of(v);
    return !t.is_array() && t.is_differentiable();
  }
  bool var_differentiable(int64_t var) const {
    return fn_.vars.at(size_t(var)).type.is_differentiable();
  }
  const std::string& v(ir::ValueId id) const { return n_.value(id); }
  std::string adj(ir::ValueId id) const { return n_.adj_value(id); }
  std::string type(ir::ValueId id) const { return fn_.type_of(id).cpp(); }
  std::string var_type(int64_t var) const { return fn_.vars.at(size_t(var)).type.cpp(); }
  std::string ckpt(const LoopInfo& L, int64_t var) const {
    return "kj_ckpt" + std::to_string(L.id) + "_" + n_.var(var);
  }
  std::string seg(const LoopInfo& L, int64_t var) const {
    return "kj_seg" + std::to_string(L.id) + "_" + n_.var(var);
  }
  std::string ro(const LoopInfo& L, int64_t var) const {
    return "kj_ro" + std::to_string(L.id) + "_" + n_.var(var);
  }
  std::string L_(const LoopInfo& L, const char* what) const { return std::string("kj_") + what + std::to_string(L.id); }

  // ----- declarations ----------------------------------------------------------------------
  /// Values at the top; the adjoints of parameters (handed back after the sweep) and of block
  /// arguments too. Every other adjoint is declared where the sweep first reaches it
  /// (declare_adjoint): an adjoint zeroed at the top and first touched thousands of
  /// statements later is live through every block in between, and that made NVVM's time grow
  /// with the square of the kernel (docs/BENCHMARKS.md, compile time against kernel size).
  void declare() {
    for (ir::ValueId id = 0; id < fn_.values.size(); ++id) {
      bool is_param = param_of_.count(id) != 0;
      bool defined = def_.count(id) != 0 || is_block_arg(id);
      if (!defined) continue;
      if (!is_param) w_.line(type(id) + " " + v(id) + ";", 1);
      if ((is_param || is_block_arg(id)) && differentiable(id)) declare_adjoint(id, 1);
    }
    for (size_t var = 0; var < fn_.vars.size(); ++var) {
      w_.line(var_type(int64_t(var)) + " " + n_.var(int64_t(var)) + " = {};", 1);
      if (var_differentiable(int64_t(var)))
        w_.line(var_type(int64_t(var)) + " " + n_.adj_var(int64_t(var)) + " = {};", 1);
    }
    if (!loop_list_.empty()) {
      used_.need("status");
      w_.line("bool kj_overflow = false;", 1);
    }
    const std::string C = std::to_string(o_.loop_checkpoints);
    for (const LoopInfo& L : loop_list_) {
      w_.line("kj_int32 " + L_(L, "n") + " = 0, " + L_(L, "stride") + " = 1, " + L_(L, "count") +
                  " = 0; bool " + L_(L, "ovf") + " = false;", 1);
      for (int64_t var : L.state) {
        w_.line(var_type(var) + " " + ckpt(L, var) + "[" + C + "];", 1);
        w_.line(var_type(var) + " " + seg(L, var) + "[" + C + "];", 1);
      }
      for (int64_t var : L.readonly) w_.line(var_type(var) + " " + ro(L, var) + ";", 1);
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
  /// touches when it reverses that statement: the last statement (in program order) that
  /// defines or reads them, counting the statements inside its regions.
  std::vector<std::vector<ir::ValueId>> first_touches(const ir::Block& b) const {
    std::map<ir::ValueId, size_t> last;
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      auto touch = [&](ir::ValueId id) {
        auto d = def_block_.find(id);
        if (d != def_block_.end() && d->second == &b) last[id] = i;
      };
      const ir::Stmt& top = b.stmts[i];
      if (top.result != ir::kNoValue) touch(top.result);
      for (ir::ValueId a : top.args) touch(a);
      for (const ir::Block& r : top.regions) {
        ir::for_each_stmt(r, [&](const ir::Stmt& s) {
          for (ir::ValueId a : s.args) touch(a);
        });
        if (r.yield != ir::kNoValue) touch(r.yield);
      }
    }
    std::vector<std::vector<ir::ValueId>> at(b.stmts.size());
    for (const auto& [id, i] : last)
      if (param_of_.count(id) == 0) at[i].push_back(id);
    return at;
  }

  // ----- forward replay --------------------------------------------------------------------
  void replay(const ir::Block& b, int indent) {
    for (const ir::Stmt& s : b.stmts) {
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
          w_.user_line(n_.var(s.imm) + " = " + v(s.args[0]) + ";", indent, s.loc);
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
        case ir::Op::CallFunc:  // handled above
          KJIT_CHECK(false, std::string("adjoint replay reached ") + ir::op_name(s.op));
          break;
      }
    }
  }

  std::string for_condition(const ir::Stmt& s) const {
    return codegen::for_condition(v(s.regions[0].args.at(0)), v(s.args[1]), v(s.args[2]));
  }

  void save_state(const LoopInfo& L, const std::string& slot, bool to_segment, int indent,
                  const ir::SourceLoc& loc) {
    for (int64_t var : L.state)
      w_.user_line((to_segment ? seg(L, var) : ckpt(L, var)) + "[" + slot + "] = " + n_.var(var) + ";",
                   indent, loc);
  }
  void load_state(const LoopInfo& L, const std::string& slot, bool from_segment, int indent,
                  const ir::SourceLoc& loc) {
    for (int64_t var : L.state)
      w_.user_line(n_.var(var) + " = " + (from_segment ? seg(L, var) : ckpt(L, var)) + "[" + slot + "];",
                   indent, loc);
  }

  // Every loop of the adjoint's machinery is KJ_NO_UNROLL: NVVM unrolling the checkpoint
  // copies and segment replays multiplies compile time (damp: ~1 s -> ~0.15 s) for nothing.

  /// Runs the loop forward, keeping at most C checkpoints of its changing state: one every
  /// `stride` iterations, the stride doubling (and every other checkpoint dropped) when they
  /// run out. Past C*C iterations the bound is exceeded: the loop reports it and the thread's
  /// whole reverse sweep is skipped; the runtime turns the report into an error.
  void replay_loop(const ir::Stmt& s, int indent) {
    const LoopInfo& L = loop_list_.at(loop_index_.at(&s));
    const ir::SourceLoc& loc = s.loc;
    const std::string C = std::to_string(o_.loop_checkpoints);
    const std::string n = L_(L, "n"), stride = L_(L, "stride"), count = L_(L, "count"), ovf = L_(L, "ovf");
    w_.user_line(n + " = 0; " + stride + " = 1; " + count + " = 0; " + ovf + " = false;", indent, loc);
    for (int64_t var : L.readonly) w_.user_line(ro(L, var) + " = " + n_.var(var) + ";", indent, loc);
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
    int in = indent + 1;
    w_.user_line("if (!" + ovf + " && " + n + " % " + stride + " == 0) {", in, loc);
    w_.user_line("if (" + count + " == " + C + ") {", in + 1, loc);
    w_.user_line("if (" + stride + " * 2 > " + C + ") {", in + 2, loc);
    w_.user_line(ovf + " = true; kj_overflow = true;", in + 3, loc);
    w_.user_line("kj::report_status(dim, " + std::to_string(L.id + 1) + ");", in + 3, loc);
    w_.user_line("} else {", in + 2, loc);
    if (!L.state.empty()) {
      w_.user_line("KJ_NO_UNROLL", in + 3, loc);
      w_.user_line("for (int kj_q = 0; kj_q < " + C + " / 2; ++kj_q) {", in + 3, loc);
      for (int64_t var : L.state)
        w_.user_line(ckpt(L, var) + "[kj_q] = " + ckpt(L, var) + "[2 * kj_q];", in + 4, loc);
      w_.user_line("}", in + 3, loc);
    }
    w_.user_line(count + " = " + C + " / 2;", in + 3, loc);
    w_.user_line(stride + " *= 2;", in + 3, loc);
    w_.user_line("}", in + 2, loc);
    w_.user_line("}", in + 1, loc);
    w_.user_line("if (!" + ovf + " && " + n + " % " + stride + " == 0) {", in + 1, loc);
    save_state(L, count, false, in + 2, loc);
    w_.user_line("++" + count + ";", in + 2, loc);
    w_.user_line("}", in + 1, loc);
    w_.user_line("}", in, loc);
    replay(s.regions[s.op == ir::Op::For ? 0 : 1], in);
    w_.user_line("++" + n + ";", in, loc);
    w_.user_line("}", indent, loc);
  }

  // ----- reverse sweep ---------------------------------------------------------------------
  void reverse(const ir::Block& b, int indent) {
    const std::vector<std::vector<ir::ValueId>> touches = first_touches(b);
    for (size_t i = b.stmts.size(); i-- > 0;) {
      for (ir::ValueId id : touches[i]) declare_adjoint(id, indent, b.stmts[i].loc);
      reverse_stmt(b.stmts[i], indent);
    }
  }

  /// Whether `array` has an adjoint array here (a parameter's; arrays built in the kernel
  /// from an address have none).
  bool has_adj_array(ir::ValueId array) const { return param_of_.count(array) != 0; }
  std::string adj_array(ir::ValueId array) const { return n_.adj_param(param_of_.at(array)); }

  /// Whether the indices of access `s` are exactly this thread's launch index: the flat
  /// index for a 1-D array, or components 0..N-1 in order for an N-D launch of an N-D array.
  bool own_index(const ir::Stmt& s, size_t index_count) const {
    const ir::Type& a = fn_.type_of(s.args[0]);
    std::vector<int64_t> components;
    for (size_t k = 1; k <= index_count; ++k) {
      auto d = def_.find(s.args[k]);
      if (d == def_.end() || d->second->op != ir::Op::ThreadId) return false;
      components.push_back(d->second->imm);
    }
    if (a.ndim == 1 && components == std::vector<int64_t>{-1}) return true;
    if (fn_.launch_ndim == 0 || int(a.ndim) != fn_.launch_ndim || int(index_count) != fn_.launch_ndim) return false;
    for (int k = 0; k < fn_.launch_ndim; ++k)
      if (components[size_t(k)] != k) return false;
    return true;
  }

  /// Whether every read of array `array` is at the thread's own index: then no two threads
  /// add to one element of its adjoint and plain adds are race-free. One read elsewhere
  /// makes every add to that adjoint atomic.
  bool owned(ir::ValueId array) {
    auto it = owned_.find(array);
    if (it != owned_.end()) return it->second;
    // Inside device functions the caller's indices are unknown; an array passed to a device
    // function may be read there anywhere.
    bool all = !fn_.is_function;
    ir::for_each_stmt(fn_.body, [&](const ir::Stmt& s) {
      if (s.op == ir::Op::ArrayLoad && s.args[0] == array) all = all && own_index(s, s.args.size() - 1);
      if (s.op == ir::Op::CallFunc)
        for (ir::ValueId a : s.args) all = all && a != array;
    });
    owned_[array] = all;
    return all;
  }

  void reverse_stmt(const ir::Stmt& s, int indent) {
    const ir::SourceLoc& loc = s.loc;
    switch (s.op) {
      case ir::Op::Call: {
        const BuiltinCodegen& g = builtin_codegen(s.builtin());
        if (!g.adjoint || !ir::builtin_info(s.builtin()).differentiable || !differentiable(s.result)) break;
        used_.need(g.adjoint_chunk);
        std::string call = rule_by_reference(g.adjoint) + "(";
        for (ir::ValueId a : s.args) call += v(a) + ", ";
        call += v(s.result);
        std::vector<std::string> accumulators;
        for (ir::ValueId a : s.args)
          if (differentiable(a)) {
            call += ", " + adj(a);
            accumulators.push_back(adj(a));
          }
        call += ", " + adj(s.result) + ");";
        // Strong zero: an exactly zero incoming adjoint contributes nothing, even through an
        // inf or NaN partial (a dead, overflowing intermediate would otherwise turn 0 * inf
        // into NaN in the adjoints of live inputs). User structs come from no builtin; linear
        // rules have no partial that could be inf.
        if (s.type.shape != ir::Shape::Struct && !g.adjoint_linear)
          call = strong_zero(adj(s.result), accumulators, call);
        w_.user_line(call, indent, loc);
        break;
      }
      case ir::Op::Cast:
        if (differentiable(s.result) && differentiable(s.args[0]))
          w_.user_line("kj::adj_cast(" + v(s.args[0]) + ", " + v(s.result) + ", " + adj(s.args[0]) + ", " +
                           adj(s.result) + ");", indent, loc);
        break;
      case ir::Op::Construct: {
        if (s.args.empty() || !differentiable(s.result)) break;
        for (size_t i = 0; i < s.args.size(); ++i)
          if (differentiable(s.args[i]))
            w_.user_line(adj(s.args[i]) + " += " + component(adj(s.result), s.type, int(i)) + ";", indent, loc);
        break;
      }
      case ir::Op::Extract:
        if (fn_.type_of(s.args[0]).shape == ir::Shape::Struct) {
          if (differentiable(s.result))
            w_.user_line(adj(s.args[0]) + "." + field_name(fn_.type_of(s.args[0]), s.imm) + " += " + adj(s.result) + ";", indent, loc);
          break;
        }
        if (differentiable(s.result) && differentiable(s.args[0])) {
          std::string call = "kj::adj_extract(" + v(s.args[0]);
          for (size_t i = 1; i < s.args.size(); ++i) call += ", " + v(s.args[i]);
          w_.user_line(call + ", " + v(s.result) + ", " + adj(s.args[0]) + ", " + adj(s.result) + ");", indent, loc);
        }
        break;
      case ir::Op::Insert:
        if (s.type.shape == ir::Shape::Struct) {
          if (!differentiable(s.result)) break;
          const std::string f = field_name(s.type, s.imm);
          if (differentiable(s.args[1])) w_.user_line(adj(s.args[1]) + " += " + adj(s.result) + "." + f + ";", indent, loc);
          w_.user_line("{ " + s.type.cpp() + " kj_t = " + adj(s.result) + "; kj_t." + f + " = {}; " + adj(s.args[0]) + " += kj_t; }", indent, loc);
          break;
        }
        if (differentiable(s.result)) {
          std::string call = "kj::adj_insert(" + v(s.args[0]);
          for (size_t i = 2; i < s.args.size(); ++i) call += ", " + v(s.args[i]);
          w_.user_line(call + ", " + v(s.args[1]) + ", " + v(s.result) + ", " + adj(s.args[0]) + ", " +
                           adj(s.args[1]) + ", " + adj(s.result) + ");", indent, loc);
        }
        break;
      case ir::Op::LoadVar:
        if (var_differentiable(s.imm)) w_.user_line(n_.adj_var(s.imm) + " += " + adj(s.result) + ";", indent, loc);
        break;
      case ir::Op::StoreVar:
        if (var_differentiable(s.imm)) {
          w_.user_line(adj(s.args[0]) + " += " + n_.adj_var(s.imm) + ";", indent, loc);
          w_.user_line(n_.adj_var(s.imm) + " = {};", indent, loc);
        }
        break;
      case ir::Op::DeclVar:
        if (var_differentiable(s.imm)) w_.user_line(n_.adj_var(s.imm) + " = {};", indent, loc);
        break;
      case ir::Op::ArrayLoad: {
        if (!differentiable(s.result) || !has_adj_array(s.args[0])) break;
        const std::string a = adj_array(s.args[0]);
        std::string elem = "kj::elem(" + a;
        for (size_t i = 1; i < s.args.size(); ++i) elem += ", " + v(s.args[i]);
        elem += ")";
        used_.need("array");
        if (owned(s.args[0])) {
          w_.user_line("if (" + a + ".data) " + elem + " += " + adj(s.result) + ";  // own element: plain add",
                       indent, loc);
        } else {
          w_.user_line("if (" + a + ".data) " + ex_.add_into(a, elem, adj(s.result), s.type) + ";", indent, loc);
        }
        break;
      }
      case ir::Op::ArrayStore: {
        ir::ValueId value = s.args.back();
        if (!differentiable(value) || !has_adj_array(s.args[0])) break;
        const std::string a = adj_array(s.args[0]);
        std::string elem = "kj::elem(" + a;
        for (size_t i = 1; i + 1 < s.args.size(); ++i) elem += ", " + v(s.args[i]);
        w_.user_line("if (" + a + ".data) " + adj(value) + " += " + elem + ");", indent, loc);
        break;
      }
      case ir::Op::ArrayAtomic: {
        ir::ValueId value = s.args.back();
        if (!differentiable(value) || !has_adj_array(s.args[0])) break;
        const std::string a = adj_array(s.args[0]);
        std::string idx;
        for (size_t i = 1; i + 1 < s.args.size(); ++i) idx += ", " + v(s.args[i]);
        const std::string elem = "kj::elem(" + a + idx + ")";
        switch (s.atomic_op()) {
          case ir::AtomicOp::Add:
            w_.user_line("if (" + a + ".data) " + adj(value) + " += " + elem + ";", indent, loc);
            break;
          case ir::AtomicOp::Sub:
            w_.user_line("if (" + a + ".data) " + adj(value) + " -= " + elem + ";", indent, loc);
            break;
          case ir::AtomicOp::Min:
          case ir::AtomicOp::Max:  // one winner per component (see kj::adj_atomic_select)
            used_.need("atomic");
            w_.user_line("if (" + a + ".data) kj::adj_atomic_select(kj::elem(" + v(s.args[0]) + idx + "), " + v(value) +
                             ", " + adj(value) + ", &" + elem + ");", indent, loc);
            break;
          case ir::AtomicOp::And: case ir::AtomicOp::Or: case ir::AtomicOp::Xor:  // integers only
          case ir::AtomicOp::Exch: case ir::AtomicOp::Cas:  // refused on floats (adjoint_obstacles)
            KJIT_CHECK(false, std::string("the adjoint reached atomic_") + ir::atomic_op_name(s.atomic_op()) +
                                  " on a differentiable value");
            break;
        }
        break;
      }
      case ir::Op::If: {
        bool then_code = has_reverse(s.regions[0]), else_code = has_reverse(s.regions[1]);
        if (!then_code && !else_code) break;
        w_.user_line("if (" + v(s.args[0]) + ") {", indent, loc);
        reverse(s.regions[0], indent + 1);
        if (else_code) {
          w_.user_line("} else {", indent, loc);
          reverse(s.regions[1], indent + 1);
        }
        w_.user_line("}", indent, loc);
        break;
      }
      case ir::Op::For:
      case ir::Op::While:
        reverse_loop(s, indent);
        break;
      case ir::Op::Print:  // print(): the adjoints of the printed values
        if (s.bits == 1) w_.user_line(ex_.print(s, true) + ";", indent, loc);
        break;
      case ir::Op::CallFunc:
        reverse_call(s, indent);
        break;
      case ir::Op::Const: case ir::Op::Param: case ir::Op::ThreadId: case ir::Op::LaunchDim:
      case ir::Op::ArrayShape:
        break;  // no derivative flows through constants, parameters' values, indices, shapes
      case ir::Op::Break: case ir::Op::Continue: case ir::Op::Return:
        KJIT_CHECK(false, std::string("the adjoint reached an unlowered ") + ir::op_name(s.op));
        break;
    }
  }

  /// The adjoint call of device function CallFunc `s` (see function_codegen.hpp for the
  /// signature): arguments, result, the adjoint of each differentiable argument, adj_ret.
  void reverse_call(const ir::Stmt& s, int indent) {
    const ir::Function& f = *fn_.callees.at(size_t(s.imm));
    if (!function_has_adjoint(f)) return;
    std::string call = "adj_" + ex_.function_name(f) + "(dim, kj_index";
    for (ir::ValueId a : s.args) call += ", " + v(a);
    if (!s.type.is_void()) call += ", " + v(s.result);
    for (ir::ValueId a : s.args) {
      const ir::Type& t = fn_.type_of(a);
      if (!t.is_differentiable()) continue;
      if (t.is_array()) call += ", " + (has_adj_array(a) ? adj_array(a) : t.cpp() + "{}");
      else call += ", " + adj(a);
    }
    if (!s.type.is_void() && differentiable(s.result)) call += ", " + adj(s.result);
    w_.user_line(call + ");", indent, s.loc);
  }

  /// Whether reversing `b` produces any code (differentiable values or loops inside).
  bool has_reverse(const ir::Block& b) const {
    bool any = false;
    ir::for_each_stmt(b, [&](const ir::Stmt& s) {
      if (s.op == ir::Op::For || s.op == ir::Op::While || s.op == ir::Op::CallFunc) any = true;
      if (s.op == ir::Op::Print && s.bits == 1) any = true;
      if (s.result != ir::kNoValue && differentiable(s.result)) any = true;
      if ((s.op == ir::Op::ArrayStore || s.op == ir::Op::ArrayAtomic || s.op == ir::Op::StoreVar) &&
          !s.args.empty() && differentiable(s.args.back()))
        any = true;
    });
    return any;
  }

  std::string component(const std::string& value, const ir::Type& t, int i) const {
    switch (t.shape) {
      case ir::Shape::Vector: return value + ".c[" + std::to_string(i) + "]";
      case ir::Shape::Matrix:
        return value + ".c[" + std::to_string(i / t.cols) + "][" + std::to_string(i % t.cols) + "]";
      case ir::Shape::Quat:
      case ir::Shape::Transform: return "kj::extract(" + value + ", " + std::to_string(i) + ")";
      case ir::Shape::Struct: return value + "." + field_name(t, i);
      default: break;
    }
    KJIT_CHECK(false, "adjoint of constructing a " + t.str() + " is not implemented");
    return "";
  }

  /// Reverses a loop segment by segment (last first): restore the segment's checkpoint, run it
  /// forward recording every iteration's start state, then for each iteration from last to
  /// first restore its state, replay it and reverse it.
  void reverse_loop(const ir::Stmt& s, int indent) {
    const LoopInfo& L = loop_list_.at(loop_index_.at(&s));
    const ir::SourceLoc& loc = s.loc;
    const bool is_for = s.op == ir::Op::For;
    const ir::Block& body = s.regions[is_for ? 0 : 1];
    const std::string n = L_(L, "n"), stride = L_(L, "stride"), count = L_(L, "count");
    const std::string sg = L_(L, "seg"), k0 = L_(L, "k0"), k1 = L_(L, "k1"), k = L_(L, "k");
    auto induction = [&](int in) {
      if (!is_for) return;
      const std::string i = v(s.regions[0].args.at(0));
      w_.user_line(i + " = " + v(s.args[0]) + " + " + k + " * " + v(s.args[2]) + ";", in, loc);
    };
    // No overflow test here: a loop past its bound set kj_overflow in the forward replay, and
    // the whole reverse sweep is skipped.
    const int in = indent;
    for (int64_t var : L.readonly) w_.user_line(n_.var(var) + " = " + ro(L, var) + ";", in, loc);
    w_.user_line("KJ_NO_UNROLL", in, loc);
    w_.user_line("for (kj_int32 " + sg + " = " + count + " - 1; " + sg + " >= 0; --" + sg + ") {", in, loc);
    w_.user_line("const kj_int32 " + k0 + " = " + sg + " * " + stride + ";", in + 1, loc);
    w_.user_line("const kj_int32 " + k1 + " = " + k0 + " + " + stride + " < " + n + " ? " + k0 + " + " +
                     stride + " : " + n + ";", in + 1, loc);
    load_state(L, sg, false, in + 1, loc);
    if (!L.state.empty()) {
      w_.user_line("KJ_NO_UNROLL", in + 1, loc);
      w_.user_line("for (kj_int32 " + k + " = " + k0 + "; " + k + " < " + k1 + "; ++" + k + ") {", in + 1, loc);
      save_state(L, k + " - " + k0, true, in + 2, loc);
      w_.user_line("if (" + k + " + 1 == " + k1 + ") break;", in + 2, loc);
      induction(in + 2);
      replay(body, in + 2);
      w_.user_line("}", in + 1, loc);
    }
    w_.user_line("KJ_NO_UNROLL", in + 1, loc);
    w_.user_line("for (kj_int32 " + k + " = " + k1 + " - 1; " + k + " >= " + k0 + "; --" + k + ") {", in + 1, loc);
    load_state(L, k + " - " + k0, true, in + 2, loc);
    induction(in + 2);
    replay(body, in + 2);
    reverse(body, in + 2);  // declares the body's adjoints: zero in every iteration
    w_.user_line("}", in + 1, loc);
    w_.user_line("}", in, loc);
  }

  SourceWriter& w_;
  const ir::Function& fn_;
  Names n_;
  ExprEmitter ex_;
  PreludeUse& used_;
  const CodegenOptions& o_;
  int next_loop_;
  std::vector<ir::SourceLoc>& loop_locs_;
  std::map<ir::ValueId, const ir::Stmt*> def_;
  std::map<ir::ValueId, const ir::Block*> def_block_;  ///< the block each value is defined in
  std::set<ir::ValueId> adj_declared_;
  std::map<ir::ValueId, size_t> param_of_;
  std::vector<LoopInfo> loop_list_;             ///< in program order (ids ascending)
  std::map<const ir::Stmt*, size_t> loop_index_;
  std::set<ir::ValueId> block_args_;
  std::map<ir::ValueId, bool> owned_;
};

}  // namespace

std::string strong_zero(const std::string& adj_ret, const std::vector<std::string>& accumulators, const std::string& call) {
  std::string saves, keeps;
  std::set<std::string> seen;  // a rule may take one adjoint twice (x * x)
  for (const std::string& name : accumulators) {
    if (!seen.insert(name).second) continue;
    const std::string saved = "kj_s" + std::to_string(seen.size() - 1);
    saves += "KJ_SZ_SAVE(" + saved + ", " + name + ") ";
    keeps += " KJ_SZ_KEEP(" + name + ", " + saved + ")";
  }
  return "KJ_SZ_IF(" + adj_ret + ") { KJ_SZ_NZ(" + adj_ret + ") " + saves + call + keeps + " }";
}

std::vector<ir::SourceLoc> adjoint_loops(const ir::Function& fn) {
  // The same traversal as AdjointEmitter::analyze: program order, outer loops first.
  ir::Function lowered = lower_jumps(fn);
  std::vector<ir::SourceLoc> locs;
  ir::for_each_stmt(lowered.body, [&](const ir::Stmt& s) {
    if (s.op == ir::Op::For || s.op == ir::Op::While) locs.push_back(s.loc);
  });
  return locs;
}

int emit_adjoint_body(SourceWriter& w, const ir::Function& fn, PreludeUse& used,
                      const CodegenOptions& options, int first_loop, std::vector<ir::SourceLoc>& loops,
                      const FunctionNames* functions) {
  ir::Function lowered = lower_jumps(fn);
  return AdjointEmitter(w, lowered, used, options, first_loop, loops, functions).run();
}

bool function_has_adjoint(const ir::Function& f) {
  for (const ir::Param& p : f.params)
    if (p.type.is_differentiable()) return true;
  return false;
}

}  // namespace kjit::codegen
