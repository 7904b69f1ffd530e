// Reads PTX text and cubin ELF images far enough to know each kernel's parameter layout.
#include "fake_image.hpp"

#include <elf.h>

#include <cstring>
#include <regex>
#include <sstream>

namespace kjit::fake_cuda {

namespace {

size_t ptx_type_size(const std::string& t) {
  if (t.size() < 3) return 0;
  std::string bits = t.substr(2);  // ".b32" -> "32"
  if (t == ".pred") return 1;
  try {
    return size_t(std::stoi(bits)) / 8;
  } catch (...) {
    return 0;
  }
}

/// One `.param` declaration: ".param .align 8 .b8 name[72]" or ".param .u64 .ptr .align 1 name".
bool parse_ptx_param(const std::string& decl, size_t& size, size_t& align) {
  std::istringstream in(decl);
  std::string tok;
  size_t elem = 0, count = 1;
  align = 0;
  while (in >> tok) {
    if (tok == ".param" || tok == ".ptr" || tok == ".global" || tok == ".const" ||
        tok == ".shared" || tok == ".local")
      continue;
    if (tok == ".align") {
      in >> align;
      continue;
    }
    if (tok[0] == '.') {
      elem = ptx_type_size(tok);
      continue;
    }
    auto lb = tok.find('[');
    if (lb != std::string::npos) count = size_t(std::stoul(tok.substr(lb + 1)));
  }
  if (elem == 0) return false;
  size = elem * count;
  if (align == 0) align = elem;
  return true;
}

bool parse_ptx(const std::string& text, ImageInfo& info, std::string& error) {
  std::smatch m;
  static const std::regex target(R"(\.target\s+sm_(\d+))");
  if (std::regex_search(text, m, target)) info.arch = std::stoi(m[1]);
  // Entries: ".entry name(" params ")" [directives] "{".
  static const std::regex entry(R"(\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\)([^{]*)\{)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator();
       ++it) {
    FunctionInfo fn;
    std::string params = (*it)[2];
    size_t offset = 0, start = 0;
    while (start < params.size()) {
      size_t comma = params.find(',', start);
      std::string decl = params.substr(start, comma == std::string::npos ? std::string::npos
                                                                        : comma - start);
      start = comma == std::string::npos ? params.size() : comma + 1;
      if (decl.find(".param") == std::string::npos) continue;
      size_t size = 0, align = 1;
      if (!parse_ptx_param(decl, size, align)) {
        error = "cannot read PTX parameter '" + decl + "'";
        return false;
      }
      offset = (offset + align - 1) / align * align;
      fn.params.push_back({offset, size});
      offset += size;
    }
    std::string directives = (*it)[3];
    static const std::regex maxntid(R"(\.(maxntid|reqntid)\s+(\d+)(\s*,\s*(\d+))?(\s*,\s*(\d+))?)");
    std::smatch d;
    if (std::regex_search(directives, d, maxntid)) {
      int x = std::stoi(d[2]), y = d[4].matched ? std::stoi(d[4]) : 1,
          z = d[6].matched ? std::stoi(d[6]) : 1;
      fn.max_threads = x * y * z;
    }
    info.functions[(*it)[1]] = fn;
  }
  // Module-scope globals: lines that start with ".global" or ".visible .global".
  static const std::regex global(
      R"(^(\.visible\s+|\.extern\s+)?\.global\s+(\.align\s+\d+\s+)?(\.\w+)\s+([A-Za-z_$][\w$]*)(\[(\d+)\])?)",
      std::regex::multiline);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), global); it != std::sregex_iterator();
       ++it) {
    size_t elem = ptx_type_size((*it)[3]);
    size_t count = (*it)[6].matched ? size_t(std::stoul((*it)[6])) : 1;
    info.globals[(*it)[4]] = elem * count;
  }
  if (info.functions.empty() && info.globals.empty()) {
    error = "no .entry and no .global in the PTX";
    return false;
  }
  return true;
}

/// The attributes of a cubin's .nv.info.<kernel> section: parameter layout and thread limit.
void parse_nv_info(const unsigned char* p, size_t size, FunctionInfo& fn) {
  constexpr int kFormatSized = 0x04, kParamInfo = 0x17, kMaxThreads = 0x05;
  std::map<int, ParamInfo> by_ordinal;
  size_t pos = 0;
  while (pos + 4 <= size) {
    int format = p[pos], attr = p[pos + 1];
    uint16_t len = 0;
    std::memcpy(&len, p + pos + 2, 2);
    const unsigned char* payload = p + pos + 4;
    pos += 4 + (format == kFormatSized ? len : 0);
    if (format != kFormatSized) continue;
    if (attr == kParamInfo && len >= 12) {
      uint16_t ordinal = 0, offset = 0;
      uint32_t packed = 0;
      std::memcpy(&ordinal, payload + 4, 2);
      std::memcpy(&offset, payload + 6, 2);
      std::memcpy(&packed, payload + 8, 4);
      by_ordinal[ordinal] = ParamInfo{offset, (packed >> 18) & 0x3fff};
    } else if (attr == kMaxThreads && len >= 12) {
      uint32_t xyz[3];
      std::memcpy(xyz, payload, 12);
      fn.max_threads = int(xyz[0] * xyz[1] * xyz[2]);
    }
  }
  for (auto& [ordinal, param] : by_ordinal) fn.params.push_back(param);
}

bool parse_cubin(const unsigned char* d, ImageInfo& info, std::string& error) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, d, sizeof(eh));
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
    error = "not a 64-bit cubin";
    return false;
  }
  info.cubin = true;
  info.arch = int((eh.e_flags >> 8) & 0xff);
  auto section = [&](int i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, d + eh.e_shoff + size_t(i) * eh.e_shentsize, sizeof(sh));
    return sh;
  };
  Elf64_Shdr names = section(eh.e_shstrndx);
  auto section_name = [&](const Elf64_Shdr& sh) {
    return std::string(reinterpret_cast<const char*>(d + names.sh_offset + sh.sh_name));
  };
  std::map<std::string, Elf64_Shdr> infos;
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = section(i);
    std::string name = section_name(sh);
    if (name.rfind(".nv.info.", 0) == 0) infos[name.substr(9)] = sh;
    if (sh.sh_type != SHT_SYMTAB) continue;
    Elf64_Shdr strtab = section(int(sh.sh_link));
    for (size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym;
      std::memcpy(&sym, d + sh.sh_offset + k * sizeof(Elf64_Sym), sizeof(sym));
      std::string sname(reinterpret_cast<const char*>(d + strtab.sh_offset + sym.st_name));
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC) info.functions[sname];
      if (ELF64_ST_TYPE(sym.st_info) == STT_OBJECT) info.globals[sname] = sym.st_size;
    }
  }
  for (auto& [name, fn] : info.functions) {
    auto it = infos.find(name);
    if (it != infos.end()) parse_nv_info(d + it->second.sh_offset, it->second.sh_size, fn);
  }
  return true;
}

}  // namespace

bool parse_image(const void* data, ImageInfo& info, std::string& error) {
  const auto* d = static_cast<const unsigned char*>(data);
  if (std::memcmp(d, ELFMAG, SELFMAG) == 0) return parse_cubin(d, info, error);
  return parse_ptx(reinterpret_cast<const char*>(data), info, error);
}

}  // namespace kjit::fake_cuda
