// SHA-256 as lowercase hex: OpenSSL libcrypto's EVP digest, a maintained implementation that
// picks the x86 SHA extensions (or AVX2, or plain code) itself; and LLVM libSupport's, kept
// only as the tests' reference (LLVM 14's runs at ~120 MB/s, too slow for the hit path).
#include "sha256.hpp"

#include <openssl/evp.h>

#include <cstdint>

#include "llvm_support.hpp"

#include "kjit/error.hpp"

namespace kjit::compiler {

namespace {

std::string to_hex(const uint8_t* digest) {
  static const char* digits = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (int i = 0; i < 32; ++i) {
    hex += digits[digest[i] >> 4];
    hex += digits[digest[i] & 15];
  }
  return hex;
}

/// SHA-256's implementation, fetched from OpenSSL's default provider once: EVP_sha256() would
/// be looked up again on every digest, which costs more than hashing a key (0.6 against 0.3 us
/// for 64 bytes; docs/BENCHMARKS.md). Never freed: it lives as long as the process, and
/// freeing it at exit would race OpenSSL's own clean-up.
const EVP_MD* sha256_md() {
  static const EVP_MD* md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched ? fetched : EVP_sha256();
  }();
  return md;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, sha256_md(), nullptr) != 1 || size != 32)
    throw Error(ErrorKind::Internal, "OpenSSL's SHA-256 failed on " + std::to_string(data.size()) + " bytes");
  return to_hex(digest);
}

std::string sha256_hex_llvm(std::string_view data) {
  // LLVM 14's SHA256 counts the message length in a 32-bit byte counter (bits overflow at
  // 512 MiB): refuse rather than disagree.
  if (data.size() >= (size_t(1) << 29))
    throw Error(ErrorKind::Internal, "the LLVM reference SHA-256 cannot hash " + std::to_string(data.size()) + " bytes");
  llvm::SHA256 sha;
  sha.update(llvm::StringRef(data.data(), data.size()));
  return to_hex(reinterpret_cast<const uint8_t*>(sha.final().data()));
}

}  // namespace kjit::compiler
