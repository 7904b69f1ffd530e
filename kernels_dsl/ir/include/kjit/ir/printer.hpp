// kjit/ir/printer.hpp — the readable text form of IR (golden tests, `kjit source --ir`).
#pragma once

#include <string>

#include "kjit/ir/ir.hpp"

namespace kjit::ir {

/// What the printer shows besides the statements.
struct PrintOptions {
  bool locations = true;  ///< append "# file:line" (file base name) to each statement
};

/// Prints `fn` as indented text: one statement per line, regions in braces.
std::string print(const Function& fn, const PrintOptions& options = {});
/// The printed form of one type, e.g. "vec3f" or "array2d<float32>".
inline std::string print(const Type& t) { return t.str(); }

}  // namespace kjit::ir
