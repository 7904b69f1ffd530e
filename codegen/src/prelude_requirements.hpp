// Which prelude chunks a module needs, read off its IR before any code is written.
#pragma once

#include <vector>

#include "kjit/codegen/codegen.hpp"
#include "prelude.hpp"

namespace kjit::codegen {

/// The chunks `kernels` need: their types, builtins (forward, and adjoint when
/// `with_adjoint`), array accesses and atomics.
PreludeUse prelude_requirements(const std::vector<const ir::Function*>& kernels, bool with_adjoint);

}  // namespace kjit::codegen
