// temp_cache.hpp — points kjit's disk cache at a fresh temporary folder (a cold start every
// run) and removes it at the end, unless the caller keeps a folder already configured.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fuzz {

/// Sets KJIT_CACHE_DIR to a new folder under the system temp dir while it lives. Create it
/// before the first kjit call that touches the cache. `keep_configured`: where KJIT_CACHE_DIR
/// is already set (ctest gives each test its folder, which the sanitizer build's run shares
/// with the plain build's), that folder stays in use and nothing is made or removed.
class TempCache {
 public:
  explicit TempCache(bool keep_configured = false) {
    const char* configured = std::getenv("KJIT_CACHE_DIR");
    if (keep_configured && configured && *configured) return;
    std::string tmpl = (std::filesystem::temp_directory_path() / "kjit-fuzz-XXXXXX").string();
    if (char* d = mkdtemp(tmpl.data())) {
      dir_ = d;
      setenv("KJIT_CACHE_DIR", d, 1);
    }
  }
  ~TempCache() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  TempCache(const TempCache&) = delete;
  TempCache& operator=(const TempCache&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace fuzz
