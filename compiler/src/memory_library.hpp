// Shared objects that live in memory: how a `cpu` module is loaded when the cache folder
// cannot be used.
#pragma once

#include <string>
#include <string_view>

namespace kjit::compiler {

/// A path that dlopen can load and that holds `bytes`: /proc/self/fd/N of an anonymous memory
/// file (memfd_create), or, where that is unavailable, a file in a private temporary folder
/// removed at exit. The file lives as long as the process. Repeated calls with the same `key`
/// return the first path. Throws a Cache error when neither can be made.
std::string in_memory_library(const std::string& key, std::string_view bytes, const std::string& name);

}  // namespace kjit::compiler
