// Module keys: SHA-256 over everything that changes a module's artifact, and nothing that
// depends on where kjit or the program was built.
#include <kjit/abi.h>

#include "cache_impl.hpp"
#include "host_compiler.hpp"
#include "kjit/compiler/build.hpp"
#include "kjit/compiler/key.hpp"
#include "nvrtc_compiler.hpp"
#include "sha256.hpp"

namespace kjit::compiler {

std::string compiler_identity(const Target& target) {
  return target.is_gpu() ? nvrtc_identity() : host_compiler_identity();
}

std::string module_key_material(const ModuleSource& source, const Target& target,
                                const CompileOptions& options) {
  // Without an identity the text itself identifies the module (hand-written sources); it is
  // generated here only in that case.
  const std::string& id = source.identity.empty() ? generated_text(source) : source.identity;
  std::string m = "kjit module key\n";
  m += "cache-format " + std::to_string(kCacheFormatVersion) + "\n";
  m += "abi " + std::to_string(kj::kAbiVersion) + "\n";
  m += "module " + std::to_string(source.name.size()) + ":" + source.name + "\n";
  m += "target " + target.name() + "\n";
  m += "compiler " + compiler_identity(target) + "\n";
  m += "options " + options.fingerprint() + "\n";
  m += std::string(source.identity.empty() ? "text " : "identity ") + std::to_string(id.size()) + "\n";
  m += id;
  return m;
}

std::string module_key(const ModuleSource& source, const Target& target, const CompileOptions& options) {
  return sha256_hex(module_key_material(source, target, options));
}

}  // namespace kjit::compiler
