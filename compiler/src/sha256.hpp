// SHA-256 as lowercase hex (64 digits): LLVM libSupport's implementation, or the same digest
// computed with the x86 SHA extensions where the CPU has them (over ten times faster; cache
// hits hash whole artifacts).
#pragma once

#include <string>
#include <string_view>

namespace kjit::compiler {

/// The SHA-256 of `data` as 64 lowercase hex digits (the fastest implementation available).
std::string sha256_hex(std::string_view data);

/// The same digest, always through LLVM's implementation (the reference the fast path is
/// tested against).
std::string sha256_hex_llvm(std::string_view data);

/// Whether sha256_hex uses the CPU's SHA extensions.
bool sha256_accelerated();

}  // namespace kjit::compiler
