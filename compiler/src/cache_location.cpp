// Where the cache lives and how it is configured: the default folder, size parsing, module
// name sanitising, and the configuration from the environment.
#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "kjit/compiler/cache.hpp"
#include "kjit/error.hpp"

namespace kjit::compiler {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : "";
}

std::string home_dir() {
  std::string h = env("HOME");
  if (!h.empty()) return h;
  if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "";
}

}  // namespace

const char* to_string(CacheMode mode) {
  switch (mode) {
    case CacheMode::ReadWrite: return "read-write";
    case CacheMode::ReadOnly: return "read-only";
    case CacheMode::InMemory: return "in-memory";
  }
  return "unknown";
}

std::string default_cache_dir() {
  if (std::string d = env("KJIT_CACHE_DIR"); !d.empty()) return d;
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty()) return x + "/kjit";
  std::string h = home_dir();
  // No home at all (a bare service account): a per-user folder under /tmp keeps working,
  // and the ownership checks keep it private.
  if (h.empty()) return "/tmp/kjit-cache-" + std::to_string(::geteuid());
  return h + "/.cache/kjit";
}

uint64_t parse_size(std::string_view text) {
  auto bad = [&]() -> uint64_t {
    throw Error(ErrorKind::User, "invalid size '" + std::string(text) +
                                     "': use a number of bytes with an optional unit K, M, G or T "
                                     "(powers of 1024), for example 500M or 2G");
  };
  std::string s(text);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(0, 1);
  size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  std::string num = s.substr(0, i), unit = s.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  if (num.empty() || num == "." || num.find('.') != num.rfind('.')) return bad();
  for (char& c : unit) c = char(std::toupper((unsigned char)c));
  if (unit.size() >= 2 && unit.back() == 'B') unit.pop_back();      // "KB" -> "K", "B" stays
  if (unit.size() == 2 && unit.back() == 'I') unit.pop_back();      // "KIB" -> "KI" -> "K"
  double mult = 1;
  if (unit.empty() || unit == "B") mult = 1;
  else if (unit == "K") mult = 1024.0;
  else if (unit == "M") mult = 1024.0 * 1024;
  else if (unit == "G") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T") mult = 1024.0 * 1024 * 1024 * 1024;
  else return bad();
  double v = std::strtod(num.c_str(), nullptr) * mult;
  if (!std::isfinite(v) || v >= 1.8e19) return bad();
  return uint64_t(std::llround(v));
}

std::string sanitize_module_name(std::string_view name) {
  std::string out;
  bool replaced = false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (ok) {
      out += c;
      replaced = false;
    } else if (!replaced) {  // a run of unsafe characters ("::", "/", NUL) becomes one '_'
      out += '_';
      replaced = true;
    }
  }
  // No hidden names ("..", ".tmp-" are the cache's own) and nothing that reads as an option.
  size_t start = out.find_first_not_of(".-");
  out = start == std::string::npos ? "" : out.substr(start);
  if (out.size() > 48) out.resize(48);
  return out.empty() ? "module" : out;
}

CacheConfig CacheConfig::from_environment() {
  CacheConfig c;
  c.dir = default_cache_dir();
  if (std::string s = env("KJIT_CACHE_MAX_SIZE"); !s.empty()) {
    try {
      c.max_size = parse_size(s);
    } catch (const Error& e) {
      std::fprintf(stderr, "kjit: warning: KJIT_CACHE_MAX_SIZE: %s; using the default (4G)\n", e.what());
    }
  }
  if (env("KJIT_CACHE_LOCKS") == "0") c.lock_files = false;
  return c;
}

}  // namespace kjit::compiler
