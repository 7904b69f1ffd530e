// kjit/ir/dead_code.hpp — removes statements whose values nobody uses and that have no effect.
#pragma once

#include "kjit/ir/ir.hpp"

namespace kjit::ir {

/// Deletes pure statements with unused results until none is left. Tracing leaves such
/// statements behind (an element read before a store to it, a copy that was not used); they
/// must go before autodiff, where a dead array read would still add to a gradient.
void eliminate_dead_code(Function& fn);

}  // namespace kjit::ir
