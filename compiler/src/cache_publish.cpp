// Cache misses: one compile per key (a lock file per key deduplicates threads and
// processes), entry-point checks, atomic publication of the entry folder, and the in-memory
// fallback when the folder cannot be written.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <thread>

#include "cache_entry.hpp"
#include "cache_impl.hpp"
#include "compile_log.hpp"
#include "elf_reader.hpp"
#include "file_safety.hpp"
#include "file_util.hpp"
#include "host_compiler.hpp"
#include "kjit/codegen/tangent.hpp"
#include "kjit/error.hpp"
#include "memory_library.hpp"
#include "nvrtc_compiler.hpp"

namespace kjit::compiler {

namespace {

/// An exclusive lock on root/.locks/<key>.lock, held for the object's lifetime. The lock is
/// only an optimisation (one compile instead of many): when it cannot be had, building goes
/// on without it.
class KeyLock {
 public:
  KeyLock() = default;
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;
  ~KeyLock() { release(); }

  /// Waits (polling, so that a wedged holder cannot block forever) for the lock.
  bool acquire(const std::string& root, const std::string& key) {
    std::string dir = root + "/.locks";
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
    if (!unsafe_folder(dir).empty()) return false;
    path_ = dir + "/" + key + ".lock";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    for (int tries = 0; tries < 8; ++tries) {
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd_ < 0) return false;
      auto pause = std::chrono::microseconds(500);
      bool locked = false;
      while (!(locked = ::flock(fd_, LOCK_EX | LOCK_NB) == 0)) {
        if (errno != EWOULDBLOCK && errno != EINTR) break;
        if (std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(20000));
      }
      if (!locked) {
        release();
        return false;
      }
      // A holder that finished unlinked the file: a lock on that inode excludes nobody who
      // opens the path now, so it counts only while the path still names our file.
      struct stat a, b;
      if (::fstat(fd_, &a) == 0 && ::stat(path_.c_str(), &b) == 0 && a.st_ino == b.st_ino) {
        held_ = true;
        return true;
      }
      release();
    }
    return false;
  }

  bool held() const { return held_; }

 private:
  void release() {
    if (fd_ < 0) return;
    if (held_) {
      struct stat a, b;
      if (::fstat(fd_, &a) == 0 && ::stat(path_.c_str(), &b) == 0 && a.st_ino == b.st_ino)
        ::unlink(path_.c_str());  // lock files do not accumulate
    }
    ::close(fd_);
    fd_ = -1;
    held_ = false;
  }

  std::string path_;
  int fd_ = -1;
  bool held_ = false;
};

/// Removes a folder on scope exit unless released.
struct FolderGuard {
  std::string path;
  ~FolderGuard() {
    if (!path.empty()) remove_tree(path);
  }
};

bool no_compile_requested() {
  const char* v = std::getenv("KJIT_NO_COMPILE");
  return v && *v && std::strcmp(v, "0") != 0;
}

/// Throws an Internal error naming the entry points `out` lacks: codegen promised them.
void check_entry_points(const ModuleSource& source, const Target& target, const CompileOutput& out) {
  std::vector<std::string> missing;
  std::string_view bytes(out.bytes.data(), out.bytes.size());
  if (target.kind == TargetKind::Ptx) {
    for (const std::string& e : source.entry_points)
      if (bytes.find(".entry " + e + "(") == std::string_view::npos) missing.push_back(e);
  } else {
    std::string err;
    auto names = elf_defined_functions(bytes, /*dynamic=*/target.kind == TargetKind::Host, &err);
    if (!names)
      throw Error(ErrorKind::Internal, "module '" + source.name + "' for " + target.name() +
                                           ": the compiler produced an unreadable artifact (" + err + ")");
    for (const std::string& e : source.entry_points)
      if (!names->count(e)) missing.push_back(e);
  }
  if (missing.empty()) return;
  std::string list;
  for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
  throw Error(ErrorKind::Internal, "module '" + source.name + "' compiled for " + target.name() +
                                       " lacks the entry point(s) " + list +
                                       " that code generation declared: a kjit bug");
}

}  // namespace

