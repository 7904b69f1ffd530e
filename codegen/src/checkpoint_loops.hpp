// The checkpointing of the adjoint's dynamic loops (docs/AUTODIFF.md "Dynamic loops"),
// written once for both adjoints: the scalar body (adjoint_emitter.hpp) and the cpu's lane
// function (adjoint_lanes.hpp), which keeps one counter for all its lanes and each slot for
// all of them (kj::lanes<T>).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "adjoint_loops.hpp"
#include "expr_emitter.hpp"
#include "source_writer.hpp"

namespace kjit::codegen {

/// What a variable's storage is called where the loop code copies it (its slot holds the same
/// type): "var3" in the scalar body, "var3_l" for a lane function's varying variable.
using LiveName = std::function<std::string(int64_t var)>;

/// The statement that copies a loop's state `src` into `dst` (a checkpoint slot or the live
/// storage): an assignment in the scalar body (assign_state), kj::copy_lanes in a lane function.
using StateCopy = std::function<std::string(const std::string& dst, const std::string& src)>;
/// `dst = src;`
std::string assign_state(const std::string& dst, const std::string& src);

/// Throws an Internal error unless `checkpoints` (CodegenOptions::loop_checkpoints) is even
/// and at least 2, as the segments' halving needs; every printer of checkpointed loops asks.
void check_loop_checkpoints(int checkpoints);

/// The declarations of `L`'s counters and of its state's checkpoint and segment slots
/// (`checkpoints` each) at the top of the scalar adjoint.
void emit_loop_declarations(SourceWriter& w, const AdjointLoop& L, const Names& n, int checkpoints, int indent);

/// `L`'s counters set back before the loop runs in the replay.
std::string loop_start(const AdjointLoop& L);

/// What the scalar adjoint runs when `L` passes its bound: marks the loop and the thread
/// (`thread_flag`), and reports status L.id + 1 (the thread's whole reverse sweep is skipped).
std::vector<std::string> loop_overflow(const AdjointLoop& L, const std::string& thread_flag);

/// The start of an iteration of `L` in the forward replay: keeps at most `checkpoints` (C)
/// copies of the changing state, one every `stride` iterations, the stride doubling (and every
/// other checkpoint dropped) when they run out. Past C*C iterations the bound is exceeded: the
/// loop stops checkpointing and runs `on_overflow` (lines).
void emit_checkpoint_step(SourceWriter& w, const AdjointLoop& L, const Names& n, int checkpoints, const LiveName& live,
                          const std::vector<std::string>& on_overflow, int indent, const ir::SourceLoc& loc,
                          const StateCopy& copy = assign_state);

/// The reverse of `L`, segment by segment (last first): restore the segment's checkpoint, run
/// it forward recording every iteration's start state (`record(indent)` replays iteration
/// L.name("k")), then for each iteration from last to first restore its state and
/// `reverse(indent)` it. With `single_direct`, a segment of one iteration is reversed from
/// its checkpoint without the copies into and out of the segment slots.
void emit_reverse_segments(SourceWriter& w, const AdjointLoop& L, const Names& n, const LiveName& live, int indent,
                           const ir::SourceLoc& loc, const std::function<void(int)>& record,
                           const std::function<void(int)>& reverse, bool single_direct = false,
                           const StateCopy& copy = assign_state);

}  // namespace kjit::codegen
