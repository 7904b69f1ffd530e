// Builds generated text line by line, tracking line numbers for #line directives and the
// source map.
#pragma once

#include <string>
#include <vector>

#include "kjit/codegen/codegen.hpp"

namespace kjit::codegen {

/// Appends lines of generated code. Lines that come from user statements are preceded by
/// a #line directive when their location changes; other lines restore the generated file's
/// own numbering, so that compiler diagnostics name the right file either way.
class SourceWriter {
 public:
  SourceWriter(std::string generated_name, bool line_directives)
      : generated_name_(std::move(generated_name)), directives_(line_directives) {}

  /// A line of kjit's own code (prelude, entry wrappers).
  void line(const std::string& text, int indent = 0);
  /// A line generated from a user statement at `loc`.
  void user_line(const std::string& text, int indent, const ir::SourceLoc& loc);
  /// Appends text verbatim (several lines of prelude).
  void raw(const std::string& text);

  const std::string& text() const { return text_; }
  std::vector<SourceMapping>& source_map() { return map_; }
  int current_line() const { return line_ + 1; }
  /// The user statement of the last user_line (unknown before the first).
  const ir::SourceLoc& last_user_loc() const { return user_loc_; }

 private:
  void put(const std::string& text, int indent);
  void to_generated();

  std::string generated_name_;
  bool directives_;
  std::string text_;
  int line_ = 0;  ///< lines written so far
  bool in_user_ = false;
  ir::SourceLoc user_loc_;
  int presumed_line_ = 0;  ///< the line number the compiler gives the next user line
  std::vector<SourceMapping> map_;
};

}  // namespace kjit::codegen