Artifact Cache::Impl::build(const ModuleSource& source, const Target& target,
                            const CompileOptions& options, const std::string& key,
                            const std::string* text) {
  std::string problem;
  if (mode != CacheMode::InMemory)
    if (auto a = load(source, target, key, &problem)) return *a;
  if (no_compile_requested()) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++stats.misses;
    }
    throw Error(ErrorKind::User,
                "module '" + source.name + "' for target " + target.name() + " is not in the kjit cache" +
                    (problem.empty() ? "" : " (its entry is unusable: " + problem + ")") +
                    (mode == CacheMode::InMemory ? " (the cache is not in use: " + mode_reason + ")"
                                                 : " at " + root) +
                    ", and KJIT_NO_COMPILE=1 forbids compiling it. Precompile it with "
                    "'kjit precompile <your kernel library> " + (codegen::is_tangent_module(source.name) ? "--tangent " : "") +
                    "--arch " + target.name() +
                    "' using the same KJIT_CACHE_DIR, or unset KJIT_NO_COMPILE.");
  }
  KeyLock lock;
  if (mode == CacheMode::ReadWrite && config.lock_files) {
    lock.acquire(root, key);
    // Whoever held the lock before us has probably just published this very entry.
    problem.clear();
    if (auto a = load(source, target, key, &problem)) return *a;
  }
  if (!problem.empty()) {
    const std::string path = entry_path(source.name, key);
    const std::string message = "cache entry " + path + " is unusable (" + problem + "); compiling the module again";
    // A writable cache replaces the entry, so a later problem is a new one; a read-only
    // cache keeps it, and says so once.
    if (mode == CacheMode::ReadWrite) warn(message);
    else warn_once("bad:" + path, message + " (in memory: the cache is read-only)");
    std::lock_guard<std::mutex> l(mu);
    ++stats.bad_entries;
  }
  {
    std::lock_guard<std::mutex> l(mu);
    ++stats.misses;
  }
  if (mode == CacheMode::ReadOnly)
    warn_once("read-only", mode_reason + ": modules missing from it are compiled in memory and not saved");
  const std::string& t = text ? *text : generated_text(source);
  if (t.empty())
    throw Error(ErrorKind::Internal, "module '" + source.name + "' has no source text to compile");
  return compile_and_store(source, target, options, key, t);
}

namespace {

/// Saves a failed module's text and log for inspection; returns the source's path or "".
std::string save_failure(const std::string& root, bool writable, const std::string& name,
                         const std::string& key, const std::string& text, const std::string& log) {
  std::string dir, err;
  if (writable) {
    dir = root + "/failed";
    if ((::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) || !unsafe_folder(dir).empty()) dir.clear();
  }
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = make_private_dir(tmp && *tmp ? tmp : "/tmp", "kjit-failed-", &err);
    if (dir.empty()) return "";
  }
  std::string base = dir + "/" + sanitize_module_name(name) + "-" + key.substr(0, 16);
  // Write beside, then rename over an older failure of the same module.
  for (const auto& [suffix, content] : {std::pair<std::string, const std::string*>{".cu", &text},
                                        std::pair<std::string, const std::string*>{".log", &log}}) {
    std::string tmp = base + suffix + ".tmp" + std::to_string(::getpid());
    ::unlink(tmp.c_str());
    if (!write_new_file(tmp, *content).empty() || ::rename(tmp.c_str(), (base + suffix).c_str()) != 0) {
      ::unlink(tmp.c_str());
      return "";
    }
  }
  return base + ".cu";
}

}  // namespace

