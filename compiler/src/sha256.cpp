// SHA-256 as lowercase hex, through LLVM libSupport.
#include "sha256.hpp"

#include "llvm_support.hpp"

#include "kjit/error.hpp"

namespace kjit::compiler {

std::string sha256_hex(std::string_view data) {
  // LLVM 14's SHA256 counts the message length in a 32-bit byte counter (bits overflow at
  // 512 MiB): refuse rather than return a wrong digest. Artifacts and keys are far smaller.
  if (data.size() >= (size_t(1) << 29))
    throw Error(ErrorKind::Cache, "cannot hash " + std::to_string(data.size()) +
                                      " bytes: kjit artifacts are limited to 512 MiB");
  llvm::SHA256 sha;
  sha.update(llvm::StringRef(data.data(), data.size()));
  static const char* digits = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (unsigned char c : sha.final()) {
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  return hex;
}

}  // namespace kjit::compiler
