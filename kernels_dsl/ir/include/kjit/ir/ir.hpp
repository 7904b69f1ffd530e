// kjit/ir/ir.hpp — the typed IR: values, statements in structured regions, functions, modules.
//
// A function body is a tree of blocks. Every statement lives in one block; control flow
// statements (If, For, While) own their regions. A value is defined by exactly one statement
// (or is a block argument, such as a loop's induction value) and may be used only inside the
// block that defines it and the regions nested in it. Mutable state lives in local
// variables (DeclVar / LoadVar / StoreVar), never in values.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kjit/ir/builtins.hpp"
#include "kjit/ir/type.hpp"

namespace kjit::ir {

/// What a statement of an op does (ops.def's `kind` column).
enum class OpKind : uint8_t { Input, Value, Read, Call, Effect, Control, Jump };
/// How the reverse sweep treats an op (ops.def's `adjoint` column).
enum class OpAdjoint : uint8_t { None, Rule, Regions };

/// The facts about an op that the passes read: one row of ops.def.
struct OpInfo {
  const char* name;   ///< printed name ("const", "call", ...)
  int regions;        ///< nested blocks the statement owns
  OpKind kind;
  OpAdjoint adjoint;
};

/// The ops.def row of `op`.
const OpInfo& op_info(Op op);
/// Printed name of an op ("const", "call", ...).
const char* op_name(Op op);

struct Stmt;
/// Whether `s` has no effect (no store, atomic, output, control flow or jump): its result is
/// all it does, so it may be dropped when unused. Void builtin calls have effects.
bool is_effect_free(const Stmt& s);
/// Whether `s`'s result depends on its operands alone: equal operands give equal results
/// (constants, indices, parameters, arithmetic, non-random builtins), whatever the state.
bool is_pure(const Stmt& s);

struct Block;

/// The parts of an adjoint loop's checkpointing (ops.def's Checkpoint).
enum class CheckpointPart : uint8_t { Declare, Start, Step };

/// One statement. Which fields mean what depends on `op` (see ops.def).
struct Stmt {
  Op op = Op::Const;
  Type type;                  ///< result type (void when the statement yields no value)
  ValueId result = kNoValue;  ///< defined value, if any
  std::vector<ValueId> args;  ///< operands
  /// The small op-specific operand, as builders write it and transforms copy it; passes read
  /// it through the named accessors below, which check that the op has it.
  int64_t imm = 0;
  /// Const: the literal (double bits for floats, int64 otherwise); Print: 1 for print() of
  /// values; TangentCall: the number of primal arguments. Read through the accessors.
  uint64_t bits = 0;
  std::vector<Block> regions; ///< nested blocks of control flow
  SourceLoc loc;
  /// CallAdjoint: per operand, the adjoint variable its rule adds into (-1: none). The IR has
  /// no references: a rule that adds into several adjoints names them here.
  std::vector<int64_t> outs;

