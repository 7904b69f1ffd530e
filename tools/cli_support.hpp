// Pieces every kjit subcommand shares: exit statuses, usage errors, sizes and times in words,
// text tables, "did you mean" suggestions, the terminal, and the cache folder to use.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/compiler/cache.hpp"
#include "kjit/compiler/target.hpp"

namespace llvm {
class raw_ostream;
}

namespace kjit::tool {

/// Exit statuses of every subcommand (docs/CLI.md lists them).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,  ///< the command ran and something failed: a build, a bad cache entry
  kExitUsage = 2,   ///< the command could not run: a bad option, library, name or target
};

/// A mistake in what the user asked for. main() prints "kjit: error: <message>" and exits
/// with kExitUsage; the message says what to do instead.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "812 B", "12.3 KiB", "4.0 GiB".
std::string format_bytes(uint64_t bytes);
/// "0.4 ms", "812 ms", "2.41 s".
std::string format_ms(double ms);
/// Whether standard error is an interactive terminal (progress lines go there only then).
bool stderr_is_terminal();
/// Whether standard input is an interactive terminal (questions are asked only then).
bool stdin_is_terminal();

/// The candidate closest to `name` when it is close enough to be a likely typo, else "".
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);
/// " Did you mean 'x'?" when closest_name finds one, else "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);
/// "a, b, c" (at most `limit` names, then "and N more").
std::string join_names(const std::vector<std::string>& names, size_t limit = 12);

/// A table of text cells printed with aligned columns; numeric columns align right.
class Table {
 public:
  /// `right_aligned[i]`: whether column i aligns right (missing entries: left).
  explicit Table(std::vector<std::string> header, std::vector<bool> right_aligned = {});
  void add(std::vector<std::string> row);
  bool empty() const { return rows_.empty(); }
  /// Writes the header and the rows, each line starting with `indent`.
  void print(llvm::raw_ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

/// The cache configuration from the environment, with the folder replaced by `cache_dir`
/// when it is not empty (--cache-dir).
compiler::CacheConfig cache_config(const std::string& cache_dir);

/// Which NVRTC builds GPU targets, as `kjit devices --json` and `kjit precompile --json` say:
/// {"available", "version", "path", "origin", "reason"} (nulls where they do not apply).
nlohmann::ordered_json nvrtc_json(const compiler::NvrtcInfo& info);
/// The folder that configuration names (without creating it).
std::string cache_folder(const compiler::CacheConfig& config);

}  // namespace kjit::tool
