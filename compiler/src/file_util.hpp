// Small POSIX file helpers for the cache: whole-file reads through one descriptor, exclusive
// owner-only writes, private folders, and removal.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>

namespace kjit::compiler {

/// strerror(errno) as a string.
std::string errno_text(int err);

/// Reads everything from an open descriptor into *out. Returns false on a read error.
bool read_fd(int fd, std::string* out);

/// Opens `path` for reading without following a final symlink; -1 on failure (errno set).
int open_nofollow(const std::string& path);

/// Creates `path` (which must not exist) with owner-only permissions and writes `data`.
/// Returns "" on success, else a description of the failure.
std::string write_new_file(const std::string& path, std::string_view data);

/// Creates a fresh folder `parent`/`prefix`XXXXXX with owner-only permissions; "" on failure
/// (*error set).
std::string make_private_dir(const std::string& parent, const std::string& prefix, std::string* error);

/// Removes a file or a folder tree without following symlinks; true when nothing remains.
bool remove_tree(const std::string& path);

/// Total size in bytes of the regular files directly inside `dir` (entries are flat).
uint64_t folder_bytes(const std::string& dir);

/// Whether `path` exists (lstat).
bool path_exists(const std::string& path);

}  // namespace kjit::compiler
