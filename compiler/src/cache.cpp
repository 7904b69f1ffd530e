// The cache object: opening a folder and deciding how it can be used, warnings, statistics,
// and hits (verified entries turned into artifacts).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "cache_entry.hpp"
#include "cache_impl.hpp"
#include "file_safety.hpp"
#include "file_util.hpp"
#include "kjit/compiler/key.hpp"

namespace kjit::compiler {

namespace {

/// Creates `path` and its missing parents with owner-only permissions, but only inside
/// folders this user may write (by their mode bits). "" on success.
std::string ensure_dir(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? "" : path + " is not a folder";
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    std::string parent = path.substr(0, slash);
    if (std::string e = ensure_dir(parent); !e.empty()) return e;
    if (!folder_writable(parent)) return parent + " is not writable";
  }
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create " + path + ": " + errno_text(errno);
  return "";
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[PATH_MAX];
  if (!::getcwd(buf, sizeof buf)) return path;
  return std::string(buf) + "/" + path;
}

}  // namespace

const std::string& generated_text(const ModuleSource& source) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  return source.source_text();
}

void Cache::Impl::open() {
  if (config.in_memory) {
    mode = CacheMode::InMemory;
    mode_reason = "the disk cache is disabled";
    return;
  }
  dir = absolute(config.dir.empty() ? default_cache_dir() : config.dir);
  root = dir + "/v" + std::to_string(kCacheFormatVersion);
  auto degrade = [&](CacheMode m, const std::string& why) {
    mode = m;
    mode_reason = why;
  };
  if (std::string e = ensure_dir(dir); !e.empty()) {
    degrade(CacheMode::InMemory, "the cache folder " + dir + " cannot be created (" + e + ")");
    warn("modules are compiled in memory and not cached: " + mode_reason);
    return;
  }
  if (char real[PATH_MAX]; ::realpath(dir.c_str(), real)) {
    dir = real;
    root = dir + "/v" + std::to_string(kCacheFormatVersion);
  }
  // Loading an artifact runs its code: refuse folders another user could have written.
  std::string unsafe = unsafe_folder(dir);
  if (unsafe.empty()) unsafe = unsafe_ancestors(dir);
  if (unsafe.empty() && path_exists(root)) unsafe = unsafe_folder(root);
  if (!unsafe.empty()) {
    degrade(CacheMode::InMemory, unsafe);
    warn("refusing to use the cache folder " + dir + ": " + unsafe +
         ". Modules are compiled in memory and not cached until it is fixed.");
    return;
  }
  if (!path_exists(root) && folder_writable(dir)) ::mkdir(root.c_str(), 0700);
  if (path_exists(root) && folder_writable(root)) {
    mode = CacheMode::ReadWrite;
    return;
  }
  // A read-only cache is a legitimate deployment (precompiled, shipped read-only): hits
  // load, and only a miss warns (once).
  degrade(CacheMode::ReadOnly, "the cache folder " + root + " is read-only");
}

void Cache::Impl::warn(const std::string& message) const {
  if (config.on_warning) config.on_warning(message);
  else std::fprintf(stderr, "kjit: warning: %s\n", message.c_str());
}

void Cache::Impl::warn_once(const std::string& tag, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!warned.insert(tag).second) return;
  }
  warn(message);
}

std::string Cache::Impl::entry_path(const std::string& module_name, const std::string& key) const {
  return root + "/" + sanitize_module_name(module_name) + "-" + key;
}

std::optional<Artifact> Cache::Impl::load(const ModuleSource& source, const Target& target,
                                          const std::string& key, std::string* problem) {
  auto t0 = std::chrono::steady_clock::now();
  EntryCheck c = check_entry(entry_path(source.name, key), key, &source, &target,
                             /*full=*/false, /*touch=*/mode == CacheMode::ReadWrite);
  if (!c.exists) return std::nullopt;
  if (!c.problem.empty()) {
    *problem = c.problem;
    return std::nullopt;
  }
  Artifact a;
  a.module_name = source.name;
  a.key = key;
  a.target = target;
  a.origin = ArtifactOrigin::Cached;
  if (target.is_gpu()) {
    a.image.assign(c.artifact.begin(), c.artifact.end());
    if (target.kind == TargetKind::Ptx) a.image.push_back('\0');  // cuModuleLoadData wants a C string
  } else {
    a.library_path = c.artifact_path;
    a.load_path = loadable_path(c, key, sanitize_module_name(source.name));
    a.load_fd = c.artifact_fd;
  }
  a.meta = std::move(c.meta);
  a.kernels = std::move(c.kernels);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> lock(mu);
  ++stats.hits;
  stats.bytes_loaded += c.artifact.size();
  stats.load_ms += ms;
  return a;
}

bool Cache::Impl::remove_entry(const std::string& path) {
  std::string err;
  std::string trash = make_private_dir(root, ".trash-", &err);
  if (trash.empty()) return remove_tree(path);
  // The rename is atomic: readers see the whole entry or none of it, and of several
  // processes removing one entry exactly one moves it.
  if (::rename(path.c_str(), (trash + "/entry").c_str()) != 0 && errno != ENOENT) {
    remove_tree(trash);
    return false;
  }
  remove_tree(trash);
  return true;
}

Cache::Cache(CacheConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  impl_->open();
}

Cache::~Cache() = default;

Cache& Cache::global() {
  static Cache* cache = new Cache();  // never destroyed: modules may be built during exit
  return *cache;
}

const std::string& Cache::dir() const { return impl_->dir; }
const std::string& Cache::root() const { return impl_->root; }
CacheMode Cache::mode() const { return impl_->mode; }
const std::string& Cache::mode_reason() const { return impl_->mode_reason; }
uint64_t Cache::max_size() const { return impl_->config.max_size; }

CacheStats Cache::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats;
}

void Cache::reset_stats() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->stats = CacheStats{};
}

std::string Cache::entry_path(const std::string& module_name, const std::string& key) const {
  return impl_->entry_path(module_name, key);
}

}  // namespace kjit::compiler
