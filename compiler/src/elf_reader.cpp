// A minimal, bounds-checked ELF64 little-endian reader for host shared objects and cubins.
#include "elf_reader.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace kjit::compiler {

namespace {

constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtDynsym = 11;
constexpr uint32_t kShtNobits = 8;
constexpr uint32_t kShtDynamic = 6;
constexpr int64_t kDtNull = 0, kDtNeeded = 1;
constexpr uint16_t kShnUndef = 0;
constexpr unsigned kSttFunc = 2;
constexpr unsigned kStbGlobal = 1, kStbWeak = 2;
// .nv.info attribute formats and the attributes read here (the CUDA ELF "EIATTR" records).
constexpr uint8_t kEifmtNval = 1, kEifmtBval = 2, kEifmtHval = 3, kEifmtSval = 4;
constexpr uint8_t kEiattrFrameSize = 0x11, kEiattrRegcount = 0x2f;

template <class T>
bool read_at(std::string_view b, uint64_t off, T* out) {
  if (off > b.size() || b.size() - off < sizeof(T)) return false;
  std::memcpy(out, b.data() + off, sizeof(T));  // the host is little-endian like the images
  return true;
}

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t offset = 0, size = 0, entsize = 0;
  uint32_t link = 0;
};

/// The sections of an ELF64 LE image, or empty with *error set.
std::vector<Section> read_sections(std::string_view b, std::string* error) {
  auto fail = [&](const char* why) {
    if (error) *error = why;
    return std::vector<Section>{};
  };
  if (!is_elf(b)) return fail("not an ELF file");
  if (b.size() < 64 || b[4] != 2 || b[5] != 1) return fail("not a 64-bit little-endian ELF file");
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!read_at(b, 0x28, &shoff) || !read_at(b, 0x3a, &shentsize) || !read_at(b, 0x3c, &shnum) ||
      !read_at(b, 0x3e, &shstrndx) || shentsize < 64 || shnum == 0 || shstrndx >= shnum)
    return fail("malformed ELF header");
  std::vector<Section> secs(shnum);
  std::vector<uint32_t> name_offsets(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t h = shoff + uint64_t(i) * shentsize;
    Section& s = secs[i];
    if (!read_at(b, h, &name_offsets[i]) || !read_at(b, h + 4, &s.type) ||
        !read_at(b, h + 0x18, &s.offset) || !read_at(b, h + 0x20, &s.size) ||
        !read_at(b, h + 0x28, &s.link) || !read_at(b, h + 0x38, &s.entsize))
      return fail("truncated ELF section table");
    if (s.type != kShtNobits && (s.offset > b.size() || b.size() - s.offset < s.size))
      return fail("ELF section extends past the end of the file");
  }
  const Section& strs = secs[shstrndx];
  for (uint16_t i = 0; i < shnum; ++i) {
    if (name_offsets[i] >= strs.size) return fail("malformed ELF section name");
    const char* p = b.data() + strs.offset + name_offsets[i];
    secs[i].name.assign(p, strnlen(p, strs.size - name_offsets[i]));
  }
  return secs;
}

struct Symbol {
  std::string name;
  unsigned type = 0, bind = 0;
  uint16_t shndx = 0;
};

/// The symbols of the first section of `type`; nullopt when malformed.
std::optional<std::vector<Symbol>> read_symbols(std::string_view b, const std::vector<Section>& secs,
                                                uint32_t type) {
  std::vector<Symbol> out;
  for (const Section& s : secs) {
    if (s.type != type) continue;
    if (s.entsize < 24 || s.link >= secs.size()) return std::nullopt;
    const Section& strs = secs[s.link];
    for (uint64_t off = 0; off + s.entsize <= s.size; off += s.entsize) {
      uint32_t name = 0;
      uint8_t info = 0;
      Symbol sym;
      if (!read_at(b, s.offset + off, &name) || !read_at(b, s.offset + off + 4, &info) ||
          !read_at(b, s.offset + off + 6, &sym.shndx) || name >= std::max<uint64_t>(strs.size, 1))
        return std::nullopt;
      const char* p = b.data() + strs.offset + name;
      sym.name.assign(p, strnlen(p, strs.size - name));
      sym.type = info & 15;
      sym.bind = info >> 4;
      out.push_back(std::move(sym));
    }
    return out;
  }
  return out;
}

}  // namespace

