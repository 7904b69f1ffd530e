// Shared pieces of the kjit subcommands: formatting, tables, suggestions, the cache folder.
#include "cli_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

namespace kjit::tool {

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string format_ms(double ms) {
  char buf[32];
  if (ms < 10)
    std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  else if (ms < 1000)
    std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  else
    std::snprintf(buf, sizeof buf, "%.2f s", ms / 1000);
  return buf;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }
bool stdin_is_terminal() { return ::isatty(STDIN_FILENO) == 1; }

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  unsigned best_distance = 0;
  for (const std::string& c : candidates) {
    // Compare the unqualified part too, so "sxapy" finds "demo::saxpy".
    llvm::StringRef full(c), tail = full.rsplit("::").second.empty() ? full : full.rsplit("::").second;
    unsigned d = std::min(llvm::StringRef(name).edit_distance(full, true),
                          llvm::StringRef(name).edit_distance(tail, true));
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A third of the name's letters may differ: typos, not unrelated names.
  unsigned limit = unsigned(name.size() / 3) + 1;
  return !best.empty() && best_distance <= limit ? best : "";
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  std::string c = closest_name(name, candidates);
  return c.empty() ? "" : " Did you mean '" + c + "'?";
}

std::string join_names(const std::vector<std::string>& names, size_t limit) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < limit; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > limit) s += " and " + std::to_string(names.size() - limit) + " more";
  return s;
}

Table::Table(std::vector<std::string> header, std::vector<bool> right_aligned)
    : header_(std::move(header)), right_(std::move(right_aligned)) {
  right_.resize(header_.size(), false);
}

void Table::add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

void Table::print(llvm::raw_ostream& out, const std::string& indent) const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) {
    width[c] = header_[c].size();
    for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - cells[c].size(), ' ');
      if (c) s += "  ";
      s += right_[c] ? pad + cells[c] : (c + 1 < cells.size() ? cells[c] + pad : cells[c]);
    }
    out << s << "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
}

compiler::CacheConfig cache_config(const std::string& cache_dir) {
  compiler::CacheConfig config = compiler::CacheConfig::from_environment();
  if (!cache_dir.empty()) config.dir = cache_dir;
  return config;
}

std::string cache_folder(const compiler::CacheConfig& config) {
  llvm::SmallString<256> path(config.dir.empty() ? compiler::default_cache_dir() : config.dir);
  llvm::sys::fs::make_absolute(path);
  return std::string(path.str());
}

nlohmann::ordered_json nvrtc_json(const compiler::NvrtcInfo& info) {
  auto text_or_null = [](bool present, const std::string& s) {
    return present ? nlohmann::ordered_json(s) : nlohmann::ordered_json(nullptr);
  };
  return {{"available", info.available},
          {"version", text_or_null(info.available, std::to_string(info.major) + "." + std::to_string(info.minor))},
          {"path", text_or_null(info.available, info.path)},
          {"origin", text_or_null(info.available, info.origin)},
          {"reason", text_or_null(!info.available, info.reason)}};
}

}  // namespace kjit::tool
