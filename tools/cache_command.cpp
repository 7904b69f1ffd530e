// `kjit cache stats|verify|prune|clear`: the module cache through its own API (what it holds,
// checking every entry, bounding its size, emptying it).
#include <sys/stat.h>

#include <ctime>
#include <iostream>

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "commands.hpp"
#include "kjit/compiler/cache.hpp"
#include "kjit/error.hpp"

namespace kjit::tool {

namespace {

namespace cl = llvm::cl;

cl::SubCommand sub("cache", "Show, check, bound or empty the module cache");
cl::OptionCategory category("cache options");
cl::list<std::string> action(cl::Positional, cl::desc("stats|verify|prune|clear"), cl::ZeroOrMore,
                             cl::sub(sub), cl::cat(category));
cl::opt<std::string> cache_dir("cache-dir", cl::value_desc("folder"),
                               cl::desc("The cache folder (default: $KJIT_CACHE_DIR, else "
                                        "$XDG_CACHE_HOME/kjit, else ~/.cache/kjit)"),
                               cl::sub(sub), cl::cat(category));
cl::opt<std::string> max_size("max-size", cl::value_desc("size"),
                              cl::desc("prune: the bound, e.g. 500M or 2G (default: "
                                       "$KJIT_CACHE_MAX_SIZE, else 4G)"),
                              cl::sub(sub), cl::cat(category));
cl::opt<bool> yes("yes", cl::desc("clear: do not ask for confirmation"), cl::sub(sub), cl::cat(category));
cl::opt<bool> entries("entries", cl::desc("stats: also list every entry"), cl::sub(sub), cl::cat(category));
cl::opt<bool> json("json", cl::desc("stats, verify, prune: print one JSON object"), cl::sub(sub),
                   cl::cat(category));

const char* const overview =
    "kjit cache: the module cache that `kjit precompile` fills and programs read.\n\n"
    "  kjit cache stats [--entries]     what it holds: entries, bytes, targets, its bound\n"
    "  kjit cache verify                check every entry completely; remove the bad ones\n"
    "  kjit cache prune --max-size 1G   remove least recently used entries until it fits\n"
    "  kjit cache clear --yes           remove every entry\n\n"
    "Exit status: 0, or 1 when verify found bad (edited or corrupt) entries; bad and stale (another\n"
    "kjit version's) entries are both removed. 2 for bad input.\n";

std::string date(int64_t unix_seconds) {
  if (unix_seconds <= 0) return "-";
  std::time_t t = std::time_t(unix_seconds);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

nlohmann::ordered_json entry_json(const compiler::CacheEntryInfo& e) {
  return {{"module", e.module}, {"target", e.target}, {"key", e.key},      {"bytes", e.bytes},
          {"compile_ms", e.compile_ms}, {"created", e.created}, {"last_used", e.last_used}, {"path", e.path}};
}

int stats(compiler::Cache& cache) {
  compiler::CacheUsage u = cache.usage();
  std::vector<compiler::CacheEntryInfo> list = entries || json ? cache.list() : std::vector<compiler::CacheEntryInfo>{};
  if (json) {
    nlohmann::ordered_json j = {{"dir", cache.dir()},           {"mode", compiler::to_string(cache.mode())},
                        {"entries", u.entries},         {"bytes", u.bytes},
                        {"compile_ms", u.compile_ms},   {"by_target", u.by_target},
                        {"temporaries", u.temporaries}, {"max_size", cache.max_size()}};
    j["list"] = nlohmann::ordered_json::array();
    for (const auto& e : list) j["list"].push_back(entry_json(e));
    llvm::outs() << j.dump(2) << "\n";
    return kExitOk;
  }
  std::string targets;
  for (const auto& [t, n] : u.by_target) targets += (targets.empty() ? "" : ", ") + t + " " + std::to_string(n);
  auto& out = llvm::outs();
  out << "cache folder  " << cache.dir() << " (" << compiler::to_string(cache.mode())
      << (cache.mode_reason().empty() ? "" : ": " + cache.mode_reason()) << ")\n"
      << "entries       " << u.entries << ", " << format_bytes(u.bytes) << ", standing for "
      << format_ms(u.compile_ms) << " of compiling\n"
      << "by target     " << (targets.empty() ? "-" : targets) << "\n"
      << "size bound    " << (cache.max_size() ? format_bytes(cache.max_size()) : "none")
      << " (KJIT_CACHE_MAX_SIZE)\n"
      << "leftovers     " << u.temporaries << " staging, trash or lock files\n";
  if (entries && !list.empty()) {
    Table t({"module", "target", "size", "compile ms", "last used", "key"}, {false, false, true, true});
    for (const auto& e : list) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.1f", e.compile_ms);
      t.add({e.module.empty() ? "?" : e.module, e.target.empty() ? "?" : e.target, format_bytes(e.bytes), ms,
             date(e.last_used), e.key.substr(0, 16)});
    }
    out << "\n";
    t.print(out);
  }
  return kExitOk;
}

int verify(compiler::Cache& cache) {
  compiler::CacheVerifyReport r = cache.verify(/*remove_bad=*/true);
  size_t stale = 0;
  for (const auto& p : r.problems) stale += p.stale;
  size_t bad = r.problems.size() - stale;
  if (json) {
    nlohmann::ordered_json problems = nlohmann::ordered_json::array();
    for (const auto& p : r.problems)
      problems.push_back({{"path", p.path}, {"reason", p.reason}, {"kind", p.stale ? "stale" : "bad"},
                          {"removed", p.removed}});
    llvm::outs() << nlohmann::ordered_json{{"checked", r.checked}, {"valid", r.valid}, {"stale", stale},
                                           {"bad", bad}, {"problems", problems}}
                        .dump(2)
                 << "\n";
  } else {
    llvm::outs() << "checked " << r.checked << (r.checked == 1 ? " entry" : " entries") << " in " << cache.dir()
                 << ": " << r.valid << " valid, " << stale << " stale (another kjit version), " << bad
                 << " bad (edited or corrupt)\n";
    for (const auto& p : r.problems)
      llvm::outs() << "  " << (p.removed ? "removed " : "kept (cannot remove) ")
                   << (p.stale ? "stale " : "bad ") << p.path << ": " << p.reason << "\n";
  }
  // Stale entries are an upgrade's leftovers, not damage: removing them is all there is to do.
  return bad == 0 ? kExitOk : kExitFailed;
}

/// The --max-size bound; 0 when not given (then the cache's own bound applies).
uint64_t requested_bound() {
  if (max_size.empty()) return 0;
  try {
    uint64_t bound = compiler::parse_size(max_size.getValue());
    if (bound == 0) throw UsageError("--max-size 0 would remove every entry; use 'kjit cache clear' for that");
    return bound;
  } catch (const Error& e) {
    throw UsageError(std::string("--max-size: ") + e.what());
  }
}

int prune(compiler::Cache& cache) {
  uint64_t bound = max_size.empty() ? cache.max_size() : requested_bound();
  if (bound == 0)  // pruning to zero bytes would remove everything
    throw UsageError("the cache has no size bound (KJIT_CACHE_MAX_SIZE=0): give one, e.g. --max-size 2G");
  compiler::CachePruneReport r = cache.prune(bound);
  if (json) {
    llvm::outs() << nlohmann::ordered_json{{"max_size", bound},         {"removed", r.removed},
                                   {"bytes_removed", r.bytes_removed}, {"entries_left", r.entries_left},
                                   {"bytes_left", r.bytes_left}}
                        .dump(2)
                 << "\n";
    return kExitOk;
  }
  llvm::outs() << "pruned " << cache.dir() << " to " << (bound ? format_bytes(bound) : "no bound") << ": removed "
               << r.removed << (r.removed == 1 ? " entry" : " entries") << " (" << format_bytes(r.bytes_removed)
               << "), " << r.entries_left << " left (" << format_bytes(r.bytes_left) << ")\n";
  return kExitOk;
}

int clear(compiler::Cache& cache) {
  compiler::CacheUsage u = cache.usage();
  if (!yes) {
    if (!stdin_is_terminal())
      throw UsageError("kjit cache clear removes every entry of " + cache.dir() + " (" + std::to_string(u.entries) +
                       " entries, " + format_bytes(u.bytes) + "); add --yes to confirm");
    llvm::errs() << "Remove every entry of " << cache.dir() << " (" << u.entries << " entries, "
                 << format_bytes(u.bytes) << ")? [y/N] ";
    llvm::errs().flush();
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      llvm::outs() << "nothing removed\n";
      return kExitOk;
    }
  }
  size_t removed = cache.clear();
  llvm::outs() << "removed " << removed << (removed == 1 ? " entry" : " entries") << " (" << format_bytes(u.bytes)
               << ") from " << cache.dir() << "\n";
  return kExitOk;
}

int run() {
  if (action.size() != 1)
    throw UsageError(action.empty() ? "give an action: kjit cache stats|verify|prune|clear"
                                    : "give one action, not " + std::to_string(action.size()) +
                                          ": kjit cache stats|verify|prune|clear");
  const std::string& what = action[0];
  if (what != "stats" && what != "verify" && what != "prune" && what != "clear")
    throw UsageError("unknown cache action '" + what + "'." +
                     did_you_mean(what, {"stats", "verify", "prune", "clear"}) + " Use stats, verify, prune or clear");
  if (!max_size.empty() && what != "prune") throw UsageError("--max-size is an option of 'kjit cache prune'");
  if (yes && what != "clear") throw UsageError("--yes is an option of 'kjit cache clear'");
  if (entries && what != "stats") throw UsageError("--entries is an option of 'kjit cache stats'");
  if (json && what == "clear") throw UsageError("'kjit cache clear' has no --json output");
  if (what == "prune") requested_bound();  // a bad size is an error even where no cache is

  compiler::CacheConfig config = cache_config(cache_dir);
  std::string folder = cache_folder(config);
  struct stat st;
  if (::stat(folder.c_str(), &st) != 0) {  // opening a Cache would create the folder
    if (json)
      llvm::outs() << nlohmann::ordered_json{{"dir", folder}, {"exists", false}}.dump(2) << "\n";
    else
      llvm::outs() << "no cache at " << folder << " (nothing has been cached there yet)\n";
    return kExitOk;
  }
  compiler::Cache cache(config);
  if (cache.mode() == compiler::CacheMode::InMemory)
    throw std::runtime_error("cannot use the cache at " + folder + ": " + cache.mode_reason());
  if (what == "stats") return stats(cache);
  if (what == "verify") return verify(cache);
  if (what == "prune") return prune(cache);
  return clear(cache);
}

}  // namespace

const Command& cache_command() {
  static const Command command{&sub, &category, overview, run};
  return command;
}

}  // namespace kjit::tool
