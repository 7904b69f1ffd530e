// Whether files and folders are safe to load code from: loading a cached artifact runs code,
// so, as ssh does with key files, kjit trusts only what no other user can have written.
#pragma once

#include <sys/stat.h>

#include <string>

namespace kjit::compiler {

/// Why `st` (of `path`) may have been written by someone other than this user: owned by a
/// user other than this one or root, or writable by group or others. "" when safe.
std::string unsafe_reason(const struct stat& st, const std::string& path);

/// Checks `path` (lstat: a symlink is judged as itself and refused) with unsafe_reason, and
/// that it is a folder. "" when safe.
std::string unsafe_folder(const std::string& path);

/// Checks every ancestor of the absolute folder `path`, up to '/': each must be owned by this
/// user or root and not writable by group or others unless it has the sticky bit (as /tmp),
/// since whoever can write a folder can replace what is inside it. "" when all are safe.
std::string unsafe_ancestors(const std::string& path);

/// Whether this user may write into the folder: its owner-write bit is set (respected even for
/// root, so that `chmod a-w` makes a cache read-only) and access(W_OK) agrees.
bool folder_writable(const std::string& path);

}  // namespace kjit::compiler
