// kjit/dsl/tracer.hpp — records DSL operations into IR while a kernel body runs (internal:
// kernel headers reach it only through the non-template API of kjit/dsl/trace_api.hpp).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "kjit/dsl/kernel_handle.hpp"
#include "kjit/dsl/trace_api.hpp"
#include "kjit/dsl/value.hpp"
#include "kjit/error.hpp"
#include "kjit/ir/ir.hpp"

namespace kjit::dsl {

/// The IR's form of a DSL source location.
inline ir::SourceLoc source_loc(Loc loc) { return ir::SourceLoc{loc.file, loc.line}; }

namespace detail {

/// An assignable location: local variable `var`, then `steps` into it (`w.x()`, `m[i][j]`,
/// `p.pos().y()` on Var locals).
struct LPath {
  uint32_t var = 0;
  std::vector<PathStep> steps;
};
/// The type of the part of `t` that `step` selects.
ir::Type component_type(const ir::Type& t, const PathStep& step);
/// Stores `value` into the location `path` names (load, extract down, insert up, store).
void assign_path(const LPath& path, ir::ValueId value, Loc loc);
/// "Float", "Vec3f", ...: the DSL's name of an IR type, for messages.
std::string dsl_type_name(const ir::Type& t);

/// What kind of region a frame of the tracer is recording into.
enum class FrameKind : uint8_t { Kernel, Then, Else, LoopBody, WhileCond };

/// Records one kernel. One Tracer is active per thread while a kernel body runs; DSL handles
/// reach it through Tracer::current().
class Tracer {
 public:
  Tracer(ir::Function& fn, const std::string& kernel_name);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// The tracer of this thread, or throws a User error: DSL values exist only inside kernels.
  static Tracer& get(Loc loc);
  /// The tracer of this thread, or nullptr.
  static Tracer* current();

  ir::Function& function() { return fn_; }

  /// Throws a User error "<kernel> at <file:line>: <message>".
  [[noreturn]] void fail(Loc loc, const std::string& message) const;
  /// The most recent location seen in the user's code; used where C++ gives no way to capture
  /// one (operator=, a device function's call).
  Loc last_loc() const { return last_loc_; }
  void note(Loc loc) {
    if (in_user_code(loc)) last_loc_ = loc;
  }
  /// `loc` when it is in the user's code, else the last such location. A handle copied or
  /// moved inside the C++ standard library (std::function's invoker, a container) captures a
  /// location in a library header, which is never the line the user wants to see.
  Loc where(Loc loc) const { return in_user_code(loc) ? loc : last_loc_; }
  /// Whether `loc` names a file outside the C++ standard library's headers.
  static bool in_user_code(Loc loc);

  /// Appends a statement to the current block; returns its result value (kNoValue for void).
  ir::ValueId emit(ir::Op op, ir::Type type, std::initializer_list<ir::ValueId> args,
                   int64_t imm, Loc loc, uint64_t bits = 0);
  ir::ValueId emit(ir::Op op, ir::Type type, std::vector<ir::ValueId> args, int64_t imm, Loc loc,
                   uint64_t bits = 0);
  /// A constant of scalar type `t` from a double or an integer.
  ir::ValueId constant_float(ir::Type t, double v, Loc loc);
  ir::ValueId constant_int(ir::Type t, int64_t v, Loc loc);
  /// Calls builtin `b`, checking argument types with the builtin's rule; returns the result.
  ir::ValueId call(ir::Builtin b, std::initializer_list<ir::ValueId> args, Loc loc);
  ir::ValueId call_ids(ir::Builtin b, std::vector<ir::ValueId> args, Loc loc);

  /// A new value that no statement defines (a block argument such as an induction value).
  ir::ValueId new_block_arg(ir::Type t);
  /// Checks that value `v` may be used here: it is bound and its defining region is open.
  void check_use(ir::ValueId v, Loc loc) const;
  /// Id of the innermost open region (handles remember where they were created).
  uint32_t scope() const { return frames_.back().scope; }
  /// Whether region `scope` is still open.
  bool scope_open(uint32_t scope) const;
  /// Describes where a region was opened ("the For body at k.hpp:12").
  std::string describe_scope(uint32_t scope) const;

