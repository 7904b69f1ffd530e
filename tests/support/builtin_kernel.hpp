// Builds, at run time, a kernel that applies one builtin elementwise: out[i] = f(a0[i], ...).
// Tests use it to check every builtin's forward values and gradients from one table.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kjit/kernel.hpp"

namespace kjit::test {

/// A kernel `name` in module `module` with parameters a0..a(n-1) (1-D arrays of `args`) and
/// `out` (a 1-D array of the builtin's result type), whose thread i computes
/// out[i] = builtin(a0[i], ..., a(n-1)[i]). Registered while the returned object lives.
std::unique_ptr<KernelDef> make_builtin_kernel(const std::string& name, const std::string& module,
                                               ir::Builtin builtin, const std::vector<ir::Type>& args);

/// The result type of `builtin` on `args` (throws when the rule rejects them).
ir::Type builtin_result(ir::Builtin builtin, const std::vector<ir::Type>& args);

}  // namespace kjit::test