  /// Call, TangentCall: the builtin.
  Builtin builtin() const { return Builtin(imm); }
  /// ArrayAtomic: the operation.
  AtomicOp atomic_op() const { return AtomicOp(imm); }
  /// DeclVar, LoadVar, StoreVar, AccumVar, AdjArrayRead: the local variable (Function::vars).
  int64_t var() const;
  /// Param, AccumParam: the parameter's index (Function::params).
  size_t param() const;
  /// AccumVar, AdjArrayRead: whether it subtracts (else adds).
  bool subtracts() const;
  /// CallAdjoint: the forward statement kind whose rule it calls.
  Op adjoint_of() const;
  /// CallAdjoint of a Call: the builtin.
  Builtin adjoint_builtin() const;
  /// CallAdjoint of an Extract of a struct: the field.
  int64_t adjoint_field() const;
  /// CallAdjoint of a Print: its format (Function::strings).
  size_t adjoint_format() const;
  /// AdjArrayAdd: the element is the thread's own (a plain add, else an atomic one).
  bool own_element() const;
  /// Checkpoint, ReverseSegments: the adjoint loop (numbered from 0 in the kernel).
  int64_t loop() const;
  /// Checkpoint: which part of the loop's checkpointing.
  CheckpointPart checkpoint_part() const;
  /// ThreadId: the launch index component (-1: the flat index); LaunchDim: the dimension.
  int64_t axis() const;
  /// ArrayShape: the array's dimension.
  int64_t dimension() const;
  /// Extract, Insert of a struct: the field.
  int64_t field() const;
  /// CallFunc, GradFunc: the device function (Function::callees).
  size_t callee() const;
  /// Print: its format (Function::strings).
  size_t format() const;
  /// Print: whether it is print() of values, whose adjoint prints their adjoints.
  bool prints_values() const;
  /// TangentCall: how many of args are the primal arguments (the tangents follow).
  size_t primal_args() const;
  /// Const of a floating type: the literal as a double.
  double const_float() const;
  /// Const of an integer or bool type: the literal as int64.
  int64_t const_int() const;
};

/// A sequence of statements. Loop bodies have block arguments (the induction value); a
/// While condition block yields its bool.
struct Block {
  std::vector<Stmt> stmts;
  std::vector<ValueId> args;
  ValueId yield = kNoValue;
};

/// A kernel parameter: a value (scalar, vector, struct, ...) or an array (type.ndim > 0).
struct Param {
  std::string name;
  Type type;
};

/// A mutable local variable.
struct LocalVar {
  Type type;
  SourceLoc loc;
};

/// A traced kernel, or a device function (kjit/dsl/functions.hpp) that kernels call.
struct Function {
  std::string name;              ///< qualified C++ name, e.g. "demo::springs"
  std::vector<Param> params;
  std::vector<LocalVar> vars;
  std::vector<Type> values;      ///< type of each value, by ValueId
  std::vector<std::string> strings;  ///< Print formats
  Block body;
  int launch_ndim = 0;           ///< 0: any launch (flat indices only); 1..4: fixed by tid
  SourceLoc loc;                 ///< where the kernel is defined

  // Device functions (is_function): the body's yield is the returned value (none: void).
  bool is_function = false;
  /// The device functions this one calls; CallFunc's imm indexes this list.
  std::vector<std::shared_ptr<const Function>> callees;
  /// A user-supplied adjoint (Warp's func_grad): params are this function's params, then
  /// `adj_ret` when the function returns a value; `out_vars` name the local variables that
  /// hold each parameter's adjoint when its body ends (-1: no adjoint for that parameter).
  std::shared_ptr<const Function> custom_adjoint;
  std::vector<int64_t> out_vars;
  /// A user-supplied replay (Warp's func_replay): what the adjoint's forward replay runs
  /// instead of the body; same params and result.
  std::shared_ptr<const Function> custom_replay;
  /// A user-supplied tangent (a `.jvp`): params are this function's params, then one tangent
  /// per parameter (same types); it returns the tangent of the result (void when the
  /// function returns nothing) and writes the tangents of the arrays the body writes.
  std::shared_ptr<const Function> custom_tangent;

  /// The returned type of a device function (void when it returns nothing).
  Type result_type() const { return body.yield == kNoValue ? Type::void_type() : type_of(body.yield); }

  /// Type of value `v`, by value: passes add values while they read types, and a reference
  /// into `values` would dangle when it grows.
  Type type_of(ValueId v) const { return values.at(v); }
  /// Allocates a new value of type `t`.
  ValueId new_value(Type t) {
    values.push_back(t);
    return ValueId(values.size() - 1);
  }
};

/// Calls `fn(stmt)` for every statement of `block` and its nested regions, in program order.
template <class Fn>
void for_each_stmt(const Block& block, Fn&& fn) {
  for (const Stmt& s : block.stmts) {
    fn(s);
    for (const Block& r : s.regions) for_each_stmt(r, fn);
  }
}

/// Whether `fn`, or a device function it calls, takes a gradient (GradFunc): such code has
/// no adjoint and no tangent.
bool takes_gradient(const Function& fn);

}  // namespace kjit::ir
