// One cache entry folder: meta.json contents and the checks a hit must pass.
#include "cache_entry.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include <kjit/abi.h>

#include "file_safety.hpp"
#include "file_util.hpp"
#include "host_compiler.hpp"
#include "memory_library.hpp"
#include "kjit/compiler/key.hpp"
#include "sha256.hpp"

namespace kjit::compiler {

namespace {

// Bounds on what a hit reads: meta.json holds kernel descriptions (kilobytes); artifacts
// and sources stay under the 512 MiB SHA-256 limit.
constexpr uint64_t kMaxMetaBytes = uint64_t(64) << 20;
constexpr uint64_t kMaxArtifactBytes = (uint64_t(1) << 29) - 1;

/// Closes a descriptor on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// Reads a file of an entry through one descriptor: safe (owner, mode), regular, at most
/// `max_bytes`, complete. Returns "" and fills *bytes, or the problem.
std::string read_entry_file(const std::string& path, std::string* bytes, uint64_t max_bytes,
                            int* keep_fd = nullptr) {
  int raw = open_nofollow(path);
  if (raw < 0) {
    int err = errno;
    if (err == ENOENT) return path + " is missing";
    if (err == ELOOP) return path + " is a symbolic link";
    return "cannot open " + path + ": " + errno_text(err);
  }
  Fd fd(raw);
  struct stat st;
  if (::fstat(fd.fd, &st) != 0) return "cannot inspect " + path + ": " + errno_text(errno);
  if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
  if (std::string u = unsafe_reason(st, path); !u.empty()) return u;
  if (uint64_t(st.st_size) > max_bytes)
    return path + " is implausibly large (" + std::to_string(st.st_size) + " bytes)";
  if (!read_fd(fd.fd, bytes)) return "cannot read " + path + ": " + errno_text(errno);
  if (keep_fd) {
    *keep_fd = fd.fd;
    fd.fd = -1;
  }
  return "";
}

/// The hash meta.json records of its kernel descriptions, over their stored form (so that a
/// name that is not UTF-8, stored with replacements, hashes the same when read back).
std::string kernels_hash(const nlohmann::json& kernels) {
  return sha256_hex(kernels.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

bool is_hex64(const nlohmann::json& j) {
  if (!j.is_string()) return false;
  const std::string& s = j.get_ref<const std::string&>();
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

std::shared_ptr<const int> share_fd(int fd) {
  return std::shared_ptr<const int>(new int(fd), [](const int* p) {
    ::close(*p);
    delete p;
  });
}

std::string loadable_path(const EntryCheck& c, const std::string& key, const std::string& name) {
  if (c.artifact_fd) {
    std::string path = "/proc/self/fd/" + std::to_string(*c.artifact_fd);
    if (::access(path.c_str(), R_OK) == 0) return path;
  }
  return in_memory_library(key, c.artifact, name);
}

const char* artifact_file_name(const Target& target) {
  switch (target.kind) {
    case TargetKind::Cubin: return "module.cubin";
    case TargetKind::Ptx: return "module.ptx";
    case TargetKind::Host: return kHostLibraryFile;
  }
  return "module.bin";
}

nlohmann::json make_meta(const ModuleSource& source, const Target& target,
                         const CompileOptions& options, const std::string& key,
                         const CompileOutput& out, std::string_view source_text) {
  std::string_view bytes(out.bytes.data(), out.bytes.size());
  nlohmann::json m;
  m["format"] = kCacheFormatVersion;
  m["abi"] = kj::kAbiVersion;
  m["module"] = source.name;
  m["key"] = key;
  m["target"] = target.name();
  m["artifact"] = {{"file", artifact_file_name(target)}, {"size", bytes.size()}, {"sha256", sha256_hex(bytes)}};
  m["source"] = {{"file", kSourceFile}, {"size", source_text.size()}, {"sha256", sha256_hex(source_text)}};
  m["compiler"] = compiler_identity(target);
  m["compiler_command"] = out.compiler + " " + out.options;
  m["options"] = {{"fast_math", options.fast_math},   {"line_info", options.line_info},
                  {"debug", options.debug},           {"max_registers", options.max_registers},
                  {"opt_level", options.opt_level},   {"fast_compile", options.fast_compile},
                  {"cxx_standard", options.cxx_standard}, {"extra", options.extra},
                  {"fingerprint", options.fingerprint()}};
  m["entry_points"] = source.entry_points;
  m["kernels"] = source.kernel_descriptions();
  m["kernels_sha256"] = kernels_hash(m["kernels"]);
  m["resources"] = out.resources;
  m["compile_ms"] = out.ms;
  m["created"] = utc_now();
  m["created_unix"] = int64_t(std::time(nullptr));
  return m;
}

EntryCheck check_entry(const std::string& folder, const std::string& key, const ModuleSource* source,
                       const Target* target, bool full, bool touch) {
  EntryCheck c;
  struct stat st;
  if (::lstat(folder.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      c.exists = true;
      c.problem = "cannot inspect " + folder + ": " + errno_text(errno);
    }
    return c;
  }
  c.exists = true;
  if (std::string u = unsafe_folder(folder); !u.empty()) {
    c.problem = u;
    return c;
  }

  std::string text;
  int meta_fd = -1;
  if (std::string p = read_entry_file(folder + "/" + kMetaFile, &text, kMaxMetaBytes, touch ? &meta_fd : nullptr);
      !p.empty()) {
    c.problem = p;
    return c;
  }
  Fd meta_guard(meta_fd);
  c.meta = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json& m = c.meta;
  auto fail = [&](const std::string& why) {
    c.problem = folder + "/" + kMetaFile + " " + why;
    return c;
  };
  if (m.is_discarded() || !m.is_object()) return fail("is not valid JSON");
  // Another kjit's entries are stale, not damaged: said apart from edits (`kjit cache verify`).
  auto stale = [&](const std::string& why) {
    c.stale = true;
    return fail(why);
  };
  if (!m.contains("format") || m["format"] != kCacheFormatVersion)
    return stale("has another format version (written by another kjit version)");
  if (!m.contains("key") || m["key"] != key) return fail("names another key");
  // Compared as meta.json stores it: a name that is not UTF-8 was written with replacements.
  auto stored = [](const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  if (source && (!m.contains("module") || stored(m["module"]) != stored(nlohmann::json(source->name))))
    return fail("names another module");
  // The same key with other entry points: written by a kjit whose code generation differed
  // (a change that missed its version bump); its artifact lacks what this module needs.
  if (source && m.value("entry_points", nlohmann::json()) != nlohmann::json(source->entry_points))
    return fail("records other entry points than the module has");
  // The descriptions say which entry point is which kernel's forward or adjoint: a swap or
  // an edit would run the wrong code, so they are parsed, typed and cross-checked.
  // Entries from before descriptions were hashed are stale, not tampered with: said first, so
  // that descriptions in an older kjit's shape are not taken for an edit.
  if (!m.contains("kernels_sha256"))
    return stale("lacks 'kernels_sha256' (written by an older kjit; `kjit cache verify` or `prune` removes it)");
  if (!m.contains("kernels")) return fail("lacks 'kernels'");
  if (std::string p = parse_kernel_descriptions(m["kernels"], &c.kernels); !p.empty())
    return fail("has bad kernel descriptions: " + p);
  if (m["kernels_sha256"] != kernels_hash(m["kernels"]))
    return fail("has kernel descriptions that do not match their recorded SHA-256 (edited)");
  // (Hand-written modules describe no kernels; generated ones describe every entry point.)
  if (!c.kernels.empty() &&
      m.value("entry_points", nlohmann::json()) != nlohmann::json(described_entry_points(c.kernels)))
    return fail("has kernel descriptions whose entry points are not the entry points it records");
  if (source && source->expected_kernels)
    if (std::string p = compare_kernel_descriptions(m["kernels"], source->expected_kernels()); !p.empty())
      return fail(p);
  if (!m.contains("target") || !m["target"].is_string()) return fail("names no target");
  Target t;
  try {
    t = Target::parse(m["target"].get<std::string>());
  } catch (const std::exception&) {
    return fail("names an unknown target");
  }
  if (target && t != *target) return fail("names another target");
  const nlohmann::json* art = m.contains("artifact") ? &m["artifact"] : nullptr;
  const nlohmann::json* src = m.contains("source") ? &m["source"] : nullptr;
  if (!art || !art->is_object() || !(*art).contains("size") || !(*art)["size"].is_number_unsigned() ||
      !(*art).contains("sha256") || !is_hex64((*art)["sha256"]))
    return fail("lacks the artifact's size and hash");
  if (!src || !src->is_object() || !(*src).contains("size") || !(*src)["size"].is_number_unsigned() ||
      !(*src).contains("sha256") || !is_hex64((*src)["sha256"]))
    return fail("lacks the source's size and hash");

  // The artifact: one descriptor is checked, measured, read and hashed, so what is verified
  // is what is returned.
  c.artifact_path = folder + "/" + artifact_file_name(t);
  int artifact_fd = -1;
  if (std::string p = read_entry_file(c.artifact_path, &c.artifact, kMaxArtifactBytes, &artifact_fd); !p.empty()) {
    c.problem = p;
    c.artifact.clear();
    return c;
  }
  c.artifact_fd = share_fd(artifact_fd);
  uint64_t want = (*art)["size"].get<uint64_t>();
  if (c.artifact.size() != want) {
    c.problem = c.artifact_path + " has " + std::to_string(c.artifact.size()) + " bytes where " +
                kMetaFile + " records " + std::to_string(want) + " (truncated, or another module's artifact)";
    c.artifact.clear();
    return c;
  }
  if (sha256_hex(c.artifact) != (*art)["sha256"].get<std::string>()) {
    c.problem = c.artifact_path + " does not match the SHA-256 in " + kMetaFile +
                " (corrupt, or another module's artifact)";
    c.artifact.clear();
    return c;
  }

  const std::string source_path = folder + "/" + kSourceFile;
  uint64_t want_src = (*src)["size"].get<uint64_t>();
  if (full) {
    std::string s;
    if (std::string p = read_entry_file(source_path, &s, kMaxArtifactBytes); !p.empty()) c.problem = p;
    else if (s.size() != want_src || sha256_hex(s) != (*src)["sha256"].get<std::string>())
      c.problem = source_path + " does not match " + kMetaFile;
  } else {
    struct stat ss;
    if (::lstat(source_path.c_str(), &ss) != 0) c.problem = source_path + " is missing";
    else if (!S_ISREG(ss.st_mode) || uint64_t(ss.st_size) != want_src)
      c.problem = source_path + " does not match the size in " + kMetaFile;
  }
  if (!c.problem.empty()) {
    c.artifact.clear();
    return c;
  }
  if (touch && meta_guard.fd >= 0) ::futimens(meta_guard.fd, nullptr);  // last use, for LRU pruning
  return c;
}

}  // namespace kjit::compiler
