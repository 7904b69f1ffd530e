// temp_cache.hpp — points kjit's disk cache at a fresh temporary folder (a cold start every
// run) and removes it at the end.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fuzz {

/// Sets KJIT_CACHE_DIR to a new folder under the system temp dir while it lives. Create it
/// before the first kjit call that touches the cache.
class TempCache {
 public:
  TempCache() {
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
