// Compiler diagnostics mapped back to the user's lines and to the generated lines.
#include "compile_log.hpp"

#include <set>
#include <sstream>

namespace kjit::compiler {

namespace {

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool all_digits(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

/// Parses `file(line): error: msg` (NVRTC) or `file:line[:col]: [fatal ]error: msg` (GCC,
/// Clang). Returns false for any other line.
bool parse_line(const std::string& l, Diagnostic* d) {
  static const std::string kinds[] = {": error: ", ": fatal error: ", ": catastrophic error: "};
  size_t at = std::string::npos, kind_len = 0;
  for (const std::string& k : kinds) {
    size_t p = l.find(k);
    if (p != std::string::npos && p < at) {
      at = p;
      kind_len = k.size();
    }
  }
  if (at == std::string::npos) return false;
  std::string where = l.substr(0, at);
  d->message = trim(l.substr(at + kind_len));
  if (!where.empty() && where.back() == ')') {  // NVRTC: file(line)
    size_t open = where.rfind('(');
    if (open == std::string::npos || !all_digits(where.substr(open + 1, where.size() - open - 2)))
      return false;
    d->file = where.substr(0, open);
    d->line = std::stoi(where.substr(open + 1));
    return true;
  }
  // GCC/Clang: file:line:col or file:line
  size_t c2 = where.rfind(':');
  if (c2 == std::string::npos) return false;
  std::string last = where.substr(c2 + 1);
  std::string rest = where.substr(0, c2);
  if (!all_digits(last)) return false;
  size_t c1 = rest.rfind(':');
  if (c1 != std::string::npos && all_digits(rest.substr(c1 + 1))) {
    d->file = rest.substr(0, c1);
    d->line = std::stoi(rest.substr(c1 + 1));
  } else {
    d->file = rest;
    d->line = std::stoi(last);
  }
  return !d->file.empty();
}

/// The generated lines of `text`, split on '\n'.
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) lines.push_back(l);
  return lines;
}

/// Parses `#line N "file"` (or `# N "file"`); returns false for other lines.
bool parse_line_directive(const std::string& l, int* line, std::string* file) {
  std::string s = trim(l);
  if (s.rfind("#line ", 0) == 0) s = s.substr(6);
  else if (s.rfind("# ", 0) == 0) s = s.substr(2);
  else return false;
  s = trim(s);
  size_t sp = s.find(' ');
  std::string num = s.substr(0, sp);
  if (!all_digits(num)) return false;
  *line = std::stoi(num);
  if (sp != std::string::npos) {
    std::string f = trim(s.substr(sp + 1));
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') *file = f.substr(1, f.size() - 2);
  }
  return true;
}

/// The names a diagnostic quotes: ‘x’ (GCC), 'x' or "x" (NVRTC, Clang).
std::vector<std::string> quoted_names(const std::string& message) {
  std::vector<std::string> out;
  const std::pair<std::string, std::string> quotes[] = {{"\xe2\x80\x98", "\xe2\x80\x99"}, {"'", "'"}, {"\"", "\""}};
  for (const auto& [open, close] : quotes) {
    for (size_t at = message.find(open); at != std::string::npos; at = message.find(open, at)) {
      size_t end = message.find(close, at + open.size());
      if (end == std::string::npos) break;
      std::string q = message.substr(at + open.size(), end - at - open.size());
      if (!q.empty() && q.size() < 200) out.push_back(q);
      at = end + close.size();
    }
  }
  return out;
}

}  // namespace

std::vector<Diagnostic> parse_diagnostics(const std::string& log) {
  std::vector<Diagnostic> out;
  std::istringstream in(log);
  std::string l;
  while (std::getline(in, l)) {
    Diagnostic d;
    if (parse_line(l, &d)) out.push_back(std::move(d));
  }
  return out;
}

std::vector<int> generated_lines_for(const std::string& text, const std::string& main_file,
                                     const std::string& file, int line) {
  std::vector<std::string> lines = split_lines(text);
  std::vector<int> exact, by_base;
  std::string cur_file = main_file;
  int cur_line = 1;
  const std::string want_base = base_name(file);
  for (size_t i = 0; i < lines.size(); ++i) {
    int n = 0;
    std::string f = cur_file;
    if (parse_line_directive(lines[i], &n, &f)) {
      cur_line = n;
      cur_file = f;
      continue;
    }
    if (cur_line == line) {
      if (cur_file == file) exact.push_back(int(i) + 1);
      else if (base_name(cur_file) == want_base) by_base.push_back(int(i) + 1);
    }
    ++cur_line;
  }
  return exact.empty() ? by_base : exact;
}

std::string format_compile_failure(const CompileFailure& f) {
  std::ostringstream m;
  m << "compiling module '" << f.module_name << "' for " << f.target << " with " << f.compiler
    << " failed";
  std::vector<Diagnostic> diags = parse_diagnostics(f.log);
  std::vector<std::string> lines = split_lines(f.text);
  if (!diags.empty()) m << ":";
  m << "\n";
  bool in_generated = false;
  const size_t kMaxShown = 10;
  // A kernel body is a template instantiated twice on the cpu (dense and strided arrays), so
  // GCC may report one mistake once per instantiation: each diagnostic and each generated
  // line is shown once.
  std::set<std::string> seen;
  std::set<int> quoted;
  std::vector<Diagnostic> unique;
  for (const Diagnostic& d : diags)
    if (seen.insert(d.file + ":" + std::to_string(d.line) + ": " + d.message).second) unique.push_back(d);
  diags = std::move(unique);
  for (size_t i = 0; i < diags.size() && i < kMaxShown; ++i) {
    const Diagnostic& d = diags[i];
    m << "  " << d.file << ":" << d.line << ": error: " << d.message << "\n";
    std::vector<int> gen = generated_lines_for(f.text, f.generated_file, d.file, d.line);
    // Several generated lines can come from one user line. NVRTC echoes the offending one
    // in its log: when it does, show just that one.
    std::vector<int> echoed;
    for (int g : gen)
      if (std::string l = trim(lines[size_t(g) - 1]); !l.empty() && f.log.find(l) != std::string::npos)
        echoed.push_back(g);
    // GCC quotes the offending name instead (‘name’): prefer the lines that contain it.
    if (echoed.empty())
      for (const std::string& q : quoted_names(d.message))
        for (int g : gen)
          if (lines[size_t(g) - 1].find(q) != std::string::npos) echoed.push_back(g);
    if (!echoed.empty()) gen = echoed;
    if (base_name(d.file) == base_name(f.generated_file)) in_generated = true;
    for (size_t g = 0; g < gen.size() && g < 3; ++g)
      if (quoted.insert(gen[g]).second)
        m << "      generated line " << gen[g] << ": " << trim(lines[size_t(gen[g]) - 1]) << "\n";
  }
  if (diags.size() > kMaxShown) m << "  ... and " << diags.size() - kMaxShown << " more errors\n";
  if (in_generated)
    m << "An error lies in code kjit generated around your kernels (not at a line of yours): "
         "this is a kjit bug; please report it with the saved source.\n";
  std::string log = f.log;
  const size_t kMaxLog = 16000;
  if (log.size() > kMaxLog) log = log.substr(0, kMaxLog) + "\n[... log truncated]";
  m << "compiler options: " << f.options << "\n";
  m << "compiler log:\n" << log;
  if (!log.empty() && log.back() != '\n') m << "\n";
  if (!f.saved_path.empty()) m << "generated source saved to: " << f.saved_path;
  else m << "(the generated source could not be saved)";
  return m.str();
}

}  // namespace kjit::compiler
