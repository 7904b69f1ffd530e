// One cache entry folder: the files it holds, its meta.json, and its verification.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile_output.hpp"
#include "kjit/compiler/compile_options.hpp"
#include "kjit/compiler/kernel_description.hpp"
#include "kjit/compiler/module_source.hpp"
#include "kjit/compiler/target.hpp"

namespace kjit::compiler {

/// The metadata file of an entry.
inline constexpr const char* kMetaFile = "meta.json";

/// The artifact's file name inside an entry: module.cubin, module.ptx or module.so.
const char* artifact_file_name(const Target& target);

/// The meta.json of a freshly compiled module (see docs/CACHE.md for every field).
nlohmann::json make_meta(const ModuleSource& source, const Target& target,
                         const CompileOptions& options, const std::string& key,
                         const CompileOutput& out, std::string_view source_text);

/// What check_entry() found.
struct EntryCheck {
  bool exists = false;        ///< the entry's folder exists
  std::string problem;        ///< why the entry cannot be used ("" when it is valid)
  bool stale = false;         ///< the problem is that another kjit version wrote it
  nlohmann::json meta;        ///< the parsed meta.json (when it could be read)
  std::string artifact;       ///< the verified artifact bytes (when valid)
  std::string artifact_path;  ///< its path
  std::shared_ptr<const int> artifact_fd;   ///< the open descriptor it was read and hashed through
  std::vector<KernelDescription> kernels;  ///< meta.json's kernels, parsed and validated
};

/// A descriptor owned by a shared pointer: closed when the last owner goes.
std::shared_ptr<const int> share_fd(int fd);

/// What a `cpu` hit dlopens: /proc/self/fd/N of the descriptor `c`'s artifact was verified
/// through, so no other file can take its place between the check and the load; where /proc
/// is absent, an in-memory copy of the verified bytes (`key` and `name` name that copy).
std::string loadable_path(const EntryCheck& c, const std::string& key, const std::string& name);

/// Verifies the entry in `folder` for `key` (and, when given, `source` and `target`): the
/// folder and its files are safe to load (file_safety.hpp), meta.json parses and names this
/// key, module (with the module's entry points), target and format, its kernel descriptions
/// are well-formed, name exactly the recorded entry points and (with `source`) agree with
/// codegen's, the artifact's size and SHA-256 match meta.json, and the
/// source file is present with the recorded size (and hash, when `full`). When `touch`,
/// refreshes meta.json's mtime (the entry's last use) on success.
EntryCheck check_entry(const std::string& folder, const std::string& key, const ModuleSource* source,
                       const Target* target, bool full, bool touch);

}  // namespace kjit::compiler