bool is_elf(std::string_view bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), "\x7f" "ELF", 4) == 0;
}

std::optional<std::set<std::string>> elf_defined_functions(std::string_view bytes, bool dynamic,
                                                           std::string* error) {
  std::vector<Section> secs = read_sections(bytes, error);
  if (secs.empty()) return std::nullopt;
  auto syms = read_symbols(bytes, secs, dynamic ? kShtDynsym : kShtSymtab);
  if (!syms) {
    if (error) *error = "malformed ELF symbol table";
    return std::nullopt;
  }
  std::set<std::string> names;
  for (const Symbol& s : *syms)
    if (s.shndx != kShnUndef && s.type == kSttFunc && (s.bind == kStbGlobal || s.bind == kStbWeak))
      names.insert(s.name);
  return names;
}

std::optional<std::vector<std::string>> elf_needed_libraries(std::string_view bytes, std::string* error) {
  std::vector<Section> secs = read_sections(bytes, error);
  if (secs.empty()) return std::nullopt;
  std::vector<std::string> out;
  for (const Section& s : secs) {
    if (s.type != kShtDynamic) continue;
    if (s.link >= secs.size()) {
      if (error) *error = "malformed ELF dynamic section";
      return std::nullopt;
    }
    const Section& strs = secs[s.link];
    for (uint64_t off = 0; off + 16 <= s.size; off += 16) {  // Elf64_Dyn: d_tag, d_val
      int64_t tag = 0;
      uint64_t val = 0;
      if (!read_at(bytes, s.offset + off, &tag) || !read_at(bytes, s.offset + off + 8, &val)) break;
      if (tag == kDtNull) break;
      if (tag != kDtNeeded) continue;
      if (val >= strs.size) {
        if (error) *error = "malformed ELF dynamic string";
        return std::nullopt;
      }
      const char* p = bytes.data() + strs.offset + val;
      out.emplace_back(p, strnlen(p, strs.size - val));
    }
  }
  return out;
}

std::map<std::string, KernelResources> cubin_resources(std::string_view bytes) {
  std::map<std::string, KernelResources> out;
  std::vector<Section> secs = read_sections(bytes, nullptr);
  if (secs.empty()) return out;
  auto syms = read_symbols(bytes, secs, kShtSymtab);
  if (!syms) return out;
  for (const Symbol& s : *syms)
    if (s.type == kSttFunc && s.shndx != kShnUndef && s.bind == kStbGlobal) out[s.name];
  for (const Section& sec : secs) {
    if (sec.name.rfind(".nv.shared.", 0) == 0) {
      auto it = out.find(sec.name.substr(11));
      if (it != out.end()) it->second.shared_bytes = int64_t(sec.size);
    }
    if (sec.name != ".nv.info") continue;
    // Records: u8 format, u8 attribute, then a payload whose size the format fixes
    // (NVAL/BVAL/HVAL: 2 bytes) or states (SVAL: u16 size, then that many bytes).
    for (uint64_t off = 0; off + 4 <= sec.size;) {
      uint8_t fmt = 0, attr = 0;
      uint16_t val = 0;
      read_at(bytes, sec.offset + off, &fmt);
      read_at(bytes, sec.offset + off + 1, &attr);
      read_at(bytes, sec.offset + off + 2, &val);
      if (fmt == kEifmtNval || fmt == kEifmtBval || fmt == kEifmtHval) {
        off += 4;
        continue;
      }
      if (fmt != kEifmtSval || off + 4 + val > sec.size) break;  // unknown: stop, keep what we have
      uint32_t sym = 0, value = 0;
      if (val >= 8 && read_at(bytes, sec.offset + off + 4, &sym) &&
          read_at(bytes, sec.offset + off + 8, &value) && sym < syms->size()) {
        auto it = out.find((*syms)[sym].name);
        if (it != out.end()) {
          if (attr == kEiattrRegcount) it->second.registers = int(value);
          if (attr == kEiattrFrameSize) it->second.stack_bytes = int64_t(value);
        }
      }
      off += 4 + val;
    }
  }
  return out;
}

}  // namespace kjit::compiler
