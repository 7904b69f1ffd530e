// The dynamic loops of a function's adjoint, found once by the pass list (lower.cpp): what
// each loop changes, only reads and defines, which the checkpointing of both adjoints
// (checkpoint_loops.hpp) and the module's loop numbering read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kjit/ir/ir.hpp"

namespace kjit::codegen {

struct Names;

/// A dynamic loop of the adjoint: its id, the outer variables it changes (checkpointed every
/// iteration block) and only reads (saved once at entry), and the floating values defined
/// inside it. Their adjoints restart every iteration: the scalar body declares them inside
/// the iteration, the lane function zeroes those it keeps in lane arrays (body_values).
struct AdjointLoop {
  int id = 0;
  const ir::Stmt* stmt = nullptr;  ///< the For or While
  std::vector<int64_t> state;
  std::vector<int64_t> readonly;
  std::vector<ir::ValueId> body_values;

  /// The name of the loop's `what` ("n", "stride", "count", "ovf", ...): "kj_n3".
  std::string name(const char* what) const { return std::string("kj_") + what + std::to_string(id); }
  /// The checkpoint slots, segment slots and read-only copy of variable `var`.
  std::string ckpt(const Names& n, int64_t var) const;
  std::string seg(const Names& n, int64_t var) const;
  std::string ro(const Names& n, int64_t var) const;
};

/// The dynamic loops of a lowered function, in program order (outer loops first), numbered
/// from 0; numbered_from gives them the module's numbers (each loop's id + 1 is the status
/// code it reports when it passes its checkpoint bound).
struct AdjointLoops {
  AdjointLoops() = default;
  explicit AdjointLoops(const ir::Function& lowered);
  /// The same loops numbered from `first`.
  AdjointLoops numbered_from(int first) const;
  const AdjointLoop& of(const ir::Stmt& loop) const { return list.at(index.at(&loop)); }
  std::vector<AdjointLoop> list;
  std::map<const ir::Stmt*, size_t> index;
};

}  // namespace kjit::codegen
