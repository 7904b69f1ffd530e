// Small POSIX file helpers for the cache.
#include "file_util.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace kjit::compiler {

std::string errno_text(int err) { return std::strerror(err); }

bool read_fd(int fd, std::string* out) {
  out->clear();
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) out->reserve(size_t(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buf, size_t(n));
  }
}

int open_nofollow(const std::string& path) {
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

std::string write_new_file(const std::string& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return "cannot create " + path + ": " + errno_text(errno);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string err = "cannot write " + path + ": " + errno_text(n < 0 ? errno : ENOSPC);
      ::close(fd);
      return err;
    }
    done += size_t(n);
  }
  if (::close(fd) != 0) return "cannot write " + path + ": " + errno_text(errno);
  return "";
}

std::string make_private_dir(const std::string& parent, const std::string& prefix, std::string* error) {
  std::string pattern = parent + "/" + prefix + "XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {  // mkdtemp creates the folder with mode 0700
    if (error) *error = "cannot create a folder in " + parent + ": " + errno_text(errno);
    return "";
  }
  return buf.data();
}

bool remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);  // removes symlinks themselves, never their targets
  return !path_exists(path);
}

uint64_t folder_bytes(const std::string& dir) {
  uint64_t total = 0;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  while (dirent* e = ::readdir(d)) {
    struct stat st;
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      total += uint64_t(st.st_size);
  }
  ::closedir(d);
  return total;
}

bool path_exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace kjit::compiler
