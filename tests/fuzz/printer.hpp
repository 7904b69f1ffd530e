// printer.hpp — a Program as DSL C++ source: a KJIT_KERNEL a user can paste to reproduce it.
#pragma once

#include <string>

#include "program.hpp"

namespace fuzz {

/// The program as a header: the device functions it calls, then KJIT_KERNEL(name, ...).
std::string to_dsl_source(const Program& p, const std::string& name);
/// Statements in the program (all nesting levels): the size the shrinker minimises.
int program_size(const Program& p);

}  // namespace fuzz
