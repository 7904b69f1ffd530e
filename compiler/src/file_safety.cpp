// Ownership and permission checks for folders and files kjit loads code from.
#include "file_safety.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "file_util.hpp"

namespace kjit::compiler {

namespace {

std::string octal(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", unsigned(m & 07777));
  return buf;
}

}  // namespace

std::string unsafe_reason(const struct stat& st, const std::string& path) {
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return path + " is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return path + " is writable by " + ((st.st_mode & S_IWOTH) ? "others" : "its group") +
           " (mode " + octal(st.st_mode) + "); fix it with: chmod go-w '" + path + "'";
  return "";
}

std::string unsafe_folder(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return "cannot inspect " + path + ": " + errno_text(errno);
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return path + " is not a folder";
  return unsafe_reason(st, path);
}

std::string unsafe_ancestors(const std::string& path) {
  std::string p = path;
  while (true) {
    size_t slash = p.find_last_of('/');
    if (slash == std::string::npos) return "";
    p = slash == 0 ? "/" : p.substr(0, slash);
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) return "cannot inspect " + p + ": " + errno_text(errno);
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
      return p + " (a parent of the cache folder) is owned by another user (uid " +
             std::to_string(st.st_uid) + ")";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
      return p + " (a parent of the cache folder) is writable by group or others (mode " +
             octal(st.st_mode) + "); fix it with: chmod go-w '" + p + "'";
    if (p == "/") return "";
  }
}

bool folder_writable(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !(st.st_mode & S_IWUSR)) return false;
  return ::access(path.c_str(), W_OK | X_OK) == 0;
}

}  // namespace kjit::compiler
