// walker.hpp — turns a Program into a registered kjit kernel: a tracing callable that walks
// the AST through the DSL API (kjit::make_kernel).
#pragma once

#include <memory>
#include <string>

#include "kjit/kjit.hpp"
#include "program.hpp"

namespace fuzz {

using KernelReg = kjit::detail::KernelRegistration<
    kjit::dsl::Array<double>, kjit::dsl::Array<kjit::vec3d>, kjit::dsl::Array<kjit::mat33d>,
    kjit::dsl::Array<int32_t>, kjit::dsl::Double, kjit::dsl::Int, kjit::dsl::Array<double>,
    kjit::dsl::Array<kjit::vec3d>, kjit::dsl::Array<double>, kjit::dsl::Array<kjit::vec3d>,
    kjit::dsl::Array<double>>;

/// Registers `p` as kernel `name` of module `module`; it stays registered while the result lives.
std::unique_ptr<KernelReg> register_program(const Program& p, const std::string& name,
                                            const std::string& module);

}  // namespace fuzz
