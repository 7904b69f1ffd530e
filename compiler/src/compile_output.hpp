// What a compiler driver (NVRTC or the host compiler) hands back: the artifact bytes or the
// log of a failure, and how long it took.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kjit::compiler {

/// The result of running one compiler on one module text.
struct CompileOutput {
  bool ok = false;
  std::vector<char> bytes;  ///< cubin, PTX (without a trailing NUL) or shared object
  std::string log;          ///< the compiler's log (diagnostics; empty when quiet)
  std::string compiler;     ///< "NVRTC 13.0" or the host compiler's path
  std::string options;      ///< the options used, space-separated (for messages)
  std::string generated_file;  ///< the name the text had in diagnostics
  double ms = 0;            ///< wall time of the compiler call
  /// Per-entry resources, {"<entry>": {"registers": n, "stack_bytes": n, "shared_bytes": n}},
  /// or null when the artifact kind does not record them (PTX, shared objects).
  nlohmann::json resources;
};

}  // namespace kjit::compiler
