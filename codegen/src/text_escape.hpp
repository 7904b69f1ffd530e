// Names in generated text: escaped so that no module, kernel or file name can end a comment
// line or a string literal early (a newline in a name would otherwise become code).
#pragma once

#include <cstdio>
#include <string>

namespace kjit::codegen {

/// `text` as the inside of a C string literal: quotes and backslashes escaped, \n \t \r by
/// name, every other control byte as a three-digit octal escape.
inline std::string literal_text(const std::string& text) {
  std::string out;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') out += '\\', out += ch;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else out += ch;
  }
  return out;
}

/// `text` for the middle of a `//` comment: control bytes and backslashes (a backslash before
/// a newline continues the comment onto the next line) written as \xNN.
inline std::string comment_text(const std::string& text) {
  std::string out;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else out += ch;
  }
  return out;
}

}  // namespace kjit::codegen
