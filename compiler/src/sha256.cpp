// SHA-256 as lowercase hex: OpenSSL libcrypto's EVP digest, a maintained implementation that
// picks the x86 SHA extensions (or AVX2, or plain code) itself, opened on the first digest (as
// NVRTC is) so that loading libkjit does not pay for libcrypto's 17,000 relocations and
// initialisers; and LLVM libSupport's, the tests' reference and the fallback where no
// libcrypto can be opened (LLVM 14's runs at ~120 MB/s, too slow for the hit path).
#include "sha256.hpp"

#include <dlfcn.h>
#include <openssl/evp.h>

#include <cstdint>
#include <cstdlib>

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

/// The three libcrypto entry points the digest needs, typed by OpenSSL's own declarations
/// (the header is used, the library is not linked).
struct Crypto {
  decltype(&EVP_Digest) digest = nullptr;
  /// SHA-256's implementation, fetched from OpenSSL's default provider once: EVP_sha256()
  /// would be looked up again on every digest, which costs more than hashing a key (0.6
  /// against 0.3 us for 64 bytes; docs/BENCHMARKS.md). Never freed: it lives as long as the
  /// process, and freeing it at exit would race OpenSSL's own clean-up.
  const EVP_MD* md = nullptr;
};

/// libcrypto, opened once (thread-safe); `digest` stays null when it cannot be opened, or
/// when KJIT_CRYPTO_PATH is `none` (the tests' way to run the fallback).
const Crypto& crypto() {
  static const Crypto c = [] {
    Crypto r;
    const char* env = std::getenv("KJIT_CRYPTO_PATH");
    std::string path = env && *env ? env : "libcrypto.so.3";  // OpenSSL 3's ABI
    if (path == "none") return r;
    void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: see md above
    if (!lib) return r;
    auto fetch = reinterpret_cast<decltype(&EVP_MD_fetch)>(::dlsym(lib, "EVP_MD_fetch"));
    auto plain = reinterpret_cast<decltype(&EVP_sha256)>(::dlsym(lib, "EVP_sha256"));
    auto digest = reinterpret_cast<decltype(&EVP_Digest)>(::dlsym(lib, "EVP_Digest"));
    const EVP_MD* md = fetch ? fetch(nullptr, "SHA256", nullptr) : nullptr;
    if (!md && plain) md = plain();
    if (digest && md) {
      r.digest = digest;
      r.md = md;
    }
    return r;
  }();
  return c;
}

}  // namespace

bool sha256_uses_openssl() { return crypto().digest != nullptr; }

std::string sha256_hex(std::string_view data) {
  const Crypto& c = crypto();
  if (!c.digest) return sha256_hex_llvm(data);
  uint8_t digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (c.digest(data.data(), data.size(), digest, &size, c.md, nullptr) != 1 || size != 32)
    throw Error(ErrorKind::Internal, "OpenSSL's SHA-256 failed on " + std::to_string(data.size()) + " bytes");
  return to_hex(digest);
}

std::string sha256_hex_llvm(std::string_view data) {
  // LLVM 14's SHA256 counts the message length in a 32-bit byte counter (bits overflow at
  // 512 MiB): refuse rather than disagree.
  if (data.size() >= (size_t(1) << 29))
    throw Error(ErrorKind::Internal, "SHA-256 of " + std::to_string(data.size()) +
                                         " bytes needs OpenSSL's libcrypto.so.3, which could not be opened "
                                         "(the LLVM fallback is limited to 512 MiB)");
  llvm::SHA256 sha;
  sha.update(llvm::StringRef(data.data(), data.size()));
  return to_hex(reinterpret_cast<const uint8_t*>(sha.final().data()));
}

}  // namespace kjit::compiler
