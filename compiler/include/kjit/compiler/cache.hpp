// kjit/compiler/cache.hpp — the on-disk module cache: where it lives, what it holds, its
// statistics, and maintenance (list, verify, prune, clear) for the `kjit cache` commands.
// docs/CACHE.md describes the layout and the guarantees.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::compiler {

/// The default bound on the cache's size: 4 GiB.
constexpr uint64_t kDefaultCacheMaxSize = uint64_t(4) << 30;

/// How a Cache is set up.
struct CacheConfig {
  /// The cache folder (it holds the format-version subfolder "v1"). Empty: the default,
  /// $KJIT_CACHE_DIR, else $XDG_CACHE_HOME/kjit, else ~/.cache/kjit.
  std::string dir;
  /// Bound on the bytes of all entries. After a publish that exceeds it, the least recently
  /// used entries are removed until the cache fits. 0: unbounded.
  uint64_t max_size = kDefaultCacheMaxSize;
  /// Deduplicate concurrent compiles of one key (threads and processes) with a lock file per
  /// key, so that one compiles and the others wait and then load its entry. Correctness never
  /// depends on it: without it every builder compiles and the first to publish wins.
  bool lock_files = true;
  /// Never use the disk: every build compiles in memory.
  bool in_memory = false;
  /// Receives each warning as one line (without a "kjit: warning: " prefix). Default: the
  /// line is written to stderr with that prefix.
  std::function<void(const std::string&)> on_warning;

  /// The configuration the environment asks for: the folder as above, KJIT_CACHE_MAX_SIZE
  /// (a size as parse_size() reads it; an invalid value warns and keeps the default), and
  /// KJIT_CACHE_LOCKS=0 to turn lock files off.
  static CacheConfig from_environment();
};

/// How a cache folder can be used; decided when the Cache is opened.
enum class CacheMode {
  ReadWrite,  ///< hits load from disk, misses are compiled and published
  ReadOnly,   ///< hits load from disk, misses are compiled in memory (the folder is read-only)
  InMemory,   ///< the disk is not used (disabled, cannot be created, or unsafe to load from)
};

/// "read-write", "read-only" or "in-memory".
const char* to_string(CacheMode mode);

/// Counters of one Cache object since it was opened (or since reset_stats()).
struct CacheStats {
  uint64_t hits = 0;              ///< builds served by a verified entry (no compiler run)
  uint64_t misses = 0;            ///< builds that found no usable entry
  uint64_t compiles = 0;          ///< compiler runs, failed ones included
  uint64_t compile_failures = 0;  ///< compiler runs that failed
  uint64_t bad_entries = 0;       ///< entries found corrupt, incomplete or unsafe (then rebuilt)
  uint64_t published = 0;         ///< entries written
  uint64_t evicted = 0;           ///< entries removed by pruning
  uint64_t bytes_loaded = 0;      ///< artifact bytes read and verified on hits
  uint64_t bytes_written = 0;     ///< bytes of the entries written
  double compile_ms = 0;          ///< wall time spent in compilers
  double load_ms = 0;             ///< wall time spent finding and verifying hits
};

/// One entry on disk, as list() reports it.
struct CacheEntryInfo {
  std::string path;        ///< the entry's folder
  std::string module;      ///< the module's name (meta.json; "" when unreadable)
  std::string key;         ///< the module key (the folder name's suffix)
  std::string target;      ///< "sm_90", "compute_90" or "cpu" ("" when unreadable)
  uint64_t bytes = 0;      ///< size of all files of the entry
  double compile_ms = 0;   ///< how long its compile took
  int64_t created = 0;     ///< when it was published (unix seconds; 0 when unreadable)
  int64_t last_used = 0;   ///< last publish or hit (unix seconds: meta.json's mtime)
};

/// What the cache folder holds.
struct CacheUsage {
  size_t entries = 0;
  uint64_t bytes = 0;                          ///< all entries
  double compile_ms = 0;                       ///< the compile time the entries stand for
  std::map<std::string, size_t> by_target;     ///< entries per target name
  size_t temporaries = 0;  ///< leftover staging, trash and lock files (prune removes old ones)
};

/// One bad entry that verify() found.
struct CacheProblem {
  std::string path;
  std::string reason;
  bool removed = false;
  /// Written by another kjit version (another cache format, or descriptions from before they
  /// were hashed): unusable here but not damaged, unlike an edited or corrupt entry.
  bool stale = false;
};

/// What verify() did.
struct CacheVerifyReport {
  size_t checked = 0;
  size_t valid = 0;
  std::vector<CacheProblem> problems;
};

/// What prune() did.
struct CachePruneReport {
  size_t removed = 0;
  uint64_t bytes_removed = 0;
  size_t entries_left = 0;
  uint64_t bytes_left = 0;
};

/// A module cache folder. Thread-safe; many processes may share one folder. build_module()
/// without a cache uses Cache::global().
class Cache {
 public:
  /// Opens (creating if needed, with owner-only permissions) the folder `config` names and
  /// decides its mode. Never throws for an unusable folder: it warns once and degrades to
  /// ReadOnly or InMemory.
  explicit Cache(CacheConfig config = CacheConfig::from_environment());
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  /// The process-wide cache, configured from the environment on first use.
  static Cache& global();

  /// The cache folder (holding the format-version subfolder).
  const std::string& dir() const;
  /// The folder entries live in: dir() + "/v" + kCacheFormatVersion.
  const std::string& root() const;
  /// How the folder is used.
  CacheMode mode() const;
  /// Why the mode is not ReadWrite ("" when it is).
  const std::string& mode_reason() const;
  /// The size bound (0: unbounded).
  uint64_t max_size() const;

  /// This object's counters.
  CacheStats stats() const;
  /// Sets the counters to zero.
  void reset_stats();

  /// The folder an entry for (module, key) has: root()/<sanitised name>-<key>.
  std::string entry_path(const std::string& module_name, const std::string& key) const;

  /// Every entry, least recently used first. Reads each meta.json but verifies nothing.
  std::vector<CacheEntryInfo> list() const;
  /// Totals over the entries.
  CacheUsage usage() const;
  /// Checks every entry completely (meta.json, sizes and SHA-256 of the artifact and the
  /// source, permissions); removes the bad ones when `remove_bad` (and the folder is writable).
  CacheVerifyReport verify(bool remove_bad = true);
  /// Removes least-recently-used entries until the entries take at most `max_bytes`, and
  /// leftovers of crashed builds (staging and trash folders over an hour old).
  CachePruneReport prune(uint64_t max_bytes);
  /// Removes every entry and leftover; returns the number of entries removed.
  size_t clear();

  struct Impl;

 private:
  friend struct CacheAccess;
  std::unique_ptr<Impl> impl_;
};

/// Reads a size: a number of bytes with an optional unit, K/M/G/T (powers of 1024; "KiB",
/// "KB", "k" and lower case accepted), and a fraction ("1.5G"). Throws a User error naming
/// the text otherwise.
uint64_t parse_size(std::string_view text);

/// A module name made safe as one path component: [A-Za-z0-9._-] kept, other runs replaced by
/// '_', no leading '.' or '-', at most 48 characters, "module" when nothing is left.
std::string sanitize_module_name(std::string_view name);

/// The default cache folder: $KJIT_CACHE_DIR, else $XDG_CACHE_HOME/kjit, else ~/.cache/kjit
/// (the home folder from $HOME or the password database).
std::string default_cache_dir();

}  // namespace kjit::compiler
