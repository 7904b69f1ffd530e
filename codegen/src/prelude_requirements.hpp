// Which prelude chunks a module needs, read off its IR before any code is written.
#pragma once

#include <vector>

#include "kjit/codegen/codegen.hpp"
#include "lower.hpp"
#include "prelude.hpp"

namespace kjit::codegen {

/// The chunks `kernels` (lowered in `lowered`) need: their types, builtins (forward, and
/// adjoint when `with_adjoint`), array accesses and atomics, and the checkpoint reads of an
/// adjoint swept back in more than one span (LoweredFunction::sweep_spans).
PreludeUse prelude_requirements(const std::vector<const ir::Function*>& kernels, const LoweredModule& lowered,
                                bool with_adjoint);

/// Float sine, cosine and tangent calls (of the kernels and the device functions they call)
/// from which a module's CUDA code calls one out-of-line copy of each rather than inlining
/// every one (the text defines KJ_OUTLINE_TRIG; the prelude's math chunk says why). Each is
/// inlined up to three times (forward, replay, adjoint rule); below this, as fast as ever.
constexpr int kOutlineTrigCalls = 16;

/// Whether `kernels` call float sin, cos and tan kOutlineTrigCalls times or more.
bool outline_trig(const std::vector<const ir::Function*>& kernels);

}  // namespace kjit::codegen
