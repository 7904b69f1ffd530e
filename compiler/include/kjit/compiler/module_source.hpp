// kjit/compiler/module_source.hpp — the compiler's input: one module, identified before its
// text exists, so that a cache hit needs no code generation.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kjit::compiler {

/// A module as codegen hands it to the compiler. The key hashes `identity` (what determines
/// the text) rather than the text itself; the text is produced only on a cache miss.
struct ModuleSource {
  std::string name;  ///< the module's name (sanitised before any use in a path)
  /// Everything that determines the generated text (codegen version, prelude hash, codegen
  /// options, serialised IR). When empty, the text itself is the identity (hand-written
  /// sources in tests).
  std::string identity;
  /// The complete translation unit, prelude included; may be empty when `generate` is set.
  mutable std::string text;
  /// Produces the text on a cache miss.
  std::function<std::string()> generate;
  /// `extern "C"` names the artifact must define; checked after compiling.
  std::vector<std::string> entry_points;
  /// Kernel descriptions stored in meta.json unchanged; when null, `describe` produces them
  /// (only when an entry is written: a cache hit reads them from meta.json).
  mutable nlohmann::json kernels;
  /// Produces `kernels` on demand (codegen's describe_module).
  std::function<nlohmann::json()> describe;
  /// What codegen says of each kernel without planning the module (describe_kernel, cheap): a
  /// hit's meta.json must agree with it on names, parameters, entry points and checks. When
  /// null (hand-written sources) only the entry points are cross-checked.
  std::function<nlohmann::json()> expected_kernels;

  /// The kernel descriptions, computing them if needed (an empty array when nobody can).
  const nlohmann::json& kernel_descriptions() const {
    if (kernels.is_null()) kernels = describe ? describe() : nlohmann::json::array();
    return kernels;
  }

  /// The text, generating it if needed.
  const std::string& source_text() const {
    if (text.empty() && generate) text = generate();
    return text;
  }
};

}  // namespace kjit::compiler
