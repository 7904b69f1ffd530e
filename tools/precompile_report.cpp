// `kjit precompile` output: the progress line, the table, the JSON object, the failures.
#include "precompile_report.hpp"

#include <cmath>

#include <llvm/Support/raw_ostream.h>

#include "cli_support.hpp"

namespace kjit::tool {

size_t PrecompileRun::failed() const {
  size_t n = 0;
  for (const ModuleBuildResult& r : results) n += !r.ok;
  return n;
}

const char* build_status(const ModuleBuildResult& r) {
  return !r.ok ? "failed" : r.build.from_cache ? "cached" : "compiled";
}

nlohmann::ordered_json precompile_json(const PrecompileRun& run) {
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  for (const PrecompiledModule& m : run.modules) {
    nlohmann::ordered_json targets = nlohmann::ordered_json::array();
    for (size_t i : m.builds) {
      const ModuleBuildResult& r = run.results[i];
      targets.push_back({{"target", r.build.target},
                         {"status", build_status(r)},
                         {"bytes", r.ok ? r.build.bytes : 0},
                         {"ms", std::round(r.build.milliseconds * 10) / 10},
                         {"error", r.ok ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.error)}});
    }
    modules.push_back({{"name", m.name},
                       {"key", m.key.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(m.key)},
                       {"targets", std::move(targets)}});
  }
  return {{"modules", std::move(modules)},
          {"failed", run.failed()},
          {"nvrtc", run.nvrtc ? nvrtc_json(*run.nvrtc) : nlohmann::ordered_json(nullptr)}};
}

void print_precompile_table(const PrecompileRun& run, llvm::raw_ostream& out) {
  Table table({"module", "target", "status", "size", "ms"}, {false, false, false, true, true});
  size_t compiled = 0, cached = 0;
  for (const PrecompiledModule& m : run.modules)
    for (size_t i : m.builds) {
      const ModuleBuildResult& r = run.results[i];
      compiled += r.ok && !r.build.from_cache;
      cached += r.ok && r.build.from_cache;
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.1f", r.build.milliseconds);
      table.add({m.name, r.build.target, build_status(r), r.ok ? format_bytes(r.build.bytes) : "-", ms});
    }
  table.print(out);
  out << "\n" << run.results.size() << (run.results.size() == 1 ? " build: " : " builds: ") << compiled
      << " compiled, " << cached << " cached, " << run.failed() << " failed in " << format_ms(run.wall_ms)
      << " (" << run.jobs << (run.jobs == 1 ? " job" : " jobs") << ") into " << run.cache_dir << "\n";
  if (run.nvrtc) out << "GPU targets: " << compiler::describe(*run.nvrtc) << "\n";
}

void print_failures(const PrecompileRun& run, llvm::raw_ostream& err) {
  for (const ModuleBuildResult& r : run.results)
    if (!r.ok)
      err << "kjit: error: module '" << r.build.module << "' for " << r.build.target << " failed:\n"
          << r.error << (r.error.empty() || r.error.back() != '\n' ? "\n" : "");
}

ProgressLine::ProgressLine(size_t total)
    : enabled_(stderr_is_terminal()), total_(total), started_(std::chrono::steady_clock::now()) {
  if (enabled_) draw("");
}

ProgressLine::~ProgressLine() {
  if (enabled_) llvm::errs() << "\r\033[K";
  llvm::errs().flush();
}

void ProgressLine::done(const ModuleBuildResult& r) {
  ++finished_;
  failed_ += !r.ok;
  if (enabled_) draw(r.build.module + " " + r.build.target + " " + build_status(r));
}

void ProgressLine::draw(const std::string& last) {
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_).count();
  llvm::errs() << "\r\033[Kkjit: building [" << finished_ << "/" << total_ << "]"
               << (failed_ ? " " + std::to_string(failed_) + " failed" : std::string()) << "  "
               << format_ms(ms) << (last.empty() ? "" : "  last: " + last);
  llvm::errs().flush();
}

}  // namespace kjit::tool
