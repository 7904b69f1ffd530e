// The options' fingerprint: a stable, unambiguous text of every field, hashed into module keys.
#include "kjit/compiler/compile_options.hpp"

namespace kjit::compiler {

std::string CompileOptions::fingerprint() const {
  std::string s = "fast_math=" + std::to_string(fast_math) + ";line_info=" + std::to_string(line_info) +
                  ";debug=" + std::to_string(debug) + ";max_registers=" + std::to_string(max_registers) +
                  ";opt_level=" + std::to_string(opt_level) + ";fast_compile=" + std::to_string(fast_compile) +
                  ";std=" + std::to_string(cxx_standard.size()) + ":" + cxx_standard + ";extra=[";
  // Length prefixes keep {"a b"} and {"a", "b"} apart.
  for (const std::string& e : extra) s += std::to_string(e.size()) + ":" + e + ",";
  return s + "]";
}

}  // namespace kjit::compiler
