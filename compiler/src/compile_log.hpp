// Compiler diagnostics mapped back to the user's lines: parses NVRTC and GCC/Clang logs, and
// quotes the generated lines each diagnostic points at (through the text's #line directives).
#pragma once

#include <string>
#include <vector>

namespace kjit::compiler {

/// One error the compiler reported.
struct Diagnostic {
  std::string file;     ///< as the compiler printed it: a user header (via #line) or the module
  int line = 0;         ///< 1-based line in `file`
  std::string message;  ///< the text after "error:"
};

/// The errors in a compiler log: NVRTC's "file(line): error: msg" and GCC/Clang's
/// "file:line:col: error: msg" (fatal errors included; warnings and notes are skipped).
std::vector<Diagnostic> parse_diagnostics(const std::string& log);

/// The 1-based line numbers of `text` whose presumed location (after `#line N "file"`
/// directives; `main_file` before the first one) is `file`:`line`. A file matches exactly, or
/// by base name when no line matches exactly (compilers sometimes shorten paths).
std::vector<int> generated_lines_for(const std::string& text, const std::string& main_file,
                                     const std::string& file, int line);

/// Everything a compile error needs to say.
struct CompileFailure {
  std::string module_name;
  std::string target;       ///< "sm_90", "cpu", ...
  std::string compiler;     ///< "NVRTC 13.0" or the host compiler's command
  std::string options;      ///< the command-line options used
  std::string log;          ///< the compiler's complete log
  std::string text;         ///< the generated source
  std::string saved_path;   ///< where the source was saved for inspection ("" when it could not be)
  std::string generated_file;  ///< the name the generated text has in diagnostics
};

/// The message of a Compile error: each error at the user's file:line with the offending
/// generated line(s), a hint when the error lies in kjit's own generated code, the compiler
/// log, and where the source was saved.
std::string format_compile_failure(const CompileFailure& f);

}  // namespace kjit::compiler
