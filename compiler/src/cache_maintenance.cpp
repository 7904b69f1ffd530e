// Cache maintenance: listing entries, totals, full verification, least-recently-used pruning
// and clearing (the `kjit cache` commands), and the size bound kept after each publish.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "cache_entry.hpp"
#include "cache_impl.hpp"
#include "file_util.hpp"

namespace kjit::compiler {

namespace {

/// The key of an entry folder name "<name>-<64 hex>", or "" for anything else.
std::string key_of(const std::string& folder_name) {
  if (folder_name.empty() || folder_name[0] == '.' || folder_name.size() < 66) return "";
  size_t dash = folder_name.size() - 65;
  if (folder_name[dash] != '-') return "";
  std::string key = folder_name.substr(dash + 1);
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
  return key;
}

/// The names in a folder (without "." and "..").
std::vector<std::string> folder_names(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// An entry as scanned: what list() reports, and its last use in nanoseconds (for ordering:
/// list() reports whole seconds).
struct Scanned {
  CacheEntryInfo info;
  int64_t used_ns = 0;
};

/// Reads what list() reports about one entry folder.
Scanned describe(const std::string& root, const std::string& name, const std::string& key) {
  Scanned out;
  CacheEntryInfo& info = out.info;
  info.path = root + "/" + name;
  info.key = key;
  info.bytes = folder_bytes(info.path);
  struct stat st;
  const std::string meta_path = info.path + "/" + kMetaFile;
  if (::lstat(meta_path.c_str(), &st) == 0 || ::lstat(info.path.c_str(), &st) == 0) {
    info.last_used = int64_t(st.st_mtim.tv_sec);
    out.used_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  int fd = open_nofollow(meta_path);
  std::string text;
  if (fd >= 0) {
    read_fd(fd, &text);
    ::close(fd);
  }
  nlohmann::json m = nlohmann::json::parse(text, nullptr, false);
  if (m.is_object()) {
    if (m.contains("module") && m["module"].is_string()) info.module = m["module"];
    if (m.contains("target") && m["target"].is_string()) info.target = m["target"];
    if (m.contains("compile_ms") && m["compile_ms"].is_number()) info.compile_ms = m["compile_ms"];
    if (m.contains("created_unix") && m["created_unix"].is_number()) info.created = m["created_unix"];
  }
  return out;
}

/// Every entry folder under `root`, least recently used first (ties by name).
std::vector<Scanned> scan(const std::string& root) {
  std::vector<Scanned> out;
  for (const std::string& name : folder_names(root))
    if (std::string key = key_of(name); !key.empty()) out.push_back(describe(root, name, key));
  std::stable_sort(out.begin(), out.end(),
                   [](const Scanned& a, const Scanned& b) { return a.used_ns < b.used_ns; });
  return out;
}

/// Whether a leftover (staging or trash folder) is old enough to be abandoned.
bool older_than(const std::string& path, int64_t seconds) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && int64_t(std::time(nullptr)) - int64_t(st.st_mtime) > seconds;
}

}  // namespace

std::vector<CacheEntryInfo> Cache::list() const {
  std::vector<CacheEntryInfo> out;
  if (impl_->root.empty()) return out;
  for (Scanned& s : scan(impl_->root)) out.push_back(std::move(s.info));
  return out;
}

CacheUsage Cache::usage() const {
  CacheUsage u;
  for (const CacheEntryInfo& e : list()) {
    ++u.entries;
    u.bytes += e.bytes;
    u.compile_ms += e.compile_ms;
    ++u.by_target[e.target.empty() ? "unknown" : e.target];
  }
  if (!impl_->root.empty()) {
    for (const std::string& name : folder_names(impl_->root))
      if (name.rfind(".tmp-", 0) == 0 || name.rfind(".trash-", 0) == 0) ++u.temporaries;
    u.temporaries += folder_names(impl_->root + "/.locks").size();
  }
  return u;
}

CacheVerifyReport Cache::verify(bool remove_bad) {
  CacheVerifyReport r;
  if (impl_->root.empty() || impl_->mode == CacheMode::InMemory) return r;
  for (const std::string& name : folder_names(impl_->root)) {
    std::string key = key_of(name);
    if (key.empty()) continue;
    ++r.checked;
    std::string path = impl_->root + "/" + name;
    EntryCheck c = check_entry(path, key, nullptr, nullptr, /*full=*/true, /*touch=*/false);
    // The folder name carries the sanitised module name: an entry moved under another
    // name is as wrong as a corrupt one.
    if (c.problem.empty() && c.meta.contains("module") && c.meta["module"].is_string() &&
        impl_->entry_path(c.meta["module"].get<std::string>(), key) != path)
      c.problem = path + " does not carry the name of the module its meta.json records";
    if (c.problem.empty()) {
      ++r.valid;
      continue;
    }
    CacheProblem p{path, c.problem, false, c.stale};
    if (remove_bad && impl_->mode == CacheMode::ReadWrite) p.removed = impl_->remove_entry(path);
    r.problems.push_back(p);
  }
  return r;
}

CachePruneReport Cache::prune(uint64_t max_bytes) { return impl_->prune_except(max_bytes, ""); }

CachePruneReport Cache::Impl::prune_except(uint64_t max_bytes, const std::string& keep) {
  CachePruneReport r;
  if (root.empty() || mode != CacheMode::ReadWrite) return r;
  // Leftovers of builds that crashed: staging folders over an hour old (a live build takes
  // far less), and trash folders of removals that were interrupted.
  for (const std::string& name : folder_names(root))
    if ((name.rfind(".tmp-", 0) == 0 && older_than(root + "/" + name, 3600)) ||
        (name.rfind(".trash-", 0) == 0 && older_than(root + "/" + name, 60)))
      remove_tree(root + "/" + name);
  std::vector<Scanned> entries = scan(root);
  uint64_t total = 0;
  for (const Scanned& s : entries) total += s.info.bytes;
  for (const Scanned& s : entries) {
    const CacheEntryInfo& e = s.info;
    if (total <= max_bytes) break;
    if (e.path == keep) continue;
    if (remove_entry(e.path)) {
      ++r.removed;
      r.bytes_removed += e.bytes;
      total -= e.bytes;
    }
  }
  r.entries_left = entries.size() - r.removed;
  r.bytes_left = total;
  std::lock_guard<std::mutex> lock(mu);
  stats.evicted += r.removed;
  size_known = true;
  size_estimate = total;
  publishes_since_scan = 0;
  return r;
}

void Cache::Impl::after_publish(uint64_t bytes, const std::string& keep) {
  if (config.max_size == 0) return;
  {
    std::lock_guard<std::mutex> lock(mu);
    // Other processes publish too: rescan now and then rather than trusting the estimate.
    if (size_known && ++publishes_since_scan < 16) {
      size_estimate += bytes;
      if (size_estimate <= config.max_size) return;
    }
  }
  prune_except(config.max_size, keep);
}

size_t Cache::clear() {
  size_t removed = 0;
  if (impl_->root.empty() || impl_->mode != CacheMode::ReadWrite) return 0;
  for (const std::string& name : folder_names(impl_->root)) {
    std::string path = impl_->root + "/" + name;
    if (!key_of(name).empty()) {
      if (impl_->remove_entry(path)) ++removed;
    } else if (name.rfind(".tmp-", 0) == 0 || name.rfind(".trash-", 0) == 0 || name == "failed" ||
               name == ".locks") {
      remove_tree(path);
    }
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->size_known = false;
  return removed;
}

}  // namespace kjit::compiler