  /// Declares a new local variable of type `t` in the current block; returns its id.
  uint32_t declare_var(ir::Type t, Loc loc);
  /// Checks that local variable `var` may be used here.
  void check_var(uint32_t var, Loc loc) const;

  /// Runs `body` recording into region `index` of the last statement of the current block.
  /// `args` become the block's arguments (a loop's induction value).
  template <class Body>
  void record_region(int index, FrameKind kind, Loc loc, Body&& body,
                     std::vector<ir::ValueId> args = {});
  /// Runs `body` recording into `block` (a region of a statement of the current block).
  template <class Body>
  void record_into(ir::Block* block, FrameKind kind, Loc loc, Body&& body,
                   std::vector<ir::ValueId> args = {});
  /// Sets the value the current block yields (a While condition).
  void yield(ir::ValueId v) { frames_.back().block->yield = v; }
  /// Removes and returns the statements of the current block from index `from` on.
  std::vector<ir::Stmt> take_tail(size_t from);
  /// The current block.
  ir::Block& current_block() { return *frames_.back().block; }
  /// Statement index of the last statement of the current block, with the block's depth.
  size_t current_depth() const { return frames_.size(); }
  size_t current_block_size() const { return frames_.back().block->stmts.size(); }
  ir::Stmt& last_stmt() { return frames_.back().block->stmts.back(); }
  /// Whether a loop body or condition frame is open (Break / Continue are legal).
  bool in_loop() const;
  /// Records that the kernel uses an N-dimensional launch index (0 = flat index).
  void use_launch_dims(int ndim, Loc loc);
  /// Adds a string to the function's table; returns its index.
  int64_t intern_string(const std::string& s);
  /// Records an assignable location (a Ref's write-through target); returns its id (>= 1).
  uint32_t add_path(LPath path);
  /// The location `id` names, or nullptr for an id this tracer did not make.
  const LPath* path(uint32_t id) const;

 private:
  struct Frame {
    ir::Block* block;
    uint32_t scope;
    FrameKind kind;
    Loc loc;
  };
  void push(ir::Block* block, FrameKind kind, Loc loc);
  void pop();

  ir::Function& fn_;
  std::string kernel_name_;
  std::vector<Frame> frames_;
  std::vector<uint32_t> value_scope_;  ///< region where each value was defined
  std::vector<uint32_t> var_scope_;    ///< region where each local variable was declared
  std::vector<Loc> scope_loc_;         ///< where each region was opened
  std::vector<FrameKind> scope_kind_;
  std::vector<LPath> paths_;  ///< assignable locations, by id - 1
  uint32_t next_scope_ = 0;
  Loc last_loc_;
  Tracer* previous_ = nullptr;
};

template <class Body>
void Tracer::record_region(int index, FrameKind kind, Loc loc, Body&& body,
                           std::vector<ir::ValueId> args) {
  record_into(&frames_.back().block->stmts.back().regions.at(size_t(index)), kind, loc,
              std::forward<Body>(body), std::move(args));
}

template <class Body>
void Tracer::record_into(ir::Block* block, FrameKind kind, Loc loc, Body&& body,
                         std::vector<ir::ValueId> args) {
  if (!args.empty()) block->args = std::move(args);
  push(block, kind, loc);
  for (ir::ValueId a : block->args) value_scope_.at(a) = scope();
  try {
    body();
  } catch (...) {
    pop();
    throw;
  }
  pop();
}

}  // namespace detail
}  // namespace kjit::dsl

namespace kjit::detail {
/// A kernel body assembled from IR at run time (table-driven tests): `trace(params)` runs
/// under the kernel's Tracer with the ids of its parameter values.
template <class F>
KernelBody ir_kernel_body(F trace) {
  return KernelBody{[](void* f, const ir::ValueId* params) { (*static_cast<F*>(f))(params); },
                    new F(std::move(trace)), [](void* f) { delete static_cast<F*>(f); }};
}
}  // namespace kjit::detail
