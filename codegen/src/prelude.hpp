// The prelude: named chunks of the embedded prelude files, and the selection of the chunks
// one module needs (with their dependencies, in a fixed order).
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace kjit::codegen {

/// The chunks a module asks for; resolved into text by prelude_text().
class PreludeUse {
 public:
  /// Requests chunk `name` (and, when the text is built, everything it requires).
  void need(const std::string& name) { chunks_.insert(name); }
  const std::set<std::string>& chunks() const { return chunks_; }

 private:
  std::set<std::string> chunks_;
};

/// The text of the requested chunks and their dependencies, in prelude order. Throws an
/// Internal error for unknown chunk names.
std::string prelude_text(const PreludeUse& use);

/// The names of the requested chunks and of everything they require.
std::set<std::string> prelude_closure(const PreludeUse& use);

/// Whether a chunk of this name exists.
bool prelude_has_chunk(std::string_view name);

/// A hash (hex) of the whole prelude; part of every module identity.
const std::string& prelude_hash();

}  // namespace kjit::codegen