Artifact Cache::Impl::compile_and_store(const ModuleSource& source, const Target& target,
                                        const CompileOptions& options, const std::string& key,
                                        const std::string& text) {
  const std::string safe = sanitize_module_name(source.name);
  std::string err;
  FolderGuard staging, private_work;
  if (mode == CacheMode::ReadWrite) {
    staging.path = make_private_dir(root, ".tmp-" + safe + "-", &err);
    if (staging.path.empty())
      warn_once("staging", "cannot write into the cache folder " + root + " (" + err +
                               "); modules are compiled in memory and not saved");
  }
  std::string work = staging.path;
  if (target.kind == TargetKind::Host && work.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    private_work.path = make_private_dir(tmp && *tmp ? tmp : "/tmp", "kjit-build-", &err);
    if (private_work.path.empty()) throw Error(ErrorKind::Cache, "cannot compile module '" + source.name + "': " + err);
    work = private_work.path;
  }

  CompileOutput out = target.is_gpu()
                          ? nvrtc_compile(text, "kjit_module_" + source.name + ".cu", target, options)
                          : host_compile(text, options, work);
  {
    std::lock_guard<std::mutex> l(mu);
    ++stats.compiles;
    stats.compile_ms += out.ms;
    if (!out.ok) ++stats.compile_failures;
  }
  if (!out.ok) {
    CompileFailure f;
    f.module_name = source.name;
    f.target = target.name();
    f.compiler = out.compiler;
    f.options = out.options;
    f.log = out.log;
    f.text = text;
    f.generated_file = out.generated_file;
    f.saved_path = save_failure(root, mode == CacheMode::ReadWrite, source.name, key, text, out.log);
    throw Error(ErrorKind::Compile, format_compile_failure(f));
  }
  check_entry_points(source, target, out);

  Artifact a;
  a.module_name = source.name;
  a.key = key;
  a.target = target;
  a.origin = ArtifactOrigin::Compiled;
  a.compile_ms = out.ms;
  a.meta = make_meta(source, target, options, key, out, text);
  if (std::string p = parse_kernel_descriptions(a.meta["kernels"], &a.kernels); !p.empty())
    throw Error(ErrorKind::Internal, "module '" + source.name + "': its kernel descriptions are malformed: " + p);
  if (target.is_gpu()) {
    a.image = out.bytes;
    if (target.kind == TargetKind::Ptx) a.image.push_back('\0');
  }

  if (!staging.path.empty()) {
    std::string werr;
    if (target.is_gpu()) {
      werr = write_new_file(staging.path + "/" + kSourceFile, text);
      if (werr.empty())
        werr = write_new_file(staging.path + "/" + artifact_file_name(target),
                              std::string_view(out.bytes.data(), out.bytes.size()));
    }
    // A module name that is not UTF-8 is stored with replacement characters, not refused.
    if (werr.empty())
      werr = write_new_file(staging.path + "/" + kMetaFile,
                            a.meta.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
    std::string final_path = entry_path(source.name, key);
    // Publish: the complete folder appears under its final name in one rename. When another
    // builder got there first, its entry is verified and used; a bad one is moved away.
    for (int attempt = 0; werr.empty() && attempt < 3; ++attempt) {
      if (::rename(staging.path.c_str(), final_path.c_str()) == 0) {
        staging.path.clear();
        if (target.kind == TargetKind::Host) a.load_path = a.library_path = final_path + "/" + kHostLibraryFile;
        uint64_t bytes = folder_bytes(final_path);
        {
          std::lock_guard<std::mutex> l(mu);
          ++stats.published;
          stats.bytes_written += bytes;
        }
        after_publish(bytes, final_path);
        return a;
      }
      // The final name is taken: by a folder (EEXIST, ENOTEMPTY) or by something else that
      // is not an entry (ENOTDIR: a file or a symlink planted there).
      if (errno != EEXIST && errno != ENOTEMPTY && errno != ENOTDIR) {
        werr = "cannot publish " + final_path + ": " + errno_text(errno);
        break;
      }
      EntryCheck c = check_entry(final_path, key, &source, &target, false, true);
      if (c.problem.empty() && c.exists) {
        if (target.kind == TargetKind::Host) {
          a.library_path = c.artifact_path;
          a.load_path = loadable_path(c, key, safe);
          a.load_fd = c.artifact_fd;
        }
        return a;  // staging is dropped by its guard
      }
      if (c.exists && !remove_entry(final_path)) {
        werr = "cannot replace the unusable entry " + final_path;
        break;
      }
    }
    if (!werr.empty()) warn_once("publish", werr + "; modules are kept in memory");
  }
  if (target.kind == TargetKind::Host)
    a.load_path = a.library_path = in_memory_library(key, std::string_view(out.bytes.data(), out.bytes.size()), safe);
  return a;
}

}  // namespace kjit::compiler
