// The line-tracking writer of generated text.
#include "source_writer.hpp"

#include <cstring>

#include "kjit/error.hpp"
#include "text_escape.hpp"

namespace kjit::codegen {

namespace {
std::string quoted(const char* file) { return "\"" + literal_text(file) + "\""; }
}  // namespace

void SourceWriter::put(const std::string& text, int indent) {
  text_.append(size_t(indent) * 2, ' ');
  text_ += text;
  text_ += '\n';
  ++line_;
}

void SourceWriter::to_generated() {
  if (!in_user_) return;
  in_user_ = false;
  // After this directive the next line is numbered as its real line in the text.
  if (directives_) put("#line " + std::to_string(line_ + 2) + " " + quoted(generated_name_.c_str()), 0);
}

void SourceWriter::line(const std::string& text, int indent) {
  to_generated();
  put(text, indent);
}

void SourceWriter::user_line(const std::string& text, int indent, const ir::SourceLoc& loc) {
  if (!loc.known()) {
    line(text, indent);
    return;
  }
  // The compiler numbers each physical line after a directive one higher than the last, so
  // a directive is needed whenever that presumed line is not the statement's line.
  if (directives_ && (!in_user_ || loc.line != presumed_line_ || std::strcmp(loc.file, user_loc_.file) != 0))
    put("#line " + std::to_string(loc.line) + " " + quoted(loc.file), 0);
  in_user_ = true;
  user_loc_ = loc;
  map_.push_back(SourceMapping{line_ + 1, loc});
  put(text, indent);
  presumed_line_ = loc.line + 1;
}

void SourceWriter::raw(const std::string& text) {
  to_generated();
  text_ += text;
  if (!text.empty() && text.back() != '\n') text_ += '\n';
  for (char c : text) line_ += c == '\n';
  if (!text.empty() && text.back() != '\n') ++line_;
}

}  // namespace kjit::codegen
