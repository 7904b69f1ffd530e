// Splits the embedded prelude files into chunks ("//@chunk name requires a b") and assembles
// the text a module needs.
#include "prelude.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>


#include "kjit/error.hpp"

namespace kjit::codegen {

namespace prelude_text_files {
struct EmbeddedFile {
  std::string_view name;
  std::string_view text;
};
extern const EmbeddedFile kFiles[];
extern const std::size_t kFileCount;
extern const std::string_view kHash;
}  // namespace prelude_text_files

namespace {

struct Chunk {
  std::string name;
  std::vector<std::string> requires_;
  std::string text;
  size_t order;
};

struct Library {
  std::map<std::string, Chunk> chunks;
};

const Library& library() {
  static const Library lib = [] {
    Library l;
    size_t order = 0;
    for (size_t f = 0; f < prelude_text_files::kFileCount; ++f) {
      const auto& file = prelude_text_files::kFiles[f];
      std::string text(file.text);
      if (text.find("//@chunk ") == std::string::npos) {
        // A file without markers is one chunk named after its stem (abi.h -> "abi").
        std::string stem(file.name.substr(0, file.name.find('.')));
        if (!text.empty() && text.back() != '\n') text += '\n';
        l.chunks[stem] = Chunk{stem, {}, text, order++};
        continue;
      }
      std::istringstream in(text);
      std::string line;
      Chunk* cur = nullptr;
      while (std::getline(in, line)) {
        if (line.rfind("//@chunk ", 0) == 0) {
          std::istringstream words(line.substr(9));
          std::string name, word;
          words >> name;
          Chunk c{name, {}, "", order++};
          if (words >> word && word == "requires")
            while (words >> word) c.requires_.push_back(word);
          KJIT_CHECK(!l.chunks.count(name), "prelude chunk defined twice: " + name);
          cur = &(l.chunks[name] = c);
          continue;
        }
        if (cur) cur->text += line + "\n";
      }
    }
    for (auto& [name, c] : l.chunks)
      for (const std::string& r : c.requires_)
        KJIT_CHECK(l.chunks.count(r), "prelude chunk " + name + " requires unknown chunk " + r);
    return l;
  }();
  return lib;
}

/// Appends `name` after everything it requires (a topological order), once.
void collect(const Library& lib, const std::string& name, std::set<std::string>& seen,
             std::vector<const Chunk*>& out) {
  if (!seen.insert(name).second) return;
  auto it = lib.chunks.find(name);
  KJIT_CHECK(it != lib.chunks.end(), "unknown prelude chunk " + name);
  for (const std::string& r : it->second.requires_) collect(lib, r, seen, out);
  out.push_back(&it->second);
}

}  // namespace

std::string prelude_text(const PreludeUse& use) {
  const Library& lib = library();
  // Requested chunks in prelude order, each preceded by what it requires.
  std::vector<const Chunk*> requested;
  for (const std::string& c : use.chunks()) {
    auto it = lib.chunks.find(c);
    KJIT_CHECK(it != lib.chunks.end(), "unknown prelude chunk " + c);
    requested.push_back(&it->second);
  }
  std::sort(requested.begin(), requested.end(),
            [](const Chunk* a, const Chunk* b) { return a->order < b->order; });
  std::set<std::string> seen;
  std::vector<const Chunk*> ordered;
  collect(lib, "core", seen, ordered);
  for (const Chunk* c : requested) collect(lib, c->name, seen, ordered);
  std::string out;
  for (const Chunk* c : ordered) out += c->text;
  return out;
}

std::set<std::string> prelude_closure(const PreludeUse& use) {
  const Library& lib = library();
  std::set<std::string> seen;
  std::vector<const Chunk*> ordered;
  collect(lib, "core", seen, ordered);
  for (const std::string& c : use.chunks()) collect(lib, c, seen, ordered);
  return seen;
}

bool prelude_has_chunk(std::string_view name) {
  return library().chunks.count(std::string(name)) != 0;
}

const std::string& prelude_hash() {
  // Computed when the library was configured: a cache hit parses no prelude.
  static const std::string hash(prelude_text_files::kHash);
  return hash;
}

}  // namespace kjit::codegen
