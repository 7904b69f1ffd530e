// Shared objects in memory: memfd_create files named /proc/self/fd/N, or private temp files.
#include "memory_library.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "file_util.hpp"
#include "kjit/error.hpp"

namespace kjit::compiler {

namespace {

/// Temporary folders made by the fallback; removed when the process exits normally.
struct TempFolders {
  std::vector<std::string> dirs;
  ~TempFolders() {
    for (const std::string& d : dirs) remove_tree(d);
  }
};

bool write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

std::string memfd_library(std::string_view bytes, const std::string& name) {
#ifdef MFD_CLOEXEC
  int fd = ::memfd_create(("kjit_" + name).c_str(), MFD_CLOEXEC);
  if (fd < 0) return "";
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (!write_all(fd, bytes) || ::access(path.c_str(), R_OK) != 0) {  // /proc may be absent
    ::close(fd);
    return "";
  }
  return path;  // the descriptor stays open: it is the file
#else
  (void)bytes;
  (void)name;
  return "";
#endif
}

}  // namespace

std::string in_memory_library(const std::string& key, std::string_view bytes, const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::string> made;  // key -> path
  static TempFolders temp;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = made.find(key); it != made.end()) return it->second;
  std::string path = memfd_library(bytes, name);
  if (path.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string err;
    std::string dir = make_private_dir(tmp && *tmp ? tmp : "/tmp", "kjit-lib-", &err);
    if (dir.empty()) throw Error(ErrorKind::Cache, "cannot hold module '" + name + "' in memory: " + err);
    temp.dirs.push_back(dir);
    path = dir + "/" + name + ".so";
    if (std::string w = write_new_file(path, bytes); !w.empty())
      throw Error(ErrorKind::Cache, "cannot hold module '" + name + "' in memory: " + w);
  }
  made.emplace(key, path);
  return path;
}

}  // namespace kjit::compiler
