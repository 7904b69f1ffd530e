// SHA-256 as lowercase hex (64 digits), through OpenSSL's libcrypto opened at run time (which
// uses the CPU's SHA extensions where it has them; cache hits hash whole artifacts), and LLVM's
// as a reference and fallback.
#pragma once

#include <string>
#include <string_view>

namespace kjit::compiler {

/// The SHA-256 of `data` as 64 lowercase hex digits (OpenSSL EVP; LLVM's where libcrypto.so.3
/// cannot be opened, or KJIT_CRYPTO_PATH is `none`).
std::string sha256_hex(std::string_view data);

/// Whether sha256_hex uses OpenSSL (libcrypto opened, on first call) rather than the fallback.
bool sha256_uses_openssl();

/// The same digest through LLVM libSupport's implementation: an independent reference the
/// tests check sha256_hex against. Slow (~120 MB/s), and limited to inputs under 512 MiB.
std::string sha256_hex_llvm(std::string_view data);

}  // namespace kjit::compiler
