// SHA-256 as lowercase hex (64 digits), through LLVM libSupport.
#pragma once

#include <string>
#include <string_view>

namespace kjit::compiler {

/// The SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace kjit::compiler
