// kjit/compiler/compile_options.hpp — per-module compiler options; every field is part of the key.
#pragma once

#include <string>
#include <vector>

namespace kjit::compiler {

/// Options that change a module's artifact. Each one enters the module key through
/// fingerprint(), so two option sets that compile differently never share a cache entry.
struct CompileOptions {
  bool fast_math = false;      ///< NVRTC --use_fast_math; host -ffast-math
  bool line_info = false;      ///< NVRTC -lineinfo (profiler source view); host -g
  bool debug = false;          ///< NVRTC -G / host -O0 -g
  int max_registers = 0;       ///< NVRTC --maxrregcount; 0 = compiler's choice
  int opt_level = 3;           ///< 0..3; NVRTC -Xptxas -O<n>, host -O<n>
  bool fast_compile = false;   ///< NVRTC's fast-compile mode where the installed NVRTC has it
  std::string cxx_standard = "c++17";
  std::vector<std::string> extra;  ///< appended verbatim to the compiler's command line

  /// A stable text that names every field; hashed into the module key.
  std::string fingerprint() const;
  bool operator==(const CompileOptions& o) const { return fingerprint() == o.fingerprint(); }
};

}  // namespace kjit::compiler
