// The cache's internals, shared by cache.cpp (opening, hits, publishing), cache_maintenance.cpp
// (list, verify, prune, clear) and build.cpp.
#pragma once

#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "kjit/compiler/artifact.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/compiler/compile_options.hpp"
#include "kjit/compiler/module_source.hpp"

namespace kjit::compiler {

struct Cache::Impl {
  CacheConfig config;
  std::string dir;   ///< absolute, symlinks resolved
  std::string root;  ///< dir + "/v<format>"
  CacheMode mode = CacheMode::InMemory;
  std::string mode_reason;

  mutable std::mutex mu;  ///< guards everything below
  CacheStats stats;
  std::set<std::string> warned;  ///< tags of warnings given once
  bool size_known = false;       ///< whether size_estimate came from a scan
  uint64_t size_estimate = 0;    ///< bytes of all entries, as last scanned plus publishes since
  unsigned publishes_since_scan = 0;

  /// Decides dir, root and mode from config (creating folders as needed).
  void open();

  /// Sends one warning line to config.on_warning or stderr.
  void warn(const std::string& message) const;
  /// Warns once per `tag` for this cache.
  void warn_once(const std::string& tag, const std::string& message);

  /// root/<sanitised name>-<key>
  std::string entry_path(const std::string& module_name, const std::string& key) const;

  /// A verified hit, or nullopt. When an entry exists but cannot be used, *problem says why.
  std::optional<Artifact> load(const ModuleSource& source, const Target& target,
                               const std::string& key, std::string* problem);

  /// The whole build of one module: a hit; else (under the key's lock) a second look, then
  /// compile and publish. `text`, when given, is the module's text generated beforehand.
  Artifact build(const ModuleSource& source, const Target& target, const CompileOptions& options,
                 const std::string& key, const std::string* text);

  /// Compiles `text` and publishes the entry (or keeps it in memory when the folder cannot
  /// be written). Throws the Compile error of a failed compile.
  Artifact compile_and_store(const ModuleSource& source, const Target& target,
                             const CompileOptions& options, const std::string& key,
                             const std::string& text);

  /// Moves an entry folder out of the way (into a trash folder) and deletes it. True when
  /// the path is gone (also when someone else removed it first).
  bool remove_entry(const std::string& path);

  /// Accounts for a publish of `bytes`; prunes when the bound is exceeded (never `keep`).
  void after_publish(uint64_t bytes, const std::string& keep);

  /// prune() with an entry to keep (the one just published).
  CachePruneReport prune_except(uint64_t max_bytes, const std::string& keep);
};

/// Gives the build functions access to a Cache's internals.
struct CacheAccess {
  static Cache::Impl& impl(Cache& cache) { return *cache.impl_; }
};

/// The module's text, generated at most once even when several threads ask at once.
const std::string& generated_text(const ModuleSource& source);

}  // namespace kjit::compiler
