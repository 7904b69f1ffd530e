// What `kjit precompile` reports: a progress line while it builds, then a table or one JSON
// object, and every failure's full message.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/compiler/target.hpp"
#include "kjit/runtime/modules.hpp"

namespace llvm {
class raw_ostream;
}

namespace kjit::tool {

/// One module of a precompile run and where its builds are among the requests.
struct PrecompiledModule {
  std::string name;
  /// SHA-256 of what determines the module's text and compile options — the same for every
  /// target ("" when the module could not be traced). Each target's cache key adds the
  /// target and the compiler's identity to it.
  std::string key;
  std::vector<size_t> builds;  ///< indices into PrecompileRun::results, in target order
};

/// A finished precompile run.
struct PrecompileRun {
  std::vector<PrecompiledModule> modules;
  std::vector<ModuleBuildResult> results;
  double wall_ms = 0;
  unsigned jobs = 0;
  std::string cache_dir;
  /// The NVRTC that built the GPU targets (set when any was asked for).
  std::optional<compiler::NvrtcInfo> nvrtc;

  /// How many builds failed.
  size_t failed() const;
};

/// "compiled", "cached" or "failed".
const char* build_status(const ModuleBuildResult& r);

/// {"modules":[{"name","key","targets":[{"target","status","bytes","ms","error"}]}],"failed":N,
///  "nvrtc": {...} or null when no GPU target was asked for}
nlohmann::ordered_json precompile_json(const PrecompileRun& run);
/// The table (module, target, status, size, ms) and a summary line.
void print_precompile_table(const PrecompileRun& run, llvm::raw_ostream& out);
/// Each failed build's whole message (compiler log included), one after another.
void print_failures(const PrecompileRun& run, llvm::raw_ostream& err);

/// A line on a terminal's standard error that counts finished builds; it is erased when the
/// run ends. Does nothing when standard error is not a terminal.
class ProgressLine {
 public:
  explicit ProgressLine(size_t total);
  ~ProgressLine();
  /// Records one finished build (called by one thread at a time).
  void done(const ModuleBuildResult& result);

 private:
  void draw(const std::string& last);
  bool enabled_;
  size_t total_, finished_ = 0, failed_ = 0;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace kjit::tool
